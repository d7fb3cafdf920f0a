// --ip-concurrency end to end: simweb's hosts all answer on one loopback address (the crawl
// connects every host to 127.0.0.1), so the whole crawl shares one IP. From simweb's own request
// log: never more than --ip-concurrency requests in flight at once across all hosts and domains,
// every reachable page still fetched, and domain politeness held.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { readRequestLog, runCrawl, simwebFlags, verifyLog, writeSeeds, type CrawlRun, type VerifyReport } from "./harness/crawl.js";

const DELAY_MS = 20;
const IP_CONCURRENCY = 2;

/** Most requests in flight at once in a request log (an end at t comes before a start at t). */
function maxInFlight(log: Array<{ ts: number; end: number }>): number {
  const events: Array<[number, number]> = [];
  for (const r of log) events.push([r.ts, 1], [Math.max(r.ts, r.end), -1]);
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  let active = 0, max = 0;
  for (const [, d] of events) max = Math.max(max, (active += d));
  return max;
}

describe("--ip-concurrency across hosts on one address", () => {
  let sim: SimwebProcess;
  let run: CrawlRun;
  let report: VerifyReport;
  let inFlight = 0;
  const configArgs: string[] = [];

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-iplimit-"));
    const cfg = join(dir, "simweb.json");
    writeFileSync(cfg, JSON.stringify({ pageSize: { median: 4000, mean: 5000, min: 1000, max: 20000 }, pagesPerHost: { min: 10, alpha: 1.5, max: 30 }, hostPageCap: 30 }));
    configArgs.push("--preset", "polite", "--seed", "31", "--hosts", "24", "--config", cfg);
    sim = await startSimwebProcess({ extraArgs: configArgs.slice(0) });
    const seedsFile = join(dir, "seeds.txt");
    writeSeeds(configArgs, seedsFile);
    run = await runCrawl([
      "--seeds", seedsFile, "--out", join(dir, "out"), "--scope", "domains", "--delay", String(DELAY_MS), "--max-crawl-delay", "200",
      "--fetchers", "2", "--parsers", "1", "--fetcher-concurrency", "64", "--ip-concurrency", String(IP_CONCURRENCY), ...simwebFlags(sim),
    ]);
    await sim.stop();
    inFlight = maxInFlight(readRequestLog(sim.logFile));
    report = verifyLog(configArgs, sim.logFile, { minGapMs: DELAY_MS, maxConcurrency: 1, seedsFile, scope: "domains", maxCrawlDelayMs: 200, politenessKey: "domain" });
  }, 300_000);

  afterAll(async () => {
    await sim?.stop();
  });

  test("never more than --ip-concurrency requests in flight to the one address", () => {
    expect(run.code, run.stderr).toBe(0);
    expect(inFlight).toBeGreaterThanOrEqual(1);
    expect(inFlight).toBeLessThanOrEqual(IP_CONCURRENCY);
  });

  test("every reachable page is fetched, politely per domain", () => {
    const c = report.coverage!;
    expect(c.missing.examples).toEqual([]);
    expect(c.fetchedExpected).toBe(c.expected);
    expect(report.violations.gap.examples).toEqual([]);
    expect(report.violations.concurrency.count).toBe(0);
  });
});
