// The multi-host check: 3 nodes in 3 network namespaces (each with its own Redis on its own
// loopback) and simweb in a fourth, the hub, all started by scripts/cluster.sh with the netns
// transport. The hub routes between the node namespaces (forwarding on, default routes via it), so
// node-to-node traffic is possible; the hub's ForwDatagrams counter proves none happened during the
// crawl, and a deliberate node-to-node connection afterwards proves the counter sees such traffic.
// Skipped, with the reason, only when this machine cannot create a network namespace.
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { NODES, runCluster, sh, type ClusterRun } from "./cluster-run.js";

const PREFIX = `sct${process.pid % 10_000}`;
const NET = "10.231";
const ENV = { SHARDCRAWL_NETNS_PREFIX: PREFIX, SHARDCRAWL_NETNS_NET: NET };

function netnsUnavailable(): string | null {
  const probe = `${PREFIX}-probe`;
  const r = spawnSync("ip", ["netns", "add", probe], { encoding: "utf8" });
  if (r.error) return `ip (iproute2) cannot run: ${r.error.message}`;
  if (r.status !== 0) return `ip netns add fails here: ${r.stderr.trim()}`;
  spawnSync("ip", ["netns", "del", probe]);
  return null;
}

const skipReason = netnsUnavailable();
if (skipReason) console.warn(`cluster-netns: skipped: ${skipReason}`);

function forwarded(): number {
  const r = sh(["net", "count"], ENV);
  if (r.code !== 0) throw new Error(`net count failed: ${r.stderr}`);
  return Number(r.stdout.trim());
}

describe.skipIf(skipReason !== null)("3-node cluster in network namespaces", () => {
  let run: ClusterRun;
  let before = -1;
  let after = -1;
  beforeAll(() => {
    const up = sh(["net", "up", "--nodes", String(NODES)], ENV);
    if (up.code !== 0) throw new Error(`net up failed: ${up.stderr}`);
    const nodeHosts = Array.from({ length: NODES }, (_, i) => `${NET}.${i + 1}.2`);
    run = runCluster({ transport: "netns", env: ENV, simAddress: `${NET}.0.1`, nodeHosts, beforeRounds: () => (before = forwarded()) });
    after = forwarded();
  }, 600_000);
  afterAll(() => {
    if (run) sh(["down", "--cluster", run.cluster, "--transport", "netns"], ENV);
    sh(["net", "down"], ENV);
  });

  test("the crawl rounds complete", () => {
    expect(run.rounds.code, run.rounds.stdout + run.rounds.stderr).toBe(0);
  });

  test("the union of fetched pages is the whole reachable allowed set, each once, politely", () => {
    const r = run.report;
    expect(r.violations).toMatchObject({ gap: { count: 0 }, concurrency: { count: 0 }, disallowed: { count: 0 } });
    expect(r.coverage!.expected).toBeGreaterThan(300);
    expect(r.coverage!.missing.count).toBe(0);
    expect(r.coverage!.duplicates.extraFetches).toBe(0);
  });

  test("every host was fetched only by its owner", () => {
    for (const [host, who] of run.fetchersByHost) expect([...who], host).toEqual([run.router.ownerOfHost(host)]);
    expect(new Set([...run.fetchersByHost.values()].map((s) => [...s][0])).size).toBe(NODES);
  });

  test("no packet went between node namespaces during the crawl, and the counter would have seen one", () => {
    expect(before).toBeGreaterThanOrEqual(0);
    expect(after - before).toBe(0);
    // node0 -> node1 (a closed port: SYN forwarded there, RST forwarded back).
    spawnSync("ip", ["netns", "exec", `${PREFIX}-n0`, "bash", "-c", `timeout 3 bash -c 'echo > /dev/tcp/${NET}.2.2/9' 2>/dev/null; true`]);
    expect(forwarded() - after).toBeGreaterThan(0);
  });
});
