#!/usr/bin/env bash
# Prepares one i7i node (Debian/Ubuntu, run as root; idempotent): stripes the local NVMe instance
# disks into /data (Redis AOF and WARC output), sysctl for many sockets, file-descriptor limits,
# vm.overcommit_memory=1 for Redis forks, Node.js + redis-server, a shardcrawl user, log rotation,
# and the node unit. Usage: provision-i7i.sh --name n01 [--dry-run] [--help]
set -euo pipefail

NAME="" DRY_RUN=0
usage() { sed -n '2,5p' "$0" | sed 's/^# \{0,1\}//'; }
while [[ $# -gt 0 ]]; do
  case "$1" in
    --name) NAME="${2:?--name needs the node name}"; shift ;;
    --dry-run) DRY_RUN=1 ;;
    --help|-h) usage; exit 0 ;;
    *) echo "provision-i7i.sh: unknown argument '$1'" >&2; exit 2 ;;
  esac
  shift
done
[[ -n "$NAME" ]] || { echo "provision-i7i.sh: --name is required" >&2; exit 2; }
run() { if [[ "$DRY_RUN" == 1 ]]; then printf '+ %s\n' "$*"; else "$@"; fi; }
write() { # write FILE CONTENT
  if [[ "$DRY_RUN" == 1 ]]; then printf '+ write %s:\n%s\n' "$1" "$2"; else printf '%s\n' "$2" > "$1"; fi
}
HERE="$(cd "$(dirname "$0")" && pwd)"

# 1. Local NVMe: every instance-store disk (not the EBS root) into one RAID 0, XFS, at /data.
mapfile -t disks < <(lsblk -dpno NAME,MODEL | awk '/Instance Storage/ { print $1 }')
if ! mountpoint -q /data; then
  if [[ ${#disks[@]} -gt 1 ]]; then
    run apt-get install -y mdadm xfsprogs
    run mdadm --create /dev/md0 --level=0 --raid-devices="${#disks[@]}" "${disks[@]}"
    run mkfs.xfs -f /dev/md0
    dev=/dev/md0
  elif [[ ${#disks[@]} -eq 1 ]]; then
    run apt-get install -y xfsprogs
    run mkfs.xfs -f "${disks[0]}"
    dev="${disks[0]}"
  else
    echo "provision-i7i.sh: no instance-store NVMe found; /data stays on the root disk" >&2
    dev=""
  fi
  run mkdir -p /data
  if [[ -n "$dev" ]]; then
    run mount -o noatime,nodiratime "$dev" /data
    # Instance store is wiped on stop: nofail so a replaced disk does not block boot.
    write /etc/fstab.d-shardcrawl "$dev /data xfs noatime,nodiratime,nofail 0 2"
    run bash -c "grep -q ' /data ' /etc/fstab || cat /etc/fstab.d-shardcrawl >> /etc/fstab"
  fi
fi

# 2. Kernel: many sockets, fast port reuse, Redis forks without overcommit failures.
write /etc/sysctl.d/90-shardcrawl.conf "vm.overcommit_memory = 1
net.core.somaxconn = 65535
net.ipv4.ip_local_port_range = 1024 65535
net.ipv4.tcp_tw_reuse = 1
net.ipv4.tcp_fin_timeout = 15
net.core.netdev_max_backlog = 65535
net.ipv4.tcp_max_syn_backlog = 65535
fs.file-max = 4194304
fs.nr_open = 4194304"
run sysctl --system
# Transparent huge pages make Redis fork latency spiky.
run bash -c "echo never > /sys/kernel/mm/transparent_hugepage/enabled"
write /etc/security/limits.d/90-shardcrawl.conf "shardcrawl soft nofile 1048576
shardcrawl hard nofile 1048576"

# 3. Software and user.
run apt-get update
run apt-get install -y nodejs redis-server rsync logrotate
run systemctl disable --now redis-server   # each node starts its own Redis under /data
id shardcrawl >/dev/null 2>&1 || run useradd --system --home /opt/shardcrawl --shell /usr/sbin/nologin shardcrawl
run mkdir -p /data/crawl /data/seeds /var/log/shardcrawl /etc/shardcrawl
run chown -R shardcrawl:shardcrawl /data/crawl /data/seeds /var/log/shardcrawl
# Redis's data folder (redisDir in the cluster file) off /data: on the EBS root volume, or on a
# volume of its own mounted at /redis beforehand. A full /data then never stops Redis's AOF.
run mkdir -p /redis/crawl
run chown -R shardcrawl:shardcrawl /redis/crawl

# 4. Redis memory: the cluster file sets redisMaxMemoryBytes well under RAM (80 GB of 128 GB),
#    leaving room for fork copy-on-write during AOF rewrites and for the fetchers and parsers.

# 5. Logs and the node unit.
run install -m 0644 "$HERE/logrotate.conf" /etc/logrotate.d/shardcrawl
run install -m 0644 "$HERE/systemd/shardcrawl-node.service" /etc/systemd/system/shardcrawl-node.service
write /etc/shardcrawl/node.env "NODE_NAME=$NAME"
run systemctl daemon-reload
run systemctl enable shardcrawl-node.service
echo "provisioned $NAME: copy the cluster file to /etc/shardcrawl/cluster.yaml, then systemctl start shardcrawl-node"
