// Our upstream quota runs out mid-crawl (simweb's quota: after N page requests every page request
// gets 429 with x-upstream-quota): the crawl ends by itself with a clear message, exit code 75 and
// summary.json reason "quota"; no work is lost (nothing leased, unfetched URLs still queued); and a
// rerun on the same --out, with the quota restored (a fresh simweb), continues to the end without
// fetching any page twice. Real Redis, real simweb, real processes.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startRedis, type TestRedis } from "./harness/redis.js";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { runCrawl, simwebFlags, writeSeeds, type CrawlRun } from "./harness/crawl.js";
import { flowSimConfig, readSimLog, writeSimConfig, type SimRequest } from "./flow-support.js";
import { EXIT_CODES } from "../packages/shardcrawl/src/node/exit-codes.js";

const HOSTS = 3;
const PAGES = 40;
const QUOTA = 30;

describe("flow: upstream quota exhausted", () => {
  let redisServer: TestRedis;
  let redis: Redis;
  let first: CrawlRun;
  let second: CrawlRun;
  let summary1: { reason: string; stopMessage?: string; stats: { queued: number; leases: number }; queueSizing?: { bounds: { parseQueueMax: number }; source: Record<string, string> } };
  let summary2: { reason: string };
  let afterFirst: { queued: number; leases: number; stop: string | null };
  let reqs1: SimRequest[];
  let reqs2: SimRequest[];

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-flow-quota-"));
    const base = flowSimConfig({}, { hostPageCap: PAGES, pagesPerHost: { min: PAGES, alpha: 1, max: PAGES } });
    const limited = writeSimConfig(join(dir, "limited.json"), { ...base, quota: { afterRequests: QUOTA, header: "x-upstream-quota" } }, 5, HOSTS);
    const restored = writeSimConfig(join(dir, "restored.json"), base, 5, HOSTS);
    redisServer = await startRedis();
    redis = redisServer.client();
    writeSeeds(limited.args, join(dir, "seeds.txt"));
    const out = join(dir, "out");
    const flags = (sim: SimwebProcess) => [
      "--seeds", join(dir, "seeds.txt"), "--out", out, "--redis", redisServer.url, "--scope", "hosts", "--delay", "20",
      "--host-concurrency", "2", "--fetchers", "1", "--parsers", "1", "--upstream-quota-header", "x-upstream-quota",
      "--target-pages-per-sec", "10", "--accepted-wait", "2000", ...simwebFlags(sim),
    ];
    let sim = await startSimwebProcess({ extraArgs: limited.args });
    first = await runCrawl(flags(sim));
    await sim.stop();
    reqs1 = readSimLog(sim.logFile);
    summary1 = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as typeof summary1;
    afterFirst = {
      queued: Number(await redis.hget("sc:stats", "queued")), leases: await redis.zcard("sc:leases"), stop: await redis.hget("sc:flow", "stop"),
    };
    sim = await startSimwebProcess({ extraArgs: restored.args });
    second = await runCrawl(flags(sim));
    await sim.stop();
    reqs2 = readSimLog(sim.logFile);
    summary2 = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as typeof summary2;
  }, 300_000);

  afterAll(async () => {
    redis?.disconnect();
    await redisServer?.stop();
  });

  test("the crawl ends by itself with a clear message, exit code 75 and the reason in summary.json", () => {
    expect(first.stderr).not.toMatch(/fatal|exited \(code/);
    expect(first.code).toBe(EXIT_CODES.quota);
    expect(EXIT_CODES.quota).toBe(75);
    expect(first.stderr).toMatch(/STOPPED, upstream quota exhausted \(upstream quota exhausted \(HTTP 429, x-upstream-quota: exhausted\)\)\. \d+ URLs are still queued/);
    expect(summary1.reason).toBe("quota");
    expect(summary1.stopMessage).toMatch(/x-upstream-quota: exhausted/);
    // The queue bounds in force, derived from rate x accepted wait (10 pages/s x 2 s).
    expect(summary1.queueSizing?.bounds.parseQueueMax).toBe(20);
    expect(summary1.queueSizing?.source.parseQueueMax).toBe("derived");
  });

  test("nothing is lost: no lease is left, the unfetched URLs are still queued, the stop is recorded", () => {
    const ok = new Set(reqs1.filter((r) => r.status === 200 && !r.path.startsWith("/robots.txt")).map((r) => r.host + r.path));
    console.log(`first run: ${ok.size} pages fetched, ${reqs1.filter((r) => r.status === 429).length} quota answers, ${afterFirst.queued} URLs left queued`);
    expect(ok.size).toBeLessThanOrEqual(QUOTA);
    expect(afterFirst.leases).toBe(0);
    expect(afterFirst.queued).toBeGreaterThan(0);
    expect(summary1.stats.queued).toBe(afterFirst.queued);
    expect(afterFirst.stop).toMatch(/quota/);
  });

  test("a rerun with the quota restored continues to the end, fetching every page exactly once over both runs", () => {
    expect(second.stderr).toMatch(/the previous run stopped on "upstream quota exhausted/);
    expect(second.code).toBe(0);
    expect(summary2.reason).toBe("done");
    const pages = [...reqs1, ...reqs2].filter((r) => r.status === 200 && !r.path.startsWith("/robots.txt")).map((r) => r.host + r.path);
    expect(new Set(pages).size).toBe(HOSTS * PAGES);
    expect(pages.length).toBe(HOSTS * PAGES);
  });
});
