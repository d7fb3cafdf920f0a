#!/usr/bin/env bash
# Runs a shardcrawl cluster described by a cluster file (YAML, the inventory: see
# packages/shardcrawl/src/cli/cluster-file.ts) over one of three transports:
#   local  every node a plain process on this machine (the docker-compose topology without Docker)
#   netns  every node in its own network namespace, simweb in a hub namespace (multi-host tests)
#   ssh    every node on its own machine (the fleet), reached as its inventory `host`
# Nodes never talk to each other: `exchange` moves outbox files between crawl rounds.
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
# shellcheck source=scripts/cluster/lib.sh disable=SC1091
source "$ROOT/scripts/cluster/lib.sh"

usage() {
  cat <<USAGE
usage: scripts/cluster.sh <command> --cluster FILE [--transport local|netns|ssh] [--dry-run] [options]

commands:
  up        start every node (shardcrawl node --config <out>/node.json); --wait waits until all exit
  down      stop every node (SIGTERM: they finish what is in flight and flush output)
  status    pages/s, frontier, hosts, errors and disk use of every node
  seed      copy a seed file to every node (--seeds FILE; each node keeps only its share)
  exchange  move finished outbox files to the inboxes of the nodes that own them
  collect   copy every node's output (warc/, pages/, summary.json) into --dest DIR
  logs      the last lines of every node's log (--lines N)
  rounds    up --wait, exchange, repeated until an exchange moves nothing (--max-rounds N)
  rebalance after nodes changed: down, shardcrawl rehome on every node, exchange (--cluster NEW_FILE)
  install   ssh: ship this checkout's build to every machine (/opt/shardcrawl-releases/<build>)
  provision ssh: run deploy/provision-i7i.sh on every machine (--provision-args "--no-nvme ...")
  upgrade   ssh: one node at a time: ship the build, drain (SIGTERM), switch, start, wait for /status
  snapshot  ssh: Redis BGSAVE, inbox, outbox, finished WARC of every node into --archive DIR
  replace   ssh: --node NAME: a fresh machine under that name from its last snapshot
  net       netns only: net up|down|count (namespaces, veth pairs; count = packets routed between node namespaces)
  sim       local/netns: sim up|down starts simweb (--sim-args "ARGS") on this machine or in the hub namespace
  exclude   exclude add|remove <domain|host|url-prefix> [--reason TEXT] | exclude list: the site owners'
            opt-out list on every node (shardcrawl exclude)

every command takes --help and --dry-run (print what would run, change nothing).
environment: SHARDCRAWL_NETNS_PREFIX (default sc), SHARDCRAWL_NETNS_NET (default 10.231), SSH_OPTS,
  SHARDCRAWL_REMOTE_ROOT (ssh: the checkout on each node, default /opt/shardcrawl)
USAGE
}

cmd="${1:-}"
[[ -z "$cmd" || "$cmd" == "--help" || "$cmd" == "-h" ]] && { usage; [[ -n "$cmd" ]]; exit $?; }
shift
parse_common_args "$@"
if [[ "$HELP" == 1 ]]; then command_help "$cmd"; exit 0; fi

case "$cmd" in
  up) cmd_up ;;
  down) cmd_down ;;
  status) cmd_status ;;
  seed) cmd_seed ;;
  exchange) cmd_exchange ;;
  collect) cmd_collect ;;
  logs) cmd_logs ;;
  rounds) cmd_rounds ;;
  rebalance) cmd_rebalance ;;
  install) cmd_install ;;
  provision) cmd_provision ;;
  upgrade) cmd_upgrade ;;
  snapshot) cmd_snapshot ;;
  replace) cmd_replace ;;
  net) cmd_net ;;
  sim) cmd_sim ;;
  exclude) cmd_exclude ;;
  *) echo "cluster.sh: unknown command '$cmd'" >&2; usage >&2; exit 2 ;;
esac
