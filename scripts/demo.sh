#!/usr/bin/env bash
# The main job (README, "Two commands"): a demo crawl of the synthetic web with live progress and a final report.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec node scripts/demo.mjs "$@"
