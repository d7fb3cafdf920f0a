// Parsers slowed on purpose (the parser process is stopped with SIGSTOP for a while): fetchers
// pull, so the parse queue stays within its bound, fetching stops, the blocked time is measured,
// and Redis and fetcher memory stay flat; once parsers resume the crawl completes. Real Redis
// (the test's own, sampled while the crawl runs), real simweb, real processes.
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
import { rssOf } from "./harness/proc-rss.js";

const PARSE_MAX = 16;
const FETCHER_CONCURRENCY = 8;
const STOP_MS = 5000;

interface Sample { t: number; pq: number; fetched: number; redisBytes: number; fetcherRss: number }

describe("flow: slowed parsers", () => {
  let sim: SimwebProcess;
  let redisServer: TestRedis;
  let redis: Redis;
  let run: CrawlRun;
  let parserPid = 0;
  const samples: Sample[] = [];
  let stats: Record<string, string>;
  let metrics = "";

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-flow-bp-"));
    const cfg = flowSimConfig({}, { hostPageCap: 150, pagesPerHost: { min: 150, alpha: 1, max: 150 } });
    const { args } = writeSimConfig(join(dir, "sim.json"), cfg, 3, 4);
    sim = await startSimwebProcess({ extraArgs: args });
    redisServer = await startRedis();
    redis = redisServer.client();
    writeSeeds(args, join(dir, "seeds.txt"));
    const out = join(dir, "out");
    const crawl = startCrawl([
      "--seeds", join(dir, "seeds.txt"), "--out", out, "--redis", redisServer.url, "--scope", "hosts", "--delay", "10",
      "--host-concurrency", "2", "--fetchers", "1", "--parsers", "1", "--parse-queue-max", String(PARSE_MAX),
      "--fetcher-concurrency", String(FETCHER_CONCURRENCY), ...simwebFlags(sim),
    ]);
    const fetched = async () => Number((await redis.hget("sc:stats", "fetched")) ?? 0);
    while (!existsSync(join(out, "status.json")) || (await fetched()) < 40) await sleep(100);
    const { statusPort } = JSON.parse(readFileSync(join(out, "status.json"), "utf8")) as { statusPort: number };
    const status = (await (await fetch(`http://127.0.0.1:${statusPort}/status`)).json()) as { children: Array<{ role: string; pid?: number }> };
    parserPid = status.children.find((c) => c.role === "parser")!.pid!;
    const fetcherPid = status.children.find((c) => c.role === "fetcher")!.pid!;
    process.kill(parserPid, "SIGSTOP");
    const t0 = Date.now();
    while (Date.now() - t0 < STOP_MS) {
      const info = await redis.info("memory");
      samples.push({
        t: Date.now() - t0, pq: await redis.llen("sc:pq"), fetched: await fetched(),
        redisBytes: Number(/^used_memory:(\d+)/m.exec(info)![1]), fetcherRss: rssOf(fetcherPid),
      });
      await sleep(200);
    }
    metrics = await (await fetch(`http://127.0.0.1:${statusPort}/metrics`)).text();
    process.kill(parserPid, "SIGCONT");
    run = await crawl.done;
    stats = await redis.hgetall("sc:stats");
    await sim.stop();
  }, 600_000);

  afterAll(async () => {
    if (parserPid) {
      try {
        process.kill(parserPid, "SIGCONT");
      } catch {
        // already gone
      }
    }
    await sim?.stop();
    await redisServer?.stop();
  });

  test("the parse queue never exceeds its bound plus the fetches already in flight", () => {
    const maxPq = Math.max(...samples.map((s) => s.pq));
    console.log(`parse queue while parsers were stopped: max ${maxPq} (bound ${PARSE_MAX}, fetcher concurrency ${FETCHER_CONCURRENCY})`);
    expect(maxPq).toBeLessThanOrEqual(PARSE_MAX + FETCHER_CONCURRENCY);
    expect(maxPq).toBeGreaterThanOrEqual(PARSE_MAX);
  });

  test("fetchers stop fetching and the blocked time is measured", () => {
    const late = samples.filter((s) => s.t >= STOP_MS / 2);
    expect(late[late.length - 1]!.fetched).toBe(late[0]!.fetched);
    const blockedMs = Number(stats["blockedMs:parse-full"] ?? 0);
    console.log(`fetchers blocked on a full parse queue: ${blockedMs} ms in all`);
    expect(blockedMs).toBeGreaterThanOrEqual(STOP_MS / 2);
    expect(metrics).toMatch(/shardcrawl_fetch_blocked_seconds_total\{node="node0",reason="parse-full"\} [1-9]/);
    expect(metrics).toMatch(/shardcrawl_parse_queue_capacity_pages\{node="node0"\} 16/);
    expect(metrics).toMatch(/shardcrawl_parse_queue_oldest_age_seconds\{node="node0"\} [1-9]/);
  });

  test("Redis and fetcher memory stay flat while blocked", () => {
    const late = samples.filter((s) => s.t >= STOP_MS / 2);
    const span = (xs: number[]) => Math.max(...xs) - Math.min(...xs);
    console.log(`over the blocked window: redis used_memory span ${span(late.map((s) => s.redisBytes))} B, fetcher RSS span ${span(late.map((s) => s.fetcherRss))} B`);
    expect(span(late.map((s) => s.redisBytes))).toBeLessThan(512 * 1024);
    expect(span(late.map((s) => s.fetcherRss))).toBeLessThan(16 * 1024 * 1024);
  });

  test("after parsers resume, the crawl completes: every fetched page parsed", () => {
    expect(run.stderr).not.toMatch(/fatal|exited \(code/);
    expect(run.code).toBe(0);
    expect(Number(stats.parsed)).toBe(Number(stats.fetched));
    expect(Number(stats.fetched)).toBeGreaterThanOrEqual(600);
  });
});
