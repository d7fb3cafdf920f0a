#!/usr/bin/env bash
# The ssh transport's machine side (sourced by scripts/cluster/lib.sh): on a fleet machine a node
# runs only as the systemd unit shardcrawl-node@<name> (deploy/systemd/shardcrawl-node@.service),
# so restarts on failure, limits, journald logs and start at boot are the unit's. The build lives in
# /opt/shardcrawl-releases/<build>, /opt/shardcrawl is a symlink to the one in use.
# shellcheck disable=SC2034  # variables set here are read by the sourcing script

REMOTE_USER="${SHARDCRAWL_REMOTE_USER:-shardcrawl}"
REMOTE_ETC=/etc/shardcrawl
RELEASES=/opt/shardcrawl-releases
BUILD_ID="" HEALTH_TIMEOUT=180

unit_of() { echo "shardcrawl-node@${N_NAME[$1]}.service"; }

# A shell command line on node i's machine (as root).
rsh() {
  local i="$1"; shift
  run ssh "${SSH_ARGS[@]}" "${N_HOST[$i]}" "$*"
}

# Puts the cluster file (and the status token, when the operator has one) where the unit reads them.
ship_cluster_file() {
  local i="$1"
  rsh "$i" "install -d -m 0755 $REMOTE_ETC"
  run scp -q "${SSH_ARGS[@]}" "$CLUSTER" "${N_HOST[$i]}:$REMOTE_ETC/cluster.yaml"
  if [[ -n "${SHARDCRAWL_STATUS_TOKEN:-}" ]]; then
    if [[ "$DRY_RUN" == 1 ]]; then echo "+ (token) > ${N_HOST[$i]}:$REMOTE_ETC/node.env"; else
      # shellcheck disable=SC2029  # the paths are meant to expand here
      printf 'SHARDCRAWL_STATUS_TOKEN=%s\n' "$SHARDCRAWL_STATUS_TOKEN" \
        | ssh "${SSH_ARGS[@]}" "${N_HOST[$i]}" "umask 077 && cat > $REMOTE_ETC/node.env.part && mv $REMOTE_ETC/node.env.part $REMOTE_ETC/node.env"
    fi
  fi
}

ssh_up_node() {
  local i="$1" unit; unit="$(unit_of "$i")"
  ship_cluster_file "$i"
  # enable: the node comes back when the machine boots; reset-failed: a unit that gave up after too
  # many restarts may start again once the operator says so.
  rsh "$i" "systemctl reset-failed $unit 2>/dev/null; systemctl enable --quiet $unit && systemctl start $unit"
  echo "started ${N_NAME[$i]} ($unit on ${N_HOST[$i]}; logs: journalctl -u $unit)"
}

# Waits until every node's unit has stopped by itself (exitWhenDone nodes, one crawl round); a unit
# that failed and waits to be restarted counts as running.
ssh_wait_nodes() {
  [[ "$DRY_RUN" == 1 ]] && return 0
  local i failed=0 state result
  for i in "${!N_NAME[@]}"; do
    while true; do
      state="$(rsh "$i" "systemctl is-active $(unit_of "$i")" || true)"
      [[ "$state" == active || "$state" == activating || "$state" == deactivating || "$state" == reloading ]] || break
      sleep 2
    done
    result="$(rsh "$i" "systemctl show -p Result --value $(unit_of "$i")")"
    [[ "$result" == success ]] || { echo "${N_NAME[$i]}: unit ended with $result (cluster.sh logs)" >&2; failed=$((failed + 1)); }
  done
  [[ "$failed" == 0 ]] || { echo "cluster.sh: $failed node(s) exited with an error" >&2; return 1; }
}

# SIGTERM through the unit: systemctl stop returns once the node has drained (TimeoutStopSec).
ssh_stop_node() {
  local i="$1" how="${2:-stop}"
  rsh "$i" "systemctl $how $(unit_of "$i")"
  echo "${N_NAME[$i]}: stopped"
}

ssh_logs_node() {
  rsh "$1" "journalctl --no-pager -o short-iso -n $LINES -u $(unit_of "$1")"
}

# As the node's user on its machine, from the build in use (rehome and other offline commands).
ssh_as_node_user() {
  local i="$1"; shift
  rsh "$i" "cd /opt/shardcrawl && runuser -u $REMOTE_USER -- $(printf '%q ' "$@")"
}

default_build_id() {
  local id
  id="$(git -C "$ROOT" rev-parse --short=12 HEAD 2>/dev/null || echo nogit)"
  git -C "$ROOT" diff --quiet HEAD -- packages 2>/dev/null || id="$id-dirty"
  echo "$id-$(date -u +%Y%m%dT%H%M%SZ)"
}

# Ships this checkout's build (dist, dependencies, scripts, deploy) to node i as release BUILD_ID;
# (dist reads its Lua scripts from src/) unchanged files are hard links to the release in use, so an upgrade moves only what changed.
ship_build() {
  local i="$1" id="$2"
  # shellcheck disable=SC2016  # expanded on the machine
  rsh "$i" "mkdir -p $RELEASES && if [ -e /opt/shardcrawl ] && [ ! -L /opt/shardcrawl ]; then echo '/opt/shardcrawl is a directory, not a release link: move it away first' >&2; exit 2; fi"
  local link=()
  [[ "$DRY_RUN" == 1 ]] || ! rsh "$i" "test -d /opt/shardcrawl/" || link=(--link-dest=/opt/shardcrawl/)
  run rsync -a --delete "${link[@]}" -e "ssh ${SSH_ARGS[*]}" \
    --include=/package.json --include=/pnpm-workspace.yaml --include='/node_modules/***' \
    --include='/scripts/***' --include='/deploy/***' --include=/packages/ --include='/packages/*/' \
    --include='/packages/*/package.json' --include='/packages/*/dist/***' --include='/packages/*/src/***' --include='/packages/*/node_modules/***' \
    --exclude='*' "$ROOT/" "${N_HOST[$i]}:$RELEASES/$id/"
}

# Points /opt/shardcrawl at release ID (atomically) and keeps the three newest releases.
switch_build() {
  local i="$1" id="$2"
  rsh "$i" "ln -sfn $RELEASES/$id /opt/shardcrawl.new && mv -T /opt/shardcrawl.new /opt/shardcrawl && cd $RELEASES && ls -1t | tail -n +4 | grep -vx '$id' | xargs -r rm -rf"
}

cmd_install() {
  load_plan
  [[ "$TRANSPORT" == ssh ]] || die "install: ssh transport only (local and netns run this checkout)"
  local id="${BUILD_ID:-$(default_build_id)}" i
  # Every machine at once: the copy is bound by ssh and disk, not by this machine's CPU alone.
  local pids=() failed=0 p
  for i in "${!N_NAME[@]}"; do
    { ship_build "$i" "$id" && switch_build "$i" "$id" && echo "${N_NAME[$i]}: build $id installed (running nodes keep theirs until restarted)"; } &
    pids+=("$!")
  done
  for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
  [[ "$failed" == 0 ]] || { echo "install: $failed machine(s) failed" >&2; return 1; }
}

cmd_provision() {
  load_plan
  [[ "$TRANSPORT" == ssh ]] || die "provision: ssh transport only"
  local i failed=0
  for i in "${!N_NAME[@]}"; do
    echo "== ${N_NAME[$i]} (${N_HOST[$i]})"
    run rsync -a -e "ssh ${SSH_ARGS[*]}" "$ROOT/deploy/" "${N_HOST[$i]}:/var/lib/shardcrawl-provision/"
    rsh "$i" "bash /var/lib/shardcrawl-provision/provision-i7i.sh $PROVISION_ARGS" || failed=$((failed + 1))
  done
  [[ "$failed" == 0 ]] || { echo "provision: $failed machine(s) lack something or failed" >&2; return 1; }
}

# Asks node i's /status (through `shardcrawl status --json`, from here) until it answers.
wait_healthy() {
  local i="$1" t=0
  [[ "$DRY_RUN" == 1 ]] && { echo "+ wait for ${N_NAME[$i]} /status"; return 0; }
  while true; do
    if node "$SHARDCRAWL_JS" status --cluster "$CLUSTER" --json --timeout 3000 2>/dev/null \
      | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const j=JSON.parse(s);const rows=j.nodes??j;const r=rows.find(x=>x.node===process.argv[1]);process.exit(r&&r.up?0:1)})' "${N_NAME[$i]}"; then
      return 0
    fi
    [[ $t -lt $HEALTH_TIMEOUT ]] || { echo "${N_NAME[$i]}: not healthy after $HEALTH_TIMEOUT s" >&2; return 1; }
    sleep 1; t=$((t + 1))
  done
}

# One node at a time: ship the build (while the node still crawls), drain it (systemctl stop: the
# node's SIGTERM path finishes or returns what is in flight), switch, start, wait for /status.
cmd_upgrade() {
  load_plan
  [[ "$TRANSPORT" == ssh ]] || die "upgrade: ssh transport only (local and netns nodes run this checkout; restart them with down/up)"
  local id="${BUILD_ID:-$(default_build_id)}" i t0
  for i in "${!N_NAME[@]}"; do
    t0="$(date +%s%N)"
    ship_build "$i" "$id"
    ssh_stop_node "$i" stop
    switch_build "$i" "$id"
    ship_cluster_file "$i"
    rsh "$i" "systemctl start $(unit_of "$i")"
    wait_healthy "$i" || return 1
    echo "${N_NAME[$i]}: upgraded to $id, healthy after $(( ($(date +%s%N) - t0) / 1000000 )) ms"
  done
}

fleet_help() {
  case "$1" in
    install) echo "usage: cluster.sh install --cluster FILE --transport ssh [--build-id ID] [--dry-run]
Ships this checkout's build to $RELEASES/<ID> on every machine and points /opt/shardcrawl at it
(running nodes keep the build they started with until restarted)." ;;
    provision) echo "usage: cluster.sh provision --cluster FILE --transport ssh [--provision-args \"--check --no-nvme --no-sysctl\"] [--dry-run]
Copies deploy/ to every machine and runs deploy/provision-i7i.sh there (idempotent; --check lists
what a machine lacks)." ;;
    upgrade) echo "usage: cluster.sh upgrade --cluster FILE --transport ssh [--build-id ID] [--health-timeout S] [--dry-run]
Rolling upgrade, one node at a time: ship the build, systemctl stop (the node drains: in-flight work
finished or returned), switch /opt/shardcrawl, systemctl start, wait until its /status answers
(SHARDCRAWL_STATUS_TOKEN as for status); stops at the first node that does not come back." ;;
    *) echo "no help for '$1'" ;;
  esac
}
