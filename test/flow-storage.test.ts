// Storage slowed on purpose (SHARDCRAWL_FAULT_SLOW_WRITES_MS: every WARC and page-log append waits
// first): the parser's write buffer stays within its byte bound, the parser stops taking pages,
// the parse queue fills, and fetchers report their blocked time under "storage" (not "parse-full");
// Redis and process memory stay flat meanwhile, and the crawl still completes with every page
// parsed. Real Redis, real simweb, real processes; the fault knob only slows the disk writes.
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

const PARSE_MAX = 8;
const FETCHER_CONCURRENCY = 8;
const WRITE_BUFFER = 40 * 1024;
const PAGES = 50;

interface Sample { pq: number; redisBytes: number; parserRss: number; fetcherRss: number }

describe("flow: slow storage", () => {
  let sim: SimwebProcess;
  let redisServer: TestRedis;
  let redis: Redis;
  let run: CrawlRun;
  const samples: Sample[] = [];
  let stats: Record<string, string>;
  let flow: Record<string, string>;
  let metrics = "";
  let statusSizing: unknown;
  let fetchTimes = 0;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-flow-storage-"));
    const cfg = flowSimConfig({}, { hostPageCap: 60, pagesPerHost: { min: 60, alpha: 1, max: 60 } });
    const { args } = writeSimConfig(join(dir, "sim.json"), cfg, 3, 3);
    sim = await startSimwebProcess({ extraArgs: args });
    redisServer = await startRedis();
    redis = redisServer.client();
    writeSeeds(args, join(dir, "seeds.txt"));
    const out = join(dir, "out");
    const crawl = startCrawl([
      "--seeds", join(dir, "seeds.txt"), "--out", out, "--redis", redisServer.url, "--scope", "hosts", "--delay", "10",
      "--host-concurrency", "2", "--fetchers", "1", "--parsers", "1", "--parse-queue-max", String(PARSE_MAX),
      "--fetcher-concurrency", String(FETCHER_CONCURRENCY), "--write-buffer-bytes", String(WRITE_BUFFER), "--max-pages", String(PAGES),
      ...simwebFlags(sim),
    ], { env: { SHARDCRAWL_FAULT_SLOW_WRITES_MS: "300" } });
    let exited = false;
    void crawl.done.then(() => (exited = true));
    while (!exited && !existsSync(join(out, "status.json"))) await sleep(100);
    const { statusPort } = JSON.parse(readFileSync(join(out, "status.json"), "utf8")) as { statusPort: number };
    const status = (await (await fetch(`http://127.0.0.1:${statusPort}/status`)).json()) as { children: Array<{ role: string; pid?: number }>; queueSizing?: unknown };
    statusSizing = status.queueSizing;
    const parserPid = status.children.find((c) => c.role === "parser")!.pid!;
    const fetcherPid = status.children.find((c) => c.role === "fetcher")!.pid!;
    while (!exited) {
      try {
        const info = await redis.info("memory");
        samples.push({ pq: await redis.llen("sc:pq"), redisBytes: Number(/^used_memory:(\d+)/m.exec(info)![1]), parserRss: rssOf(parserPid), fetcherRss: rssOf(fetcherPid) });
        if (samples.length % 10 === 0) metrics = await fetch(`http://127.0.0.1:${statusPort}/metrics`).then((r) => r.text()).catch(() => metrics);
      } catch {
        // the children exited between the check and the read: the crawl is ending
      }
      await sleep(200);
    }
    run = await crawl.done;
    stats = await redis.hgetall("sc:stats");
    flow = await redis.hgetall("sc:flow");
    fetchTimes = await redis.llen("sc:fetchtimes");
    await sim.stop();
  }, 120_000);

  afterAll(async () => {
    redis?.disconnect();
    await sim?.stop();
    await redisServer?.stop();
  });

  test("the crawl completes: every fetched page parsed", () => {
    expect(run.stderr).not.toMatch(/fatal|exited \(code/);
    expect(run.code).toBe(0);
    expect(Number(stats.fetched)).toBeGreaterThanOrEqual(PAGES - FETCHER_CONCURRENCY);
    expect(Number(stats.parsed)).toBe(Number(stats.fetched));
    // Every fetch time went to the node's shared lease-TTL sample (robots.txt fetches are not in it).
    expect(fetchTimes).toBeGreaterThanOrEqual(Number(stats.fetched));
  });

  test("/status shows the bounds in force and where they came from", () => {
    expect(statusSizing).toMatchObject({
      bounds: { parseQueueMax: PARSE_MAX, writeBufferBytes: WRITE_BUFFER },
      source: { parseQueueMax: "explicit", writeBufferBytes: "explicit", parseQueueMaxBytes: "default" },
    });
  });

  test("the parser's write buffer filled up to its bound and never beyond it", () => {
    const peak = Number(flow["wbpeak:node0-p0"]);
    console.log(`write buffer peak ${peak} B of a ${WRITE_BUFFER} B bound`);
    expect(peak).toBeLessThanOrEqual(WRITE_BUFFER);
    expect(peak).toBeGreaterThan(WRITE_BUFFER / 2);
  });

  test("fetchers are blocked for the storage reason, and the parse queue stays within its bound", () => {
    const storageMs = Number(stats["blockedMs:storage"] ?? 0);
    const parseMs = Number(stats["blockedMs:parse-full"] ?? 0);
    const maxPq = Math.max(...samples.map((s) => s.pq));
    console.log(`blocked: storage ${storageMs} ms, parse-full ${parseMs} ms; parse queue max ${maxPq} (bound ${PARSE_MAX}) over ${samples.length} samples`);
    expect(storageMs).toBeGreaterThan(1000);
    expect(storageMs).toBeGreaterThan(parseMs);
    expect(maxPq).toBeGreaterThanOrEqual(PARSE_MAX);
    expect(maxPq).toBeLessThanOrEqual(PARSE_MAX + FETCHER_CONCURRENCY);
    expect(metrics).toMatch(/shardcrawl_fetch_blocked_seconds_total\{node="node0",reason="storage"\} [0-9.]+/);
  });

  test("Redis and process memory stay flat while storage is slow", () => {
    // The second half: well after warm-up (sockets, TLS, JIT), while fetching is held back by storage.
    const late = samples.slice(Math.floor(samples.length / 2), -2);
    const span = (xs: number[]) => Math.max(...xs) - Math.min(...xs);
    // Growth above the window's first reading (a collection that returns memory is not growth).
    const growth = (xs: number[]) => Math.max(...xs) - xs[0]!;
    const r = span(late.map((s) => s.redisBytes));
    const p = growth(late.map((s) => s.parserRss));
    const f = growth(late.map((s) => s.fetcherRss));
    console.log(`over ${late.length} samples: redis used_memory span ${r} B, parser RSS growth ${p} B, fetcher RSS growth ${f} B ` +
      `(fetcher RSS first ${late[0]!.fetcherRss} last ${late[late.length - 1]!.fetcherRss})`);
    expect(late.length).toBeGreaterThan(10);
    expect(r).toBeLessThan(1024 * 1024);
    expect(p).toBeLessThan(16 * 1024 * 1024);
    expect(f).toBeLessThan(16 * 1024 * 1024);
  });
});
