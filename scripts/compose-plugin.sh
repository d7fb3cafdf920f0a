#!/usr/bin/env bash
# Installs the Docker Compose v2 CLI plugin (`docker compose`) from Debian's archive where no other
# source is reachable. Debian bookworm packages only compose 1.29 (the Python `docker-compose`);
# trixie's `docker-compose` package is compose v2 (2.26), a Go binary needing only glibc >= 2.34,
# so it runs on bookworm. apt fetches it with a private state folder (signed by the Debian archive
# keys, verified as any apt download); nothing is added to the machine's apt sources and no trixie
# package is installed: the plugin binary alone is copied to /usr/local/lib/docker/cli-plugins/.
#   bash scripts/compose-plugin.sh     # does nothing when `docker compose version` already works
set -euo pipefail
if docker compose version >/dev/null 2>&1; then docker compose version; exit 0; fi
[[ $(id -u) == 0 ]] || { echo "compose-plugin.sh: needs root (writes /usr/local/lib/docker/cli-plugins)" >&2; exit 1; }
CACHE=${SHARDCRAWL_DOCKER_CACHE:-/var/cache/shardcrawl-docker}/apt-trixie
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
mkdir -p "$CACHE/state/lists/partial" "$CACHE/cache/archives/partial"
echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $MIRROR trixie main" >"$CACHE/sources.list"
apt_opts=(-o "Dir::Etc::SourceList=$CACHE/sources.list" -o Dir::Etc::SourceParts=/dev/null
  -o "Dir::State=$CACHE/state" -o "Dir::Cache=$CACHE/cache" -o Debug::NoLocking=1 -o APT::Sandbox::User=root)
apt-get "${apt_opts[@]}" update -qq
(cd "$CACHE" && rm -f docker-compose_*.deb && apt-get "${apt_opts[@]}" download -qq docker-compose)
deb=$(ls "$CACHE"/docker-compose_*.deb)
rm -rf "$CACHE/x" && dpkg-deb -x "$deb" "$CACHE/x"
install -D -m 755 "$CACHE/x/usr/libexec/docker/cli-plugins/docker-compose" /usr/local/lib/docker/cli-plugins/docker-compose
docker compose version
