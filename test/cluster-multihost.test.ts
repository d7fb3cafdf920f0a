// The cluster checks, in one file so only one 3-node cluster runs at a time (vitest runs the
// describes of a file one after the other; two clusters at once would starve the other
// integration tests on a 2-core machine).
import { readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CLUSTER_SH, NODES, runCluster, sh, type ClusterRun } from "./cluster-run.js";
import { sshClusterSuite } from "./cluster-ssh.js";
// The cluster as plain processes (the "local" transport of scripts/cluster.sh; always runs): three
// nodes, each with its own Redis, crawl simweb in rounds with outbox exchange between them.
// Proven from simweb's own request log and the nodes' output:
// - the union of fetched pages is the whole reachable, robots-allowed, in-scope set, each page once;
// - every host was fetched only by the node that owns it (the user agent names the node);
// - politeness (gaps, concurrency, robots.txt) holds over the union of the nodes' requests;
// - links crossed shards through outbox files (some node ingested URLs another node found).

describe("3-node cluster, local processes", () => {
  let run: ClusterRun;
  beforeAll(() => {
    run = runCluster({ transport: "local", simAddress: "127.0.0.1", nodeHosts: ["127.0.0.1", "127.0.0.1", "127.0.0.1"] });
  }, 600_000);
  afterAll(() => {
    if (run) sh(["down", "--cluster", run.cluster]);
  });

  test("rounds end when an exchange moves nothing", () => {
    expect(run.rounds.code, run.rounds.stdout + run.rounds.stderr).toBe(0);
    expect(run.rounds.stdout).toMatch(/== done after \d+ rounds/);
  });

  test("the union of the nodes' fetches covers the reachable allowed set exactly once, politely", () => {
    const r = run.report;
    expect(r.violations.gap.count).toBe(0);
    expect(r.violations.concurrency.count).toBe(0);
    expect(r.violations.disallowed.count).toBe(0);
    expect(r.coverage!.expected).toBeGreaterThan(300);
    expect(r.coverage!.missing).toEqual({ count: 0, examples: [] });
    expect(r.coverage!.duplicates.extraFetches).toBe(0);
    expect(r.ok).toBe(true);
  });

  test("every host was fetched only by its owner", () => {
    expect(run.fetchersByHost.size).toBeGreaterThan(20);
    const owners = new Set<string>();
    for (const [host, who] of run.fetchersByHost) {
      expect([...who], host).toEqual([run.router.ownerOfHost(host)]);
      owners.add([...who][0]!);
    }
    expect(owners.size).toBe(3);
    for (const [node, lines] of run.pages) for (const l of lines) expect(run.router.ownerOfHost(new URL(l.url).hostname), l.url).toBe(node);
  });

  test("links crossed shards through outbox files and inboxes", () => {
    let sent = 0;
    let ingestedFiles = 0;
    for (const out of run.nodeOuts) {
      const s = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as { stats: { counters: Record<string, number> }; ingested: { files: number } };
      sent += s.stats.counters.outboxLinks ?? 0;
      ingestedFiles += s.ingested.files;
    }
    expect(sent).toBeGreaterThan(0);
    expect(ingestedFiles).toBeGreaterThan(0);
  });

  test("every cluster.sh command has --help and a dry run that changes nothing", () => {
    for (const cmd of ["up", "down", "status", "seed", "exchange", "collect", "logs", "rounds", "net", "sim", "exclude"]) {
      const h = sh([cmd, "--help"]);
      expect(h.code, cmd).toBe(0);
      expect(h.stdout, cmd).toMatch(/^usage: /);
    }
    const dry = sh(["up", "--cluster", run.cluster, "--dry-run"]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/\+ .*node .*main\.js node --config .*node0\/node\.json/);
    const ex = sh(["exchange", "--cluster", run.cluster, "--dry-run"]);
    expect(ex.stdout.trim().split("\n").pop()).toBe("moved 0");
    expect(sh(["bogus"]).code).toBe(2);
    void CLUSTER_SH;
  });

  test("exclude add/list/remove reach every (stopped) node's Redis", () => {
    const add = sh(["exclude", "add", "excluded-by-owner.test", "--reason", "asked by mail", "--cluster", run.cluster]);
    expect(add.code, add.stdout + add.stderr).toBe(0);
    expect(add.stdout.match(/excluded excluded-by-owner\.test \(host\); 0 queued URLs removed/g)).toHaveLength(NODES);
    const list = sh(["exclude", "list", "--cluster", run.cluster]);
    expect(list.stdout.match(/excluded-by-owner\.test\thost\t.*\tasked by mail/g)).toHaveLength(NODES);
    const remove = sh(["exclude", "remove", "excluded-by-owner.test", "--cluster", run.cluster]);
    expect(remove.code).toBe(0);
    expect(remove.stdout.match(/no longer excluded/g)).toHaveLength(NODES);
    expect(sh(["exclude", "add", "--cluster", run.cluster]).code).toBe(2);
  });
});

// The multi-host check: 3 nodes in 3 network namespaces (each with its own Redis on its own
// loopback) and simweb in a fourth, the hub, all started by scripts/cluster.sh with the netns
// transport. The hub routes between the node namespaces (forwarding on, default routes via it), so
// node-to-node traffic is possible; the hub's ForwDatagrams counter proves none happened during the
// crawl, and a deliberate node-to-node connection afterwards proves the counter sees such traffic.
// Skipped, with the reason, only when this machine cannot create a network namespace.

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

// The ssh transport against real sshd machines with systemd (test/cluster-ssh.ts).
sshClusterSuite(skipReason, `scs${process.pid % 10_000}`, "10.233");
