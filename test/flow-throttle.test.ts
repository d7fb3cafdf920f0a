// Per-host AIMD against simweb's throttling host (a hidden capacity of k concurrent requests,
// 429/503 + Retry-After beyond it), next to healthy hosts. Two crawls side by side in one test:
// healthy hosts alone, then the same hosts with the throttling neighbour. Everything is judged
// from simweb's own request log (arrival in-flight count per host, statuses, times).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { runCrawl, simwebFlags, writeSeeds, type CrawlRun } from "./harness/crawl.js";
import { flowSimConfig, quantile, readSimLog, writeSimConfig, type SimRequest } from "./flow-support.js";

const K = 4; // the throttling host's hidden concurrency
const HARD = 8; // --host-concurrency: the hard limit AIMD never crosses
const PAGES = 120;

describe("flow: adaptive per-host limits", () => {
  let sim: SimwebProcess;
  let throttled: string;
  let healthy: string[];
  const runs: Array<{ run: CrawlRun; t0: number; t1: number }> = [];

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-flow-throttle-"));
    const cfg = flowSimConfig({ throttle: 0.3, slow: 1 }, {
      hostPageCap: PAGES, pagesPerHost: { min: PAGES, alpha: 1, max: PAGES },
      slow: { medianMs: 250, sigma: 0.2, maxMs: 600 },
      throttle: { maxConcurrency: [K], ratePerSec: [1000], retryAfterSec: [1] },
      outDegree: { median: 8, sigma: 0.3, max: 20 },
    });
    const { args, world } = writeSimConfig(join(dir, "sim.json"), cfg, 13, 5);
    const hosts = world.hosts();
    const t = hosts.filter((h) => h.behaviours.includes("throttle"));
    expect(t.length, "the seed gives exactly one throttling host").toBe(1);
    throttled = t[0]!.name;
    healthy = hosts.filter((h) => !h.behaviours.includes("throttle")).map((h) => h.name);
    sim = await startSimwebProcess({ extraArgs: args });
    const all = writeSeeds(args, join(dir, "all.txt"));
    const healthySeeds = join(dir, "healthy.txt");
    writeFileSync(healthySeeds, all.filter((u) => !u.includes(`//${throttled}/`)).join("\n") + "\n");
    const flags = (out: string, seeds: string) => [
      "--seeds", seeds, "--out", out, "--scope", "hosts", "--delay", "400", "--host-concurrency", String(HARD),
      "--fetchers", "1", "--parsers", "1", "--retry-base", "200", "--aimd-probe", "600000", ...simwebFlags(sim),
    ];
    for (const [name, seeds] of [["alone", healthySeeds], ["with-throttled", join(dir, "all.txt")]] as const) {
      const t0 = Date.now();
      const run = await runCrawl(flags(join(dir, name), seeds));
      runs.push({ run, t0, t1: Date.now() });
    }
    await sim.stop();
  }, 600_000);

  afterAll(async () => {
    await sim?.stop();
  });

  const inRun = (reqs: SimRequest[], i: number) => reqs.filter((r) => r.ts >= runs[i]!.t0 && r.ts <= runs[i]!.t1 && !r.path.startsWith("/robots.txt"));

  test("both crawls finish cleanly", () => {
    for (const { run } of runs) {
      expect(run.stderr).not.toMatch(/fatal|exited \(code/);
      expect(run.code).toBe(0);
    }
  });

  test(`the throttled host's limit converges into [k/2, k] with under 2% 429/503 (k = ${K})`, () => {
    const reqs = inRun(readSimLog(sim.logFile), 1).filter((r) => r.host === throttled);
    expect(reqs.length).toBeGreaterThanOrEqual(PAGES);
    // After convergence: the last 60% of its requests.
    const late = reqs.slice(Math.floor(reqs.length * 0.4));
    const refused = late.filter((r) => r.status === 429 || r.status === 503).length;
    expect(refused / late.length).toBeLessThan(0.02);
    // The server's own in-flight count at each arrival: never above k once converged (the limit
    // is at most k), and it still uses at least k/2 (the limit did not collapse).
    const inflight = late.map((r) => r.inflight);
    console.log(`throttled host: ${reqs.length} requests, ${reqs.filter((r) => r.status === 429 || r.status === 503).length} refused in all, ${refused} of the last ${late.length}; in-flight at arrival p50 ${quantile(inflight, 0.5)} p90 ${quantile(inflight, 0.9)} max ${Math.max(...inflight)}`);
    expect(inflight.filter((x) => x > K).length / inflight.length).toBeLessThan(0.02);
    expect(quantile(inflight, 0.9)).toBeGreaterThanOrEqual(K / 2);
    // Early on it did get 429s: the limit started at the hard limit and came down.
    expect(reqs.some((r) => r.status === 429 || r.status === 503)).toBe(true);
  });

  test("healthy hosts are fetched as fast with a throttling neighbour as without it", () => {
    const log = readSimLog(sim.logFile);
    const rate = (i: number) => {
      const reqs = inRun(log, i);
      const perHost = healthy.map((h) => {
        const r = reqs.filter((x) => x.host === h);
        return r.length / Math.max(1, (r[r.length - 1]!.ts - r[0]!.ts) / 1000);
      });
      return quantile(perHost, 0.5);
    };
    const alone = rate(0);
    const withNeighbour = rate(1);
    console.log(`healthy hosts' median fetch rate: alone ${alone.toFixed(2)}/s, with a throttling neighbour ${withNeighbour.toFixed(2)}/s`);
    expect(withNeighbour / alone).toBeGreaterThan(0.8);
  });
});
