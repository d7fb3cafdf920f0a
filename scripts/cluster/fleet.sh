#!/usr/bin/env bash
# The ssh transport's machine side (sourced by scripts/cluster/lib.sh): on a fleet machine a node
# runs only as the systemd unit shardcrawl-node@<name> (deploy/systemd/shardcrawl-node@.service),
# so restarts on failure, limits, journald logs and start at boot are the unit's. The build lives in
# /opt/shardcrawl-releases/<build>, /opt/shardcrawl is a symlink to the one in use.
# shellcheck disable=SC2034  # variables set here are read by the sourcing script

REMOTE_USER="${SHARDCRAWL_REMOTE_USER:-shardcrawl}"
REMOTE_ETC=/etc/shardcrawl
RELEASES=/opt/shardcrawl-releases
BUILD_ID="" HEALTH_TIMEOUT=180 NODE=""

# A command line making directories on a machine as the node's user: a directory the transport
# made as root would keep the node from writing there.
mkdir_as_node() {
  printf 'runuser -u %q -- mkdir -p' "$REMOTE_USER"
  printf ' %q' "$@"
}

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

# The release a machine runs, staged once on the operator's side as <state>/builds/<ID>: the node
# package with its production dependencies only (pnpm deploy --prod: no compiler, test runner or
# simweb on a fleet machine), plus scripts/ and deploy/. The layout matches a checkout
# (packages/shardcrawl/...), so the unit's ExecStart and the offline commands find the same paths.
# src/ goes along: dist reads its Lua scripts and UI assets from there.
stage_build() {
  local id="$1" to
  to="${STATE:?}/builds/$1"
  [[ -d "$to" ]] && return 0
  if [[ "$DRY_RUN" == 1 ]]; then
    echo "+ pnpm --filter @shardcrawl/shardcrawl deploy --prod --offline $to/packages/shardcrawl"
    return 0
  fi
  [[ -f "$SHARDCRAWL_JS" ]] || die "no build in $ROOT (run pnpm build first)"
  command -v pnpm >/dev/null || die "pnpm is needed to stage a production build (pnpm deploy --prod)"
  rm -rf "$to.part"
  mkdir -p "$to.part/packages"
  # --offline: the store already holds every dependency of this checkout (it was built from it), and
  # the operator may have no registry access (the test's hub namespace has none).
  (cd "$ROOT" && pnpm --silent --filter @shardcrawl/shardcrawl deploy --prod --offline "$to.part/packages/shardcrawl") >&2 \
    || die "pnpm deploy --prod failed (is the pnpm store populated? run pnpm install)"
  rm -rf "$to.part/packages/shardcrawl/test" "$to.part/packages/shardcrawl/tsconfig.json"
  cp -r "$ROOT/scripts" "$ROOT/deploy" "$to.part/"
  mv "$to.part" "$to"
  # Keep the three newest staged builds.
  find "$STATE/builds" -mindepth 1 -maxdepth 1 -type d ! -name '*.part' -printf '%T@ %p\n' | sort -rn | tail -n +4 | cut -d' ' -f2- | xargs -r rm -rf
}

# Ships the staged release BUILD_ID to node i; unchanged files are hard links to the release in
# use, so an upgrade moves only what changed.
ship_build() {
  local i="$1" id="$2"
  stage_build "$id"
  # shellcheck disable=SC2016  # expanded on the machine
  rsh "$i" "mkdir -p $RELEASES && if [ -e /opt/shardcrawl ] && [ ! -L /opt/shardcrawl ]; then echo '/opt/shardcrawl is a directory, not a release link: move it away first' >&2; exit 2; fi"
  local link=()
  [[ "$DRY_RUN" == 1 ]] || ! rsh "$i" "test -d /opt/shardcrawl/" || link=(--link-dest=/opt/shardcrawl/)
  run rsync -a --delete "${link[@]}" -e "ssh ${SSH_ARGS[*]}" "$STATE/builds/$id/" "${N_HOST[$i]}:$RELEASES/$id/"
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
  stage_build "$id"
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
# Each node's line carries when it stopped crawling, when its process was gone, when the new one
# started and when it answered (ms since the epoch), so its downtime can be held against the
# servers' request logs.
now_ms() { echo $(( $(date +%s%N) / 1000000 )); }

cmd_upgrade() {
  load_plan
  [[ "$TRANSPORT" == ssh ]] || die "upgrade: ssh transport only (local and netns nodes run this checkout; restart them with down/up)"
  local id="${BUILD_ID:-$(default_build_id)}" i t0 drain stopped started healthy
  stage_build "$id"
  for i in "${!N_NAME[@]}"; do
    t0="$(now_ms)"
    ship_build "$i" "$id"
    drain="$(now_ms)"
    ssh_stop_node "$i" stop
    stopped="$(now_ms)"
    switch_build "$i" "$id"
    ship_cluster_file "$i"
    rsh "$i" "systemctl start $(unit_of "$i")"
    started="$(now_ms)"
    wait_healthy "$i" || return 1
    healthy="$(now_ms)"
    echo "${N_NAME[$i]}: upgraded to $id, healthy after $((healthy - drain)) ms (drain $drain, stopped $stopped, started $started, healthy $healthy; shipped in $((drain - t0)) ms)"
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
    snapshot) echo "usage: cluster.sh snapshot --cluster FILE --transport ssh --archive DIR [--dry-run]
For every node: its inbox, a Redis BGSAVE (frontier, seen filter, robots cache), its outbox, and its
finished WARC files and page logs, copied to DIR/<node>/ (DIR/<node>/latest is the newest snapshot).
Run it on a schedule (deploy/systemd/shardcrawl-snapshot.timer); the interval is the loss window." ;;
    replace) echo "usage: cluster.sh replace --node NAME --cluster FILE --transport ssh --archive DIR [--provision-args ARGS] [--build-id ID]
A fresh machine at the lost node's address: provisions it, installs the build, restores the last
snapshot of NAME (Redis from its RDB, inbox, outbox) and starts the node. Refuses a machine that
still has the node's Redis." ;;
    *) echo "no help for '$1'" ;;
  esac
}

# ---- Losing an instance: snapshots to an archive, and replace from the last one ----
# The archive (a folder here; object storage on the fleet, e.g. a mounted bucket) holds per node:
#   <archive>/<node>/<stamp>/{dump.rdb,inbox/,outbox/}   the frontier, seen filter and robots cache
#                                                       (Redis RDB), links not yet ingested or sent
#   <archive>/<node>/latest -> <stamp>                    the newest complete snapshot
#   <archive>/<node>/seeds                                the seed list the node reads at start
#   <archive>/<node>/output/{warc/,pages/}                finished WARC and page logs, shipped each time
ARCHIVE=""

# Redis of node i's machine, as root: BGSAVE and wait until it is on disk (LASTSAVE moves on).
# redis-cli comes with Debian's redis-server; the port and password are in <out>/redis/connection.json.
remote_bgsave() {
  local i="$1"
  local out="${N_OUT[$i]}"
  # shellcheck disable=SC2016  # expanded on the machine
  rsh "$i" "set -e; c=$(printf '%q' "$out/redis/connection.json"); [ -f \"\$c\" ] || { echo 'no Redis yet' >&2; exit 3; }
port=\$(node -p \"JSON.parse(require('fs').readFileSync('\$c','utf8')).port\")
export REDISCLI_AUTH=\$(node -p \"JSON.parse(require('fs').readFileSync('\$c','utf8')).password\")
before=\$(redis-cli -p \"\$port\" LASTSAVE)
redis-cli -p \"\$port\" BGSAVE >/dev/null
for t in \$(seq 1 600); do
  [ \"\$(redis-cli -p \"\$port\" LASTSAVE)\" != \"\$before\" ] && break
  sleep 0.5
done
redis-cli -p \"\$port\" INFO persistence | grep -q 'rdb_last_bgsave_status:ok' || { echo 'BGSAVE failed' >&2; exit 1; }
[ \"\$(redis-cli -p \"\$port\" LASTSAVE)\" != \"\$before\" ] || { echo 'BGSAVE did not finish in 300 s' >&2; exit 1; }"
}

# rsync from a running node: a file it ingests, sends or closes while the copy runs vanishes
# under rsync (exit 24), which is the node working, not a failed copy.
live_rsync() {
  local rc=0
  run rsync "$@" || rc=$?
  [[ "$rc" == 0 || "$rc" == 24 ]]
}

snapshot_node() {
  local i="$1"
  local name="${N_NAME[$i]}" out="${N_OUT[$i]}" stamp to
  stamp="$(date -u +%Y%m%dT%H%M%S%NZ)"
  to="$ARCHIVE/$name/$stamp"
  run mkdir -p "$to.part" "$ARCHIVE/$name/output"
  # Inbox first: a file ingested after this copy is in the RDB below, one ingested before it is
  # not in the copy but is in the RDB. Outbox after: links found up to the fork are in it.
  live_rsync -a --include='*.urls.gz' --exclude='*' -e "ssh ${SSH_ARGS[*]}" --rsync-path="$(mkdir_as_node "$out/inbox") && rsync" "${N_HOST[$i]}:$out/inbox/" "$to.part/inbox/"
  remote_bgsave "$i" || return 1
  run rsync -a -e "ssh ${SSH_ARGS[*]}" "${N_HOST[$i]}:$out/redis/dump.rdb" "$to.part/dump.rdb"
  live_rsync -a --include='*/' --include='*.urls.gz' --exclude='*' -e "ssh ${SSH_ARGS[*]}" --rsync-path="$(mkdir_as_node "$out/outbox") && rsync" "${N_HOST[$i]}:$out/outbox/" "$to.part/outbox/"
  # Finished WARC files (not the one being written) and the page logs, added to what was shipped.
  live_rsync -a --exclude='*.open' -e "ssh ${SSH_ARGS[*]}" --rsync-path="$(mkdir_as_node "$out/warc" "$out/pages") && rsync" "${N_HOST[$i]}:$out/warc" "${N_HOST[$i]}:$out/pages" "$ARCHIVE/$name/output/"
  # The seed list the node reads at every start (rsync: copied again only when it changed).
  [[ "${N_SEEDS[$i]}" == "-" ]] || live_rsync -a -e "ssh ${SSH_ARGS[*]}" "${N_HOST[$i]}:${N_SEEDS[$i]}" "$ARCHIVE/$name/seeds"
  run mv "$to.part" "$to"
  run ln -sfn "$stamp" "$ARCHIVE/$name/latest"
  # Keep the three newest snapshots.
  [[ "$DRY_RUN" == 1 ]] || find "$ARCHIVE/$name" -mindepth 1 -maxdepth 1 -type d -name '2*Z' | sort | head -n -3 | xargs -r rm -rf
  echo "$name: snapshot $stamp"
}

cmd_snapshot() {
  [[ -n "$ARCHIVE" ]] || die "snapshot: --archive DIR is required"
  load_plan
  [[ "$TRANSPORT" == ssh ]] || die "snapshot: ssh transport only"
  local i failed=0
  for i in "${!N_NAME[@]}"; do snapshot_node "$i" || { echo "${N_NAME[$i]}: snapshot failed" >&2; failed=$((failed + 1)); }; done
  [[ "$failed" == 0 ]] || return 1
}

# A fresh machine under a lost node's name and address: provision it, install the build, restore
# the last snapshot (the RDB becomes the base of Redis's AOF, which the node's Redis loads), start.
cmd_replace() {
  [[ -n "$ARCHIVE" ]] || die "replace: --archive DIR is required"
  [[ -n "$NODE" ]] || die "replace: --node NAME is required"
  load_plan
  [[ "$TRANSPORT" == ssh ]] || die "replace: ssh transport only"
  local i out snap
  i="$(index_of_node "$NODE")" || die "replace: no node '$NODE' in $CLUSTER"
  out="${N_OUT[$i]}"
  snap="$ARCHIVE/$NODE/latest"
  [[ -f "$snap/dump.rdb" || "$DRY_RUN" == 1 ]] || die "replace: no snapshot at $snap (the node starts empty: use up instead)"
  # Never over a node that still has state: that is a restart, not a replacement.
  rsh "$i" "test ! -e $(printf '%q' "$out/redis")" || die "replace: ${N_HOST[$i]} already has $out/redis; this is not a fresh machine"
  run rsync -a -e "ssh ${SSH_ARGS[*]}" "$ROOT/deploy/" "${N_HOST[$i]}:/var/lib/shardcrawl-provision/"
  rsh "$i" "bash /var/lib/shardcrawl-provision/provision-i7i.sh $PROVISION_ARGS"
  local id="${BUILD_ID:-$(default_build_id)}"
  ship_build "$i" "$id"
  switch_build "$i" "$id"
  local aof="$out/redis/appendonlydir"
  rsh "$i" "$(mkdir_as_node "$aof")"
  run rsync -a --chown="$REMOTE_USER:$REMOTE_USER" -e "ssh ${SSH_ARGS[*]}" "$snap/dump.rdb" "${N_HOST[$i]}:$aof/appendonly.aof.1.base.rdb"
  # Redis 7's multi-part AOF: a manifest naming the RDB as base and an empty increment.
  rsh "$i" "cd $(printf '%q' "$aof") && printf 'file appendonly.aof.1.base.rdb seq 1 type b\nfile appendonly.aof.1.incr.aof seq 1 type i\n' > appendonly.aof.manifest && : > appendonly.aof.1.incr.aof && chown $REMOTE_USER:$REMOTE_USER appendonly.aof.manifest appendonly.aof.1.incr.aof"
  if [[ "${N_SEEDS[$i]}" != "-" && -f "$ARCHIVE/$NODE/seeds" ]]; then
    run rsync -a --chown="$REMOTE_USER:$REMOTE_USER" -e "ssh ${SSH_ARGS[*]}" "$ARCHIVE/$NODE/seeds" "${N_HOST[$i]}:${N_SEEDS[$i]}"
  fi
  local part
  for part in inbox outbox; do
    [[ -d "$snap/$part" ]] && run rsync -a --chown="$REMOTE_USER:$REMOTE_USER" -e "ssh ${SSH_ARGS[*]}" "$snap/$part/" "${N_HOST[$i]}:$out/$part/"
  done
  ssh_up_node "$i"
  echo "$NODE: replaced from snapshot $(readlink "$snap" 2>/dev/null || echo '?') on ${N_HOST[$i]}"
}
