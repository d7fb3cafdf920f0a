// A crawl of hosts with unlimited unique links (simweb's session-id and calendar traps) under a
// tight Redis memory budget: Redis used_memory stays under the budget while the crawl runs (the
// memory governor lowers the frontier's total cap and new links are refused or shed, and holds
// leasing for a tick when memory would still pass the budget), and the
// counters and /metrics say what happened. The spill-and-come-back path is proven at the frontier
// level (packages/shardcrawl/test/frontier/flow-shed.test.ts) and at millions of URLs by
// scripts/flow-frontier-flood.mjs (BENCHMARKS.md).
import { existsSync, mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startRedis, type TestRedis } from "./harness/redis.js";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { startCrawl, simwebFlags, writeSeeds, type CrawlRun } from "./harness/crawl.js";
import { flowSimConfig, writeSimConfig } from "./flow-support.js";
import { setTimeout as sleep } from "node:timers/promises";

const HEADROOM = 2 * 1024 * 1024;

describe("flow: unlimited links under a Redis memory budget", () => {
  let sim: SimwebProcess;
  let redisServer: TestRedis;
  let redis: Redis;
  let run: CrawlRun;
  let budget = 0;
  const used: number[] = [];
  let stats: Record<string, string>;
  let metrics = "";

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-flow-mem-"));
    const cfg = flowSimConfig({ "trap-session": 1, "trap-calendar": 1 }, { outDegree: { median: 60, sigma: 0.2, max: 120 } });
    const { args } = writeSimConfig(join(dir, "sim.json"), cfg, 4, 4);
    sim = await startSimwebProcess({ extraArgs: args });
    redisServer = await startRedis();
    redis = redisServer.client();
    const usedNow = async () => Number(/^used_memory:(\d+)/m.exec(await redis.info("memory"))![1]);
    budget = (await usedNow()) + HEADROOM;
    writeSeeds(args, join(dir, "seeds.txt"));
    const out = join(dir, "out");
    const crawl = startCrawl([
      "--seeds", join(dir, "seeds.txt"), "--out", out, "--redis", redisServer.url, "--scope", "hosts", "--delay", "0",
      "--host-concurrency", "4", "--fetchers", "1", "--parsers", "1", "--parse-queue-max", "16", "--max-pages", "1500",
      "--expected-urls", "200000", "--redis-memory-budget", String(budget), "--shed", "spill", "--url-filter", "none",
      // The traps are the point here: keep their session ids (the trap defences would strip them).
      "--strip-params", "none", ...simwebFlags(sim),
    ]);
    let exited = false;
    void crawl.done.then(() => (exited = true));
    while (!exited) {
      used.push(await usedNow());
      if (used.length % 10 === 0 && existsSync(join(out, "status.json"))) {
        // The latest /metrics the node served before it finished.
        const { statusPort } = JSON.parse(readFileSync(join(out, "status.json"), "utf8")) as { statusPort: number };
        const text = await fetch(`http://127.0.0.1:${statusPort}/metrics`).then((r) => r.text()).catch(() => "");
        if (text) metrics = text;
      }
      await sleep(100);
    }
    run = await crawl.done;
    stats = await redis.hgetall("sc:stats");
    await sim.stop();
  }, 600_000);

  afterAll(async () => {
    await sim?.stop();
    await redisServer?.stop();
  });

  test("the crawl runs to its page budget", () => {
    expect(run.stderr).not.toMatch(/fatal|exited \(code/);
    expect(run.code).toBe(0);
    expect(Number(stats.fetched) + Number(stats.failed ?? 0)).toBeGreaterThanOrEqual(1500);
  });

  test("Redis used memory stays under the budget; the governor capped the frontier and says so", () => {
    const max = Math.max(...used);
    console.log(`redis used_memory: max ${max} B of a ${budget} B budget over ${used.length} samples; cap lowered ${stats["memory:capLowered"]} times, leasing held ${stats["memory:held"] ?? 0} times; ` +
      `refused ${stats["dropped:frontier-full"] ?? 0}, spilled ${stats.spilled ?? 0}, queued at the end ${stats.queued}, discovered ${stats.discovered}`);
    // No allowance: the governor judges memory at its next tick (the reading plus the recent rise)
    // and holds leasing when that would pass the line, so the budget is never crossed.
    expect(max).toBeLessThanOrEqual(budget);
    expect(Number(stats["memory:capLowered"] ?? 0)).toBeGreaterThanOrEqual(1);
    expect(Number(stats["dropped:frontier-full"] ?? 0)).toBeGreaterThan(0);
    expect(metrics).toMatch(new RegExp(`shardcrawl_redis_memory_budget_bytes\\{node="node0"\\} ${budget}`));
    expect(metrics).toMatch(/shardcrawl_frontier_rejected_total\{node="node0",reason="frontier-full"\} \d+/);
  });
});
