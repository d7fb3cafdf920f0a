// The cluster as plain processes (the "local" transport of scripts/cluster.sh; always runs): three
// nodes, each with its own Redis, crawl simweb in rounds with outbox exchange between them.
// Proven from simweb's own request log and the nodes' output:
// - the union of fetched pages is the whole reachable, robots-allowed, in-scope set, each page once;
// - every host was fetched only by the node that owns it (the user agent names the node);
// - politeness (gaps, concurrency, robots.txt) holds over the union of the nodes' requests;
// - links crossed shards through outbox files (some node ingested URLs another node found).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { CLUSTER_SH, runCluster, sh, type ClusterRun } from "./cluster-run.js";

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
    for (const cmd of ["up", "down", "status", "seed", "exchange", "collect", "logs", "rounds", "net", "sim"]) {
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
});
