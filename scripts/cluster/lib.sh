#!/usr/bin/env bash
# The commands of scripts/cluster.sh (sourced by it; ROOT is set there).
# shellcheck disable=SC2034  # variables set here are read by the sourcing script

SHARDCRAWL_JS="$ROOT/packages/shardcrawl/dist/cli/main.js"
SIMWEB_JS="$ROOT/packages/simweb/dist/cli.js"
NETNS_PREFIX="${SHARDCRAWL_NETNS_PREFIX:-sc}"
NETNS_NET="${SHARDCRAWL_NETNS_NET:-10.231}"
REMOTE_ROOT="${SHARDCRAWL_REMOTE_ROOT:-/opt/shardcrawl}"
read -r -a SSH_ARGS <<< "${SSH_OPTS:--o BatchMode=yes -o ConnectTimeout=10}"

CLUSTER="" TRANSPORT="local" DRY_RUN=0 HELP=0 WAIT=0 SEEDS="" DEST="" LINES=40 MAX_ROUNDS=10
SIM_ARGS="" STATE="$ROOT/out/cluster-state" NODES=0 ACTION="" PROVISION_ARGS="" PATTERN="" REASON=""
# shellcheck source=scripts/cluster/fleet.sh disable=SC1091
source "$ROOT/scripts/cluster/fleet.sh"

die() { echo "cluster.sh: $*" >&2; exit 2; }

parse_common_args() {
  while [[ $# -gt 0 ]]; do
    case "$1" in
      --cluster) CLUSTER="${2:?--cluster needs a file}"; shift ;;
      --transport) TRANSPORT="${2:?--transport needs local, netns or ssh}"; shift ;;
      --dry-run) DRY_RUN=1 ;;
      --help|-h) HELP=1 ;;
      --wait) WAIT=1 ;;
      --seeds) SEEDS="${2:?--seeds needs a file}"; shift ;;
      --dest) DEST="${2:?--dest needs a directory}"; shift ;;
      --lines) LINES="${2:?--lines needs a number}"; shift ;;
      --max-rounds) MAX_ROUNDS="${2:?--max-rounds needs a number}"; shift ;;
      --sim-args) SIM_ARGS="${2?--sim-args needs a string}"; shift ;;
      --state) STATE="${2:?--state needs a directory}"; shift ;;
      --nodes) NODES="${2:?--nodes needs a number}"; shift ;;
      --archive) ARCHIVE="${2:?--archive needs a directory}"; shift ;;
      --node) NODE="${2:?--node needs a node name}"; shift ;;
      --build-id) BUILD_ID="${2:?--build-id needs a name}"; shift ;;
      --provision-args) PROVISION_ARGS="${2?--provision-args needs a string}"; shift ;;
      --health-timeout) HEALTH_TIMEOUT="${2:?--health-timeout needs seconds}"; shift ;;
      up|down|count|add|remove|list) ACTION="$1" ;;
      --reason) REASON="${2?--reason needs a text}"; shift ;;
      *)
        # exclude add|remove <pattern>
        if [[ ( "$ACTION" == add || "$ACTION" == remove ) && -z "$PATTERN" && "$1" != -* ]]; then PATTERN="$1"
        else die "unknown argument '$1' (try --help)"; fi ;;
    esac
    shift
  done
  case "$TRANSPORT" in local|netns|ssh) ;; *) die "--transport: expected local, netns or ssh, got '$TRANSPORT'" ;; esac
}

command_help() {
  case "$1" in
    up) echo "usage: cluster.sh up --cluster FILE [--transport T] [--wait] [--dry-run]
Writes <out>/node.json for every node and starts 'shardcrawl node --config <out>/node.json' on it
(log in <out>/node.log, pid in <out>/node.pid). --wait: wait until every node exits (a node with
exitWhenDone: true exits when its frontier drains: one crawl round)." ;;
    down) echo "usage: cluster.sh down --cluster FILE [--transport T] [--dry-run]
SIGTERM to every node; waits up to 120 s for each to finish what is in flight." ;;
    status) echo "usage: cluster.sh status --cluster FILE [--transport T] [--dry-run]
Runs 'shardcrawl status --cluster FILE' (from the hub namespace for netns)." ;;
    seed) echo "usage: cluster.sh seed --cluster FILE --seeds FILE [--transport T] [--dry-run]
Copies the seed list to the path the cluster file names (every node reads the whole list and
keeps the seeds it owns)." ;;
    exchange) echo "usage: cluster.sh exchange --cluster FILE [--transport T] [--dry-run]
Moves every finished outbox file (<out>/outbox/<node>/*.urls.gz) into <out>/inbox/ of the node it
is for; prints 'moved N'. A running node ingests its inbox within seconds, a stopped one at start.
Files for a node not in the cluster file stay where they are (reported)." ;;
    collect) echo "usage: cluster.sh collect --cluster FILE --dest DIR [--transport T] [--dry-run]
Copies warc/, pages/ and summary.json of every node into DIR/<node>/." ;;
    logs) echo "usage: cluster.sh logs --cluster FILE [--lines N] [--transport T] [--dry-run]" ;;
    exclude) echo "usage: cluster.sh exclude add|remove <domain|host|url-prefix> [--reason TEXT] --cluster FILE [--transport T] [--dry-run]
       cluster.sh exclude list --cluster FILE [--transport T]
Runs 'shardcrawl exclude' on every node (running or stopped): within about a second of it returning,
no node starts a request to the site; queued URLs are removed and links to it refused.
Exit codes as 'shardcrawl exclude' (0 done, 1 error, 2 usage)." ;;
    rounds) echo "usage: cluster.sh rounds --cluster FILE [--max-rounds N] [--transport T] [--dry-run]
Crawl rounds: up --wait, then exchange; repeated until an exchange moves nothing. Nodes need
exitWhenDone: true in the cluster file." ;;
    rebalance) echo "usage: cluster.sh rebalance --cluster NEW_FILE [--transport T] [--dry-run]
After adding, removing or re-weighting nodes (NEW_FILE lists the nodes as they will be): stops
every node, runs 'shardcrawl rehome' on each (queued URLs of hosts it no longer owns go to its
outbox for their new owner), then exchanges. Start the cluster again with NEW_FILE afterwards." ;;
    net) echo "usage: cluster.sh net up|down|count --nodes N [--dry-run]   (netns transport, as root)
up: namespaces ${NETNS_PREFIX}-hub and ${NETNS_PREFIX}-n0..n<N-1>; node i is ${NETNS_NET}.<i+1>.2 on a veth pair
to the hub (${NETNS_NET}.<i+1>.1); the hub also answers on ${NETNS_NET}.0.1 and routes between node
namespaces (forwarding on), so node-to-node traffic is possible and counted, not just impossible.
count: packets the hub routed between namespaces since 'net up' (Ip ForwDatagrams).
down: deletes the namespaces (and with them the veth pairs)." ;;
    sim) echo "usage: cluster.sh sim up|down [--transport local|netns] [--sim-args \"simweb serve flags\"] [--state DIR] [--dry-run]
up: starts simweb (on 127.0.0.1 locally, on ${NETNS_NET}.0.1 in the hub namespace for netns), log in
DIR/simweb-requests.jsonl, its JSON line (ports, CA) in DIR/simweb.json." ;;
    *) fleet_help "$1" ;;
  esac
}

# Runs a command, or prints it under --dry-run.
run() {
  if [[ "$DRY_RUN" == 1 ]]; then printf '+ %s\n' "$*"; else "$@"; fi
}

# The nodes of the cluster file: arrays N_NAME, N_HOST, N_PORT, N_OUT, N_CFG, N_SEEDS.
load_plan() {
  [[ -n "$CLUSTER" ]] || die "--cluster FILE is required"
  local write=()
  [[ "$DRY_RUN" == 1 || "$TRANSPORT" == ssh ]] || write=(--write)
  N_NAME=() N_HOST=() N_PORT=() N_OUT=() N_CFG=() N_SEEDS=()
  local name host port out cfg seeds
  while IFS=$'\t' read -r name host port out cfg seeds; do
    N_NAME+=("$name") N_HOST+=("$host") N_PORT+=("$port") N_OUT+=("$out") N_CFG+=("$cfg") N_SEEDS+=("$seeds")
  done < <(node "$SHARDCRAWL_JS" cluster plan --cluster "$CLUSTER" "${write[@]}")
  [[ ${#N_NAME[@]} -gt 0 ]] || die "no nodes in $CLUSTER"
}

ns_of() { echo "${NETNS_PREFIX}-n$1"; }
hub_ns() { echo "${NETNS_PREFIX}-hub"; }

# Runs a command where node i lives: here, in its namespace, or over ssh.
on_node() {
  local i="$1"; shift
  case "$TRANSPORT" in
    local) run "$@" ;;
    netns) run ip netns exec "$(ns_of "$i")" "$@" ;;
    ssh) run ssh "${SSH_ARGS[@]}" "${N_HOST[$i]}" "$(printf '%q ' "$@")" ;;
  esac
}

cmd_up() {
  load_plan
  local pids=() i
  for i in "${!N_NAME[@]}"; do
    local out="${N_OUT[$i]}" cfg="${N_CFG[$i]}"
    local start=(node "$SHARDCRAWL_JS" node --config "$cfg")
    case "$TRANSPORT" in
      local|netns)
        run mkdir -p "$out"
        local prefix=()
        [[ "$TRANSPORT" == netns ]] && prefix=(ip netns exec "$(ns_of "$i")")
        if [[ "$DRY_RUN" == 1 ]]; then
          printf '+ %s > %s 2>&1 &\n' "${prefix[*]} ${start[*]}" "$out/node.log"
        else
          "${prefix[@]}" "${start[@]}" >> "$out/node.log" 2>&1 &
          echo "$!" > "$out/node.pid"
          pids+=("$!")
          echo "started ${N_NAME[$i]} (pid $!, log $out/node.log)"
        fi ;;
      ssh) ssh_up_node "$i" ;;
    esac
  done
  if [[ "$WAIT" == 1 && "$TRANSPORT" == ssh ]]; then ssh_wait_nodes; return; fi
  if [[ "$WAIT" == 1 && ${#pids[@]} -gt 0 ]]; then
    local failed=0 p
    for p in "${pids[@]}"; do wait "$p" || failed=$((failed + 1)); done
    [[ "$failed" == 0 ]] || { echo "cluster.sh: $failed node(s) exited with an error; see their node.log" >&2; return 1; }
  fi
}

cmd_down() {
  load_plan
  local i
  for i in "${!N_NAME[@]}"; do
    local pidfile="${N_OUT[$i]}/node.pid"
    case "$TRANSPORT" in
      local|netns)
        [[ -f "$pidfile" ]] || { echo "${N_NAME[$i]}: not started here"; continue; }
        local pid; pid="$(cat "$pidfile")"
        if kill -0 "$pid" 2>/dev/null; then
          run kill -TERM "$pid"
          if [[ "$DRY_RUN" == 0 ]]; then
            local t=0
            while kill -0 "$pid" 2>/dev/null && [[ $t -lt 1200 ]]; do sleep 0.1; t=$((t + 1)); done
            kill -0 "$pid" 2>/dev/null && { echo "${N_NAME[$i]}: still running after 120 s; sending SIGKILL" >&2; kill -KILL "$pid"; }
          fi
        fi
        echo "${N_NAME[$i]}: stopped" ;;
      ssh) ssh_stop_node "$i" "disable --now" ;;
    esac
  done
}

cmd_status() {
  [[ -n "$CLUSTER" ]] || die "--cluster FILE is required"
  if [[ "$TRANSPORT" == netns ]]; then
    run ip netns exec "$(hub_ns)" node "$SHARDCRAWL_JS" status --cluster "$CLUSTER"
  else
    run node "$SHARDCRAWL_JS" status --cluster "$CLUSTER"
  fi
}

cmd_seed() {
  [[ -n "$SEEDS" ]] || die "seed: --seeds FILE is required"
  load_plan
  local i
  for i in "${!N_NAME[@]}"; do
    local target="${N_SEEDS[$i]}"
    [[ "$target" != "-" ]] || die "the cluster file names no seeds: path (nodes[].config.seeds or seeds:)"
    case "$TRANSPORT" in
      local|netns) [[ "$(realpath -m "$SEEDS")" == "$(realpath -m "$target")" ]] || run cp "$SEEDS" "$target" ;;
      ssh) run scp "${SSH_ARGS[@]}" "$SEEDS" "${N_HOST[$i]}:$target" ;;
    esac
  done
}

index_of_node() {
  local want="$1" i
  for i in "${!N_NAME[@]}"; do [[ "${N_NAME[$i]}" == "$want" ]] && { echo "$i"; return 0; }; done
  return 1
}

cmd_exchange() {
  load_plan
  local moved=0 i lock
  if [[ "$TRANSPORT" == ssh && "$DRY_RUN" == 0 ]]; then
    # One exchange at a time through the stage (the timer and an operator's may overlap).
    mkdir -p "$STATE"
    exec {lock}> "$STATE/exchange.lock"
    flock -w 600 "$lock" || die "exchange: another exchange holds $STATE/exchange.lock"
  fi
  for i in "${!N_NAME[@]}"; do
    if [[ "$TRANSPORT" == ssh ]]; then
      exchange_ssh "$i"
      continue
    fi
    local box="${N_OUT[$i]}/outbox"
    [[ -d "$box" ]] || continue
    local d
    for d in "$box"/*/; do
      [[ -d "$d" ]] || continue
      local dest; dest="$(basename "$d")"
      local j
      if ! j="$(index_of_node "$dest")"; then
        echo "exchange: $d holds links for '$dest', which is not in $CLUSTER; left in place" >&2
        continue
      fi
      local inbox="${N_OUT[$j]}/inbox" f
      for f in "$d"*.urls.gz; do
        [[ -f "$f" ]] || continue
        run mkdir -p "$inbox"
        # via a .part name, so a running node never ingests a half-moved file
        run mv "$f" "$inbox/$(basename "$f").part"
        run mv "$inbox/$(basename "$f").part" "$inbox/$(basename "$f")"
        moved=$((moved + 1))
      done
    done
  done
  echo "moved $moved"
}

# ssh: pull node i's finished outbox files (*.urls.gz; a node writes under another name first)
# through this machine to their owners. Files that cannot be delivered (the owner's machine is
# down) wait in <state>/exchange-stage/<owner>/ and go with the next exchange.
exchange_ssh() {
  local i="$1" stage="$STATE/exchange-stage"
  run mkdir -p "$stage"
  run rsync -a --remove-source-files --rsync-path="$(mkdir_as_node "${N_OUT[$i]}/outbox") && rsync" \
    --include='*/' --include='*.urls.gz' --exclude='*' -e "ssh ${SSH_ARGS[*]}" "${N_HOST[$i]}:${N_OUT[$i]}/outbox/" "$stage/" \
    || echo "exchange: could not collect from ${N_NAME[$i]} (${N_HOST[$i]}); delivering what is staged" >&2
  local d
  for d in "$stage"/*/; do
    [[ -d "$d" ]] || continue
    local j n
    j="$(index_of_node "$(basename "$d")")" || { echo "exchange: links for unknown node $(basename "$d") kept in $d" >&2; continue; }
    n="$(find "$d" -maxdepth 1 -name '*.urls.gz' | wc -l)"
    [[ "$n" -gt 0 ]] || continue
    # The inbox is made as the node's user: a node new to the cluster (rebalance) has none yet.
    if run rsync -a --remove-source-files --chown="$REMOTE_USER:$REMOTE_USER" --rsync-path="$(mkdir_as_node "${N_OUT[$j]}/inbox") && rsync" \
      -e "ssh ${SSH_ARGS[*]}" --include '*.urls.gz' --exclude '*' "$d" "${N_HOST[$j]}:${N_OUT[$j]}/inbox/"; then
      moved=$((moved + n))
    else
      echo "exchange: delivery to ${N_NAME[$j]} failed; its files are kept in $d" >&2
    fi
  done
  # Empty once delivered; files for unknown nodes stay (and are reported above).
  [[ "$DRY_RUN" == 1 ]] || find "$stage" -mindepth 1 -depth -type d -empty -delete
}

cmd_collect() {
  [[ -n "$DEST" ]] || die "collect: --dest DIR is required"
  load_plan
  local i
  for i in "${!N_NAME[@]}"; do
    local out="${N_OUT[$i]}" to="$DEST/${N_NAME[$i]}"
    run mkdir -p "$to"
    case "$TRANSPORT" in
      local|netns)
        local part
        for part in warc pages summary.json; do
          [[ -e "$out/$part" ]] && run cp -r "$out/$part" "$to/"
        done ;;
      ssh) run rsync -a -e "ssh ${SSH_ARGS[*]}" "${N_HOST[$i]}:$out/warc" "${N_HOST[$i]}:$out/pages" "${N_HOST[$i]}:$out/summary.json" "$to/" ;;
    esac
  done
}

cmd_logs() {
  load_plan
  local i
  for i in "${!N_NAME[@]}"; do
    echo "== ${N_NAME[$i]}"
    case "$TRANSPORT" in
      local|netns) [[ -f "${N_OUT[$i]}/node.log" ]] && run tail -n "$LINES" "${N_OUT[$i]}/node.log" ;;
      ssh) ssh_logs_node "$i" ;;
    esac
  done
}

cmd_rounds() {
  local r moved
  for ((r = 1; r <= MAX_ROUNDS; r++)); do
    echo "== round $r"
    WAIT=1 cmd_up
    moved="$(cmd_exchange | tail -n 1)"
    echo "exchange: $moved files"
    if [[ "$DRY_RUN" == 1 ]]; then echo "(dry run: one round shown)"; return 0; fi
    [[ "$moved" == "moved 0" ]] && { echo "== done after $r rounds: no links left to exchange"; return 0; }
  done
  echo "cluster.sh: still exchanging links after $MAX_ROUNDS rounds" >&2
  return 1
}

cmd_rebalance() {
  cmd_down
  local i js="$SHARDCRAWL_JS" cf="$CLUSTER"
  for i in "${!N_NAME[@]}"; do
    if [[ "$TRANSPORT" == ssh ]]; then
      ship_cluster_file "$i"
      # A machine new to the cluster has no Redis yet: nothing queued there to move.
      if [[ "$DRY_RUN" == 0 ]] && ! rsh "$i" "test -d $(printf '%q' "${N_OUT[$i]}/redis")"; then
        echo "${N_NAME[$i]}: new node (nothing crawled yet), nothing to rehome"
        continue
      fi
      ssh_as_node_user "$i" node packages/shardcrawl/dist/cli/main.js rehome --out "${N_OUT[$i]}" --cluster "$REMOTE_ETC/cluster.yaml" --name "${N_NAME[$i]}"
      continue
    elif [[ ! -f "${N_OUT[$i]}/node-config.json" ]]; then
      echo "${N_NAME[$i]}: new node (nothing crawled yet), nothing to rehome"
      continue
    fi
    on_node "$i" node "$js" rehome --out "${N_OUT[$i]}" --cluster "$cf" --name "${N_NAME[$i]}"
  done
  cmd_exchange
}

# The site owners' opt-out list on every node (shardcrawl exclude against each node's --out; a
# stopped node's Redis is started for the change). Stops at the first node that fails.
cmd_exclude() {
  case "$ACTION" in
    add|remove) [[ -n "$PATTERN" ]] || die "exclude $ACTION: a <domain|host|url-prefix> is required" ;;
    list) ;;
    *) die "exclude: expected add, remove or list" ;;
  esac
  load_plan
  local i js="$SHARDCRAWL_JS" rc=0
  [[ "$TRANSPORT" == ssh ]] && js="$REMOTE_ROOT/packages/shardcrawl/dist/cli/main.js"
  local args=(exclude "$ACTION")
  [[ -n "$PATTERN" ]] && args+=("$PATTERN")
  [[ "$ACTION" == add && -n "$REASON" ]] && args+=(--reason "$REASON")
  for i in "${!N_NAME[@]}"; do
    echo "${N_NAME[$i]}:"
    # remove exits 3 when the pattern was not in that node's list: not an error for the cluster.
    on_node "$i" node "$js" "${args[@]}" --out "${N_OUT[$i]}" || { rc=$?; [[ "$rc" == 3 ]] || return "$rc"; }
  done
}

cmd_net() {
  [[ "$TRANSPORT" == netns ]] || TRANSPORT=netns
  local hub; hub="$(hub_ns)"
  case "$ACTION" in
    up)
      [[ "$NODES" -ge 1 ]] || die "net up: --nodes N is required"
      run ip netns add "$hub"
      run ip -n "$hub" link set lo up
      run ip -n "$hub" addr add "$NETNS_NET.0.1/32" dev lo
      run ip netns exec "$hub" sysctl -q -w net.ipv4.ip_forward=1
      local i
      for ((i = 0; i < NODES; i++)); do
        local ns; ns="$(ns_of "$i")"
        run ip netns add "$ns"
        run ip -n "$ns" link set lo up
        run ip link add "${NETNS_PREFIX}h$i" netns "$hub" type veth peer name "${NETNS_PREFIX}n$i" netns "$ns"
        run ip -n "$hub" addr add "$NETNS_NET.$((i + 1)).1/24" dev "${NETNS_PREFIX}h$i"
        run ip -n "$ns" addr add "$NETNS_NET.$((i + 1)).2/24" dev "${NETNS_PREFIX}n$i"
        run ip -n "$hub" link set "${NETNS_PREFIX}h$i" up
        run ip -n "$ns" link set "${NETNS_PREFIX}n$i" up
        run ip -n "$ns" route add default via "$NETNS_NET.$((i + 1)).1"
        printf '%s\t%s\t%s\n' "n$i" "$ns" "$NETNS_NET.$((i + 1)).2"
      done
      printf 'hub\t%s\t%s\n' "$hub" "$NETNS_NET.0.1" ;;
    down)
      local ns
      while read -r ns _; do
        [[ "$ns" == "$NETNS_PREFIX"-* ]] && run ip netns del "$ns"
      done < <(ip netns list) ;;
    count)
      if [[ "$DRY_RUN" == 1 ]]; then run ip netns exec "$hub" cat /proc/net/snmp; return 0; fi
      # shellcheck disable=SC2016  # awk's own $fields
      ip netns exec "$hub" awk '/^Ip:/ { if (!h) { for (i = 1; i <= NF; i++) if ($i == "ForwDatagrams") c = i; h = 1 } else print $c }' /proc/net/snmp ;;
    *) die "net: expected up, down or count" ;;
  esac
}

cmd_sim() {
  local bind="127.0.0.1" prefix=()
  if [[ "$TRANSPORT" == netns ]]; then bind="$NETNS_NET.0.1"; prefix=(ip netns exec "$(hub_ns)"); fi
  case "$ACTION" in
    up)
      run mkdir -p "$STATE"
      local args=()
      read -r -a args <<< "$SIM_ARGS"
      local start=("${prefix[@]}" node "$SIMWEB_JS" serve "${args[@]}" --bind "$bind" --log "$STATE/simweb-requests.jsonl" --ca-dir "$STATE")
      if [[ "$DRY_RUN" == 1 ]]; then printf '+ %s > %s &\n' "${start[*]}" "$STATE/simweb.json"; return 0; fi
      rm -f "$STATE/simweb.json"
      "${start[@]}" > "$STATE/simweb.json" 2> "$STATE/simweb.log" &
      echo "$!" > "$STATE/simweb.pid"
      local t=0
      until [[ -s "$STATE/simweb.json" ]]; do
        kill -0 "$(cat "$STATE/simweb.pid")" 2>/dev/null || die "simweb exited; see $STATE/simweb.log"
        [[ $t -lt 600 ]] || die "simweb did not start within 60 s"
        sleep 0.1; t=$((t + 1))
      done
      head -n 1 "$STATE/simweb.json" ;;
    down)
      [[ -f "$STATE/simweb.pid" ]] || { echo "simweb: not started"; return 0; }
      local pid; pid="$(cat "$STATE/simweb.pid")"
      run kill -TERM "$pid" 2>/dev/null || true
      if [[ "$DRY_RUN" == 0 ]]; then
        local t=0
        while kill -0 "$pid" 2>/dev/null && [[ $t -lt 100 ]]; do sleep 0.1; t=$((t + 1)); done
      fi ;;
    *) die "sim: expected up or down" ;;
  esac
}
