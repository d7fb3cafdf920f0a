#!/usr/bin/env bash
# docker-compose.yml end to end (scripts/compose-e2e.mjs): base images, build, up, crawl with exchange,
# restart, down + up, then coverage and politeness verified from simweb's request log.
#   bash scripts/compose-e2e.sh [--hosts N] [--page-cap N] [--keep]
#   bash scripts/compose-e2e.sh --if-docker ...   # exit 0 with a note when Docker or compose v2 is missing
# Base images come from scripts/docker-base.sh (pulled, or built locally where registries are out of
# reach; SHARDCRAWL_DOCKER_PULL=0 never asks a registry). About 11 minutes on 2 quiet cores.
set -euo pipefail
cd "$(dirname "$0")/.."
if_docker=0
if [[ ${1:-} == --if-docker ]]; then if_docker=1; shift; fi
missing() {
  if [[ $if_docker == 1 ]]; then echo "compose-e2e: skipped: $1"; exit 0; fi
  echo "compose-e2e: $1" >&2; exit 1
}
command -v docker >/dev/null || missing "no docker command"
docker info >/dev/null 2>&1 || missing "the Docker daemon does not answer"
docker compose version >/dev/null 2>&1 || missing "no compose v2 plugin (\`docker compose\`); scripts/compose-plugin.sh installs Debian's"
bash scripts/docker-base.sh
exec node scripts/compose-e2e.mjs "$@"
