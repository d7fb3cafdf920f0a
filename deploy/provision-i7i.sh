#!/usr/bin/env bash
# Prepares one i7i node (Debian 12, run as root; idempotent: a second run changes nothing and says
# so): stripes the local NVMe instance disks into /data (Redis AOF and WARC output), sysctl for many
# sockets, file-descriptor limits, vm.overcommit_memory=1 for Redis forks, Debian's redis-server
# and tools, a local caching DNS resolver (unbound on 127.0.0.1), a shardcrawl user, log rotation,
# and the node unit (shardcrawl-node@.service).
# Node.js >= 20.19 must be at /usr/bin/node (not in Debian 12: install it from your Node.js source).
# usage: provision-i7i.sh [--check] [--no-nvme] [--no-sysctl] [--no-unbound] [--help]
#   --check      change nothing; list what this machine lacks (exit 1 if anything, 0 if nothing)
#   --dry-run    the same as --check
#   --no-nvme    leave the disks alone (/data is whatever is mounted there, or the root disk)
#   --no-sysctl  leave kernel settings alone (containers: /proc/sys is read-only)
#   --no-unbound no local resolver (machines without Debian's mirror; the nodes then need no dnsServers)
# Every step is a function below; a step only acts when the machine differs from what it wants.
set -euo pipefail

CHECK=0 NVME=1 SYSCTL=1 UNBOUND=1
usage() { sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --check|--dry-run) CHECK=1 ;;
    --no-nvme) NVME=0 ;;
    --no-sysctl) SYSCTL=0 ;;
    --no-unbound) UNBOUND=0 ;;
    --name) shift ;; # accepted for old callers: the node's name is now the unit instance (shardcrawl-node@<name>)
    --help|-h) usage; exit 0 ;;
    *) echo "provision-i7i.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
HERE="$(cd "$(dirname "$0")" && pwd)"
CHANGES=() UNFIXED=0

# Records that the machine differs: in --check mode only reported, otherwise the command runs.
change() { # change "what" command...
  local what="$1"; shift
  CHANGES+=("$what")
  if [[ "$CHECK" == 1 ]]; then echo "lacks: $what"; else echo "change: $what"; "$@"; fi
}

# FILE gets exactly CONTENT (and MODE); nothing happens when it already has it.
ensure_file() { # ensure_file FILE MODE CONTENT
  local file="$1" mode="$2" content="$3"
  if [[ -f "$file" && "$(cat "$file")" == "$content" && "$(stat -c %a "$file")" == "$mode" ]]; then return 0; fi
  change "$file" install_content "$file" "$mode" "$content"
}
install_content() { mkdir -p "$(dirname "$1")"; printf '%s\n' "$3" > "$1.part"; chmod "$2" "$1.part"; mv "$1.part" "$1"; }
ensure_copy() { # ensure_copy SRC DEST (mode 0644)
  ensure_file "$2" 644 "$(cat "$1")"
}

step_nvme() {
  # Local NVMe: every instance-store disk (not the EBS root) into one RAID 0, XFS, at /data.
  mountpoint -q /data && return 0
  local disks dev=""
  mapfile -t disks < <(lsblk -dpno NAME,MODEL 2>/dev/null | awk '/Instance Storage/ { print $1 }')
  if [[ ${#disks[@]} -eq 0 ]]; then
    echo "provision-i7i.sh: no instance-store NVMe found; /data stays on the root disk" >&2
    return 0
  fi
  ensure_packages mdadm xfsprogs
  if [[ ${#disks[@]} -gt 1 ]]; then
    change "RAID 0 of ${disks[*]} at /dev/md0" bash -c "mdadm --create /dev/md0 --level=0 --raid-devices=${#disks[@]} ${disks[*]} && mkfs.xfs -f /dev/md0"
    dev=/dev/md0
  else
    change "XFS on ${disks[0]}" mkfs.xfs -f "${disks[0]}"
    dev="${disks[0]}"
  fi
  # Instance store is wiped on stop: nofail so a replaced disk does not block boot.
  grep -q ' /data ' /etc/fstab || change "/etc/fstab entry for /data" bash -c "echo '$dev /data xfs noatime,nodiratime,nofail 0 2' >> /etc/fstab"
  change "mount /data" bash -c "mkdir -p /data && mount /data"
}

step_sysctl() {
  # Many sockets, fast port reuse, Redis forks without overcommit failures.
  local conf="vm.overcommit_memory = 1
net.core.somaxconn = 65535
net.ipv4.ip_local_port_range = 1024 65535
net.ipv4.tcp_tw_reuse = 1
net.ipv4.tcp_fin_timeout = 15
net.core.netdev_max_backlog = 65535
net.ipv4.tcp_max_syn_backlog = 65535
fs.file-max = 4194304
fs.nr_open = 4194304"
  ensure_file /etc/sysctl.d/90-shardcrawl.conf 644 "$conf"
  [[ "$(sysctl -n vm.overcommit_memory)" == 1 ]] || change "kernel settings applied" sysctl -q --system
  # Transparent huge pages make Redis fork latency spiky.
  local thp=/sys/kernel/mm/transparent_hugepage/enabled
  if [[ -w "$thp" ]] && ! grep -q '\[never\]' "$thp"; then change "transparent huge pages off" bash -c "echo never > $thp"; fi
}

step_limits() {
  ensure_file /etc/security/limits.d/90-shardcrawl.conf 644 "shardcrawl soft nofile 1048576
shardcrawl hard nofile 1048576"
}

ensure_packages() {
  local missing=() p
  for p in "$@"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
  done
  [[ ${#missing[@]} -eq 0 ]] && return 0
  change "packages ${missing[*]}" bash -c "apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq ${missing[*]}"
}

step_packages() {
  ensure_packages redis-server rsync logrotate
  # Each node starts its own Redis under /data: the distribution's server stays off.
  if systemctl is-enabled --quiet redis-server.service 2>/dev/null; then change "redis-server.service disabled" systemctl disable --now --quiet redis-server.service; fi
  local v
  v="$(/usr/bin/node -p process.versions.node 2>/dev/null || echo none)"
  if ! /usr/bin/node -e 'const [a,b]=process.versions.node.split(".").map(Number); process.exit(a>20||(a===20&&b>=19)?0:1)' 2>/dev/null; then
    CHANGES+=("Node.js >= 20.19 at /usr/bin/node (found: $v)") UNFIXED=1
    echo "lacks: Node.js >= 20.19 at /usr/bin/node (found: $v); install it from your Node.js source" >&2
  fi
}

step_unbound() {
  # A local caching resolver (deploy/unbound/shardcrawl.conf): the nodes ask it (dnsServers
  # ["127.0.0.1"] in the cluster file), so each name goes upstream once per TTL for the whole box.
  ensure_packages unbound
  local before=${#CHANGES[@]}
  ensure_copy "$HERE/unbound/shardcrawl.conf" /etc/unbound/unbound.conf.d/shardcrawl.conf
  if [[ ${#CHANGES[@]} -gt $before && "$CHECK" == 0 ]]; then
    unbound-checkconf >/dev/null || { echo "provision-i7i.sh: unbound rejects its configuration (see unbound-checkconf)" >&2; exit 1; }
    systemctl restart unbound.service
  fi
  if ! systemctl is-enabled --quiet unbound.service 2>/dev/null; then change "unbound.service enabled" systemctl enable --now --quiet unbound.service; fi
  if ! systemctl is-active --quiet unbound.service 2>/dev/null; then change "unbound.service running" systemctl start unbound.service; fi
}

step_user() {
  id shardcrawl >/dev/null 2>&1 || change "user shardcrawl" useradd --system --home-dir /opt/shardcrawl --no-create-home --shell /usr/sbin/nologin shardcrawl
  local d
  # /redis/crawl: Redis's data folder (redisDir in the cluster file) off /data, on the root volume or
  # a volume of its own mounted at /redis beforehand, so a full /data never stops Redis's AOF.
  for d in /data/crawl /data/seeds /redis/crawl; do
    if [[ ! -d "$d" ]] || [[ "$(stat -c %U "$d" 2>/dev/null)" != shardcrawl ]]; then change "$d owned by shardcrawl" bash -c "mkdir -p $d && chown shardcrawl:shardcrawl $d"; fi
  done
  for d in /etc/shardcrawl /opt/shardcrawl-releases; do
    [[ -d "$d" ]] || change "$d" mkdir -p "$d"
  done
}

step_logs() {
  ensure_copy "$HERE/logrotate.conf" /etc/logrotate.d/shardcrawl
}

step_unit() {
  local before=${#CHANGES[@]}
  ensure_copy "$HERE/systemd/shardcrawl-node@.service" /etc/systemd/system/shardcrawl-node@.service
  # The unit of the single-node layout this template replaces.
  [[ -e /etc/systemd/system/shardcrawl-node.service ]] && change "old shardcrawl-node.service removed" rm -f /etc/systemd/system/shardcrawl-node.service
  if [[ ${#CHANGES[@]} -gt $before && "$CHECK" == 0 ]]; then systemctl daemon-reload; fi
}

[[ "$CHECK" == 1 || "$(id -u)" == 0 ]] || { echo "provision-i7i.sh: run as root (or --check)" >&2; exit 2; }
if [[ "$NVME" == 1 ]]; then step_nvme; fi
if [[ "$SYSCTL" == 1 ]]; then step_sysctl; fi
step_limits
step_packages
if [[ "$UNBOUND" == 1 ]]; then step_unbound; fi
step_user
step_logs
step_unit

if [[ ${#CHANGES[@]} -eq 0 ]]; then
  echo "provision: no change (this machine has everything)"
elif [[ "$CHECK" == 1 || "$UNFIXED" == 1 ]]; then
  echo "provision: this machine lacks ${#CHANGES[@]} thing(s)"
  exit 1
else
  echo "provision: ${#CHANGES[@]} change(s)"
fi
