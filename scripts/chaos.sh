#!/usr/bin/env bash
# Long-form chaos run: many SIGKILLs of fetchers, parsers, the supervisor, Redis and the whole node
# during a crawl of a bigger synthetic web; the same checks as the CI-sized test/chaos.test.ts.
# Usage: scripts/chaos.sh [kills] [seed]     (defaults: 200 kills, seed 1)
set -euo pipefail
cd "$(dirname "$0")/.."
kills="${1:-200}"
seed="${2:-1}"
pnpm build >/dev/null
CHAOS_KILLS="$kills" CHAOS_SEED="$seed" CHAOS_HOSTS="${CHAOS_HOSTS:-150}" CHAOS_PAGE_CAP="${CHAOS_PAGE_CAP:-300}" \
  CHAOS_VERBOSE=1 pnpm exec vitest run test/chaos.test.ts --testTimeout 0 --hookTimeout 0
