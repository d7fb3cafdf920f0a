#!/usr/bin/env bash
# The fleet's long end-to-end phases on real sshd + systemd machines (network namespaces, built by
# scripts/cluster/machines.sh): the provisioning and systemd checks and the 3-node ssh crawl (also in
# CI), plus a rolling upgrade of a crawling cluster, losing an instance for good and replacing it
# from its last snapshot, rebalancing onto an added machine, and two nodes sharing one machine
# (about 16 more minutes on 2 quiet cores, so not in CI). Needs root; installs what it needs like the tests do.
#   bash scripts/fleet-e2e.sh
set -euo pipefail
cd "$(dirname "$0")/.."
BOOTSTRAP_WITH_FLEET=1 bash scripts/bootstrap.sh
SHARDCRAWL_FLEET_LONG=1 exec pnpm vitest run test/cluster-multihost.test.ts -t "ssh machines"
