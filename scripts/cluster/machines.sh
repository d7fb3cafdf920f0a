#!/usr/bin/env bash
# Test machines for the ssh transport of scripts/cluster.sh: each "machine" is a Debian system
# booted with systemd as PID 1 (systemd-nspawn -b) inside its own network namespace (made by
# `cluster.sh net up`), running its own sshd on its own address, with keys made for the lab. The
# operator side (cluster.sh --transport ssh) runs in the hub namespace, which routes only to the
# machines: nothing else is reachable from there.
#
# A machine's disk is an overlay on one shared read-only image (its own upper directory) plus its
# own /data, so `wipe` loses everything that machine had, as a lost i7i instance does.
#
# usage: scripts/cluster/machines.sh <command> [options]       (as root)
#   image  [--image DIR]                 build the machine image with debootstrap (once; cached)
#   up     --dir DIR --nodes N [--image DIR] [--bind-ro PATH]...   namespaces, keys, boot every machine
#   boot   --dir DIR --machine I [--image DIR] [--bind-ro PATH]... boot machine I (again)
#   halt   --dir DIR --machine I         power machine I off (its disks stay)
#   crash  --dir DIR --machine I         pull machine I's plug (SIGKILL to its init: nothing shuts down)
#   wipe   --dir DIR --machine I         crash machine I and destroy its disks (the instance is gone)
#   down   --dir DIR                     halt every machine, delete the namespaces (DIR stays)
#   ssh    --dir DIR --machine I CMD...  run CMD on machine I as root (from the hub namespace)
# environment: SHARDCRAWL_NETNS_PREFIX, SHARDCRAWL_NETNS_NET (as for cluster.sh net)
# After `up`, run cluster.sh in the hub with SSH_OPTS="-F DIR/ssh_config":
#   ip netns exec <prefix>-hub env SSH_OPTS="-F DIR/ssh_config" scripts/cluster.sh up --transport ssh ...
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
PREFIX="${SHARDCRAWL_NETNS_PREFIX:-sc}"
NET="${SHARDCRAWL_NETNS_NET:-10.231}"
IMAGE="${SHARDCRAWL_MACHINE_IMAGE:-/var/cache/shardcrawl/machine-image}"
# What a provisioned i7i node has from Debian (deploy/provision-i7i.sh installs the same list), so
# provisioning in the lab needs no network; Node.js >= 20.19 is not in Debian 12 and is bound in
# from this machine read-only (on the fleet: install it from your Node.js source).
IMAGE_PACKAGES="systemd,systemd-sysv,dbus,openssh-server,redis-server,rsync,iproute2,procps,ca-certificates,logrotate"
DIR="" NODES=0 MACHINE="" BINDS=()

die() { echo "machines.sh: $*" >&2; exit 2; }
usage() { sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; }

cmd="${1:-}"
[[ -n "$cmd" && "$cmd" != "--help" && "$cmd" != "-h" ]] || { usage; exit 0; }
shift
REST=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --dir) DIR="${2:?--dir needs a directory}"; shift ;;
    --nodes) NODES="${2:?--nodes needs a number}"; shift ;;
    --machine) MACHINE="${2:?--machine needs an index}"; shift ;;
    --image) IMAGE="${2:?--image needs a directory}"; shift ;;
    --bind-ro) BINDS+=("${2:?--bind-ro needs a path}"); shift ;;
    --) shift; REST=("$@"); break ;;
    *) if [[ "$cmd" == ssh ]]; then REST=("$@"); break; fi; die "unknown argument '$1'" ;;
  esac
  shift
done

hub() { echo "$PREFIX-hub"; }
addr_of() { echo "$NET.$(($1 + 1)).2"; }
mdir() { echo "$DIR/m$1"; }

build_image() {
  if [[ -x "$IMAGE/usr/sbin/sshd" && -x "$IMAGE/lib/systemd/systemd" ]]; then echo "image: $IMAGE (cached)"; return 0; fi
  command -v debootstrap >/dev/null || die "debootstrap is missing (apt-get install debootstrap systemd-container)"
  rm -rf "$IMAGE.part"
  mkdir -p "$(dirname "$IMAGE")"
  debootstrap --variant=minbase --include="$IMAGE_PACKAGES" bookworm "$IMAGE.part" http://deb.debian.org/debian > "$IMAGE.log" 2>&1 \
    || die "debootstrap failed; see $IMAGE.log"
  # A machine of the fleet starts with nothing of ours running: provisioning decides.
  chroot "$IMAGE.part" systemctl disable redis-server.service >/dev/null 2>&1 || true
  chroot "$IMAGE.part" systemctl mask console-getty.service apt-daily.timer apt-daily-upgrade.timer >/dev/null 2>&1 || true
  mv "$IMAGE.part" "$IMAGE"
  echo "image: $IMAGE (built)"
}

keys() {
  mkdir -p "$DIR"
  [[ -f "$DIR/id_ed25519" ]] || ssh-keygen -q -t ed25519 -N '' -C "shardcrawl-lab" -f "$DIR/id_ed25519"
  cat > "$DIR/ssh_config" <<EOF
Host *
  User root
  IdentityFile $DIR/id_ed25519
  IdentitiesOnly yes
  UserKnownHostsFile $DIR/known_hosts
  StrictHostKeyChecking yes
  HostKeyAlgorithms ssh-ed25519
  BatchMode yes
  ConnectTimeout 10
  ServerAliveInterval 5
  ServerAliveCountMax 6
  LogLevel ERROR
EOF
  touch "$DIR/known_hosts"
}

# Boots machine i: its host key and our public key go into its own upper layer, so every machine
# has a host key of its own and the image stays untouched.
boot_machine() {
  local i="$1" m addr
  m="$(mdir "$i")" addr="$(addr_of "$i")"
  [[ -e "/run/netns/$PREFIX-n$i" ]] || die "namespace $PREFIX-n$i does not exist (machines.sh up first)"
  [[ -x "$IMAGE/lib/systemd/systemd" ]] || die "no machine image at $IMAGE (machines.sh image)"
  if [[ -f "$m/nspawn.pid" ]] && kill -0 "$(cat "$m/nspawn.pid")" 2>/dev/null; then echo "m$i: already running"; return 0; fi
  mkdir -p "$m/upper/root/.ssh" "$m/upper/etc/ssh" "$m/data"
  echo "m$i" > "$m/upper/etc/hostname"
  [[ -f "$m/host_key" ]] || ssh-keygen -q -t ed25519 -N '' -C "m$i" -f "$m/host_key"
  install -m 0600 "$m/host_key" "$m/upper/etc/ssh/ssh_host_ed25519_key"
  install -m 0644 "$m/host_key.pub" "$m/upper/etc/ssh/ssh_host_ed25519_key.pub"
  install -m 0600 "$DIR/id_ed25519.pub" "$m/upper/root/.ssh/authorized_keys"
  chmod 0700 "$m/upper/root/.ssh"
  grep -q "^$addr " "$DIR/known_hosts" 2>/dev/null || echo "$addr $(cut -d' ' -f1,2 "$m/host_key.pub")" >> "$DIR/known_hosts"
  local binds=(--bind-ro=/usr/bin/node) b
  for b in "${BINDS[@]}"; do binds+=("--bind-ro=$b"); done
  # --register=no --keep-unit: this host's PID 1 is not systemd (no machined, no bus).
  setsid systemd-nspawn -b -D "$IMAGE" --overlay="$IMAGE:$m/upper:/" --bind="$m/data:/data" "${binds[@]}" \
    --register=no --keep-unit --network-namespace-path="/run/netns/$PREFIX-n$i" \
    --machine="$PREFIX-m$i" --hostname="m$i" > "$m/console.log" 2>&1 < /dev/null &
  echo "$!" > "$m/nspawn.pid"
  local t=0
  until ip netns exec "$(hub)" ssh -F "$DIR/ssh_config" "$addr" true 2>/dev/null; do
    kill -0 "$(cat "$m/nspawn.pid")" 2>/dev/null || die "m$i did not boot; see $m/console.log"
    [[ $t -lt 120 ]] || die "m$i: no sshd answering on $addr after 120 s; see $m/console.log"
    sleep 1; t=$((t + 1))
  done
  echo "m$i: up at $addr (systemd, sshd)"
}

halt_machine() {
  local i="$1" m pid
  m="$(mdir "$i")"
  [[ -f "$m/nspawn.pid" ]] || return 0
  pid="$(cat "$m/nspawn.pid")"
  if kill -0 "$pid" 2>/dev/null; then
    # SIGTERM to nspawn asks the machine's systemd to power off (units stop in order).
    kill -TERM "$pid"
    local t=0
    while kill -0 "$pid" 2>/dev/null && [[ $t -lt 600 ]]; do sleep 0.1; t=$((t + 1)); done
    if kill -0 "$pid" 2>/dev/null; then echo "m$i: still up after 60 s; killing it" >&2; kill -KILL "$pid"; fi
  fi
  rm -f "$m/nspawn.pid"
  echo "m$i: halted"
}

# The power cut: SIGKILL to the machine's init ends every process in its PID namespace at once.
crash_machine() {
  local i="$1" m pid child
  m="$(mdir "$i")"
  [[ -f "$m/nspawn.pid" ]] || return 0
  pid="$(cat "$m/nspawn.pid")"
  for child in $(ps --ppid "$pid" -o pid= 2>/dev/null); do kill -KILL "$child" 2>/dev/null || true; done
  local t=0
  while kill -0 "$pid" 2>/dev/null && [[ $t -lt 300 ]]; do sleep 0.1; t=$((t + 1)); done
  kill -0 "$pid" 2>/dev/null && kill -KILL "$pid"
  rm -f "$m/nspawn.pid"
  echo "m$i: crashed"
}

case "$cmd" in
  image) build_image ;;
  up)
    [[ -n "$DIR" && "$NODES" -ge 1 ]] || die "up: --dir DIR and --nodes N are required"
    build_image >/dev/null
    if [[ ! -e "/run/netns/$(hub)" ]]; then bash "$ROOT/scripts/cluster.sh" net up --nodes "$NODES" >/dev/null; fi
    keys
    for ((i = 0; i < NODES; i++)); do boot_machine "$i" & done
    wait
    for ((i = 0; i < NODES; i++)); do [[ -f "$(mdir "$i")/nspawn.pid" ]] || die "m$i did not start"; done
    echo "$NODES" > "$DIR/nodes" ;;
  boot) [[ -n "$DIR" && -n "$MACHINE" ]] || die "boot: --dir and --machine are required"; boot_machine "$MACHINE" ;;
  halt) [[ -n "$DIR" && -n "$MACHINE" ]] || die "halt: --dir and --machine are required"; halt_machine "$MACHINE" ;;
  crash) [[ -n "$DIR" && -n "$MACHINE" ]] || die "crash: --dir and --machine are required"; crash_machine "$MACHINE" ;;
  wipe)
    [[ -n "$DIR" && -n "$MACHINE" ]] || die "wipe: --dir and --machine are required"
    crash_machine "$MACHINE"
    rm -rf "$(mdir "$MACHINE")/upper" "$(mdir "$MACHINE")/data" "$(mdir "$MACHINE")/host_key" "$(mdir "$MACHINE")/host_key.pub"
    # A new instance under the old address has a new host key.
    sed -i "/^$(addr_of "$MACHINE") /d" "$DIR/known_hosts"
    echo "m$MACHINE: wiped" ;;
  down)
    [[ -n "$DIR" ]] || die "down: --dir DIR is required"
    n="$(cat "$DIR/nodes" 2>/dev/null || echo 0)"
    for ((i = 0; i < n; i++)); do halt_machine "$i" & done
    wait
    bash "$ROOT/scripts/cluster.sh" net down ;;
  ssh)
    [[ -n "$DIR" && -n "$MACHINE" ]] || die "ssh: --dir and --machine are required"
    ip netns exec "$(hub)" ssh -F "$DIR/ssh_config" "$(addr_of "$MACHINE")" "$(printf '%q ' "${REST[@]}")" ;;
  *) die "unknown command '$cmd' (try --help)" ;;
esac
