#!/usr/bin/env bash
# Makes a fresh machine ready: pnpm, redis-server, dependencies from the lockfile, a build.
# Idempotent and quiet when everything is already there. Used by scripts/test.sh, scripts/demo.sh and .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."

PNPM_VERSION="12.4.2"

need_node() {
  local v
  v="$(node -p 'process.versions.node' 2>/dev/null || echo 0)"
  node -e 'const [a,b]=process.argv[1].split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' "$v" \
    || { echo "bootstrap: Node.js >= 20.19 is required (found $v)" >&2; exit 1; }
}

need_pnpm() {
  if ! command -v pnpm >/dev/null 2>&1 || [ "$(pnpm -v 2>/dev/null)" != "$PNPM_VERSION" ]; then
    echo "bootstrap: installing pnpm@$PNPM_VERSION"
    npm install -g "pnpm@$PNPM_VERSION" >/dev/null 2>&1 || npm install -g "pnpm@$PNPM_VERSION"
  fi
}

apt_install() {
  # Installs Debian packages that are missing; apt-get update once per run.
  if [ "$(id -u)" != "0" ]; then
    echo "bootstrap: need root to apt-get install $*; install them yourself" >&2; exit 1
  fi
  if [ -z "${_APT_UPDATED:-}" ]; then apt-get update -qq >/dev/null; _APT_UPDATED=1; fi
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >/dev/null
}

need_redis() {
  if ! command -v redis-server >/dev/null 2>&1; then
    echo "bootstrap: installing redis-server from Debian's packages"
    apt_install redis-server
  fi
}

need_node
need_pnpm
need_redis
if [ "${BOOTSTRAP_WITH_SHELLCHECK:-}" = "1" ] && ! command -v shellcheck >/dev/null 2>&1; then
  echo "bootstrap: installing shellcheck from Debian's packages"
  apt_install shellcheck
fi
# The observability tests (test/observe.test.ts) validate /metrics and the Prometheus config with
# promtool and drive the status page in headless Chromium (playwright-core, no browser download).
if [ "${BOOTSTRAP_WITH_OBSERVE_TOOLS:-}" = "1" ]; then
  # command:package. Optional: when they cannot be installed the tests that need them skip and say why.
  for pair in promtool:prometheus chromium:chromium; do
    if ! command -v "${pair%%:*}" >/dev/null 2>&1; then
      echo "bootstrap: installing ${pair#*:} from Debian's packages"
      (apt_install --no-install-recommends "${pair#*:}") \
        || echo "bootstrap: WARNING: could not install ${pair#*:}; tests needing ${pair%%:*} will be skipped" >&2
    fi
  done
fi
# The ssh-transport test (test/cluster-ssh.ts) boots Debian machines with systemd as PID 1
# (systemd-nspawn) running sshd; their image is built once with debootstrap and cached.
if [ "${BOOTSTRAP_WITH_FLEET:-}" = "1" ]; then
  for pair in systemd-nspawn:systemd-container debootstrap:debootstrap ssh:openssh-client rsync:rsync ip:iproute2; do
    if ! command -v "${pair%%:*}" >/dev/null 2>&1; then
      echo "bootstrap: installing ${pair#*:} from Debian's packages"
      (apt_install --no-install-recommends "${pair#*:}") \
        || echo "bootstrap: WARNING: could not install ${pair#*:}; the ssh cluster test will be skipped" >&2
    fi
  done
  if command -v debootstrap >/dev/null 2>&1 && [ "$(id -u)" = "0" ]; then
    bash scripts/cluster/machines.sh image \
      || echo "bootstrap: WARNING: no machine image; the ssh cluster test will be skipped" >&2
  fi
fi
pnpm install --frozen-lockfile --reporter=silent
pnpm build
