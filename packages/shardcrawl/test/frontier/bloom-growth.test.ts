// The seen filter grows on a real Redis: 3x its design capacity inserted, its measured
// false-positive rate stays within 1.2x the target, no new URL is dropped beyond that rate, no
// inserted URL is missed, and a filter built before growth existed resumes with its insertions
// estimated. Small design capacity keeps it fast. Prints bits and Redis bytes per URL.
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis, type TestRedis } from "../../../../test/harness/redis.js";
import { BLOOM_WARN_RATIO, bloomStages, Frontier, FrontierKeys, initBloom, Scripts } from "../../src/frontier/index.js";
import { blockedFalsePositiveRate } from "../../src/frontier/bloom.js";
import { renderMetrics } from "../../src/node/metrics.js";
import type { DiscoveredLink } from "../../src/shared/types.js";

let server: TestRedis;
let redis: Redis;

useRedis((started) => {
  server = started;
  redis = started.client();
});

const hostOf = (i: number) => `www.site${i % 211}.test`;
const urlOf = (tag: string, i: number) => `https://${hostOf(i)}/${tag}/article-${i}.html?p=${i % 7}`;
const linkOf = (url: string, host: string): DiscoveredLink => ({ url, host, tier: 0, depth: 1, hops: 0 });

/** Adds `count` distinct URLs in page-sized batches; returns how many the filter took for seen. */
async function insert(f: Frontier, tag: string, count: number): Promise<number> {
  let seen = 0;
  for (let i = 0; i < count; i += 500) {
    const batch = [];
    for (let j = i; j < Math.min(count, i + 500); j++) batch.push(linkOf(urlOf(tag, j), hostOf(j)));
    seen += (await f.addLinks(batch, { now: 0 })).seen;
  }
  return seen;
}

async function bloomBytes(prefix: string): Promise<number> {
  let bytes = 0;
  for (const key of await redis.keys(`${prefix}bf*`)) bytes += Number(await redis.memory("USAGE", key));
  return bytes;
}

describe("growing seen filter", () => {
  it("holds the false-positive rate within 1.2x the target at 3x its design capacity", async () => {
    const n = 10_000;
    const p = 0.01;
    const f = await Frontier.open(redis, { prefix: "grow:", bloom: { expectedUrls: n, falsePositiveRate: p, segmentBits: 65536 } });
    const dropped = await insert(f, "in", 3 * n);
    const st = await f.bloomStatus();
    // Stage 0 took n, stage 1 (2n at p/10) the rest: 3n fills both.
    expect(st.stages).toBe(2);
    expect(st.insertions).toBe(3 * n - dropped);
    expect(st.capacity).toBe(3 * n);
    // Inserted URLs of every stage are never missed.
    const back = await f.mightHaveSeen(Array.from({ length: 3 * n }, (_, i) => urlOf("in", i)).filter((_, i) => i % 3 === 0));
    expect(back.every(Boolean)).toBe(true);
    const probes = 100_000;
    const hits = (await f.mightHaveSeen(Array.from({ length: probes }, (_, i) => urlOf("out", i)))).filter(Boolean).length;
    const rate = hits / probes;
    const bytes = await bloomBytes("grow:");
    console.log(`growing bloom n=${n} p=${p}: ${3 * n} URLs, ${st.stages} stages, measured FP ${(rate * 100).toFixed(3)}% ` +
      `(estimated ${(st.estimatedFalsePositiveRate * 100).toFixed(3)}%), dropped as seen while inserting ${dropped} (${((dropped / (3 * n)) * 100).toFixed(3)}%), ` +
      `${st.bitsPerUrl.toFixed(2)} bits/URL, Redis ${(bytes / st.insertions).toFixed(2)} bytes/URL`);
    expect(rate).toBeLessThanOrEqual(1.2 * p);
    expect(rate).toBeGreaterThan(0.5 * p);
    expect(dropped / (3 * n)).toBeLessThanOrEqual(1.2 * p);
    expect(st.estimatedFalsePositiveRate).toBeLessThanOrEqual(1.2 * p);
    expect(st.warning).toBe(0);
    expect(Math.abs(st.estimatedFalsePositiveRate - rate)).toBeLessThan(0.3 * p);
    const text = await renderMetrics({ stats: { ...(await f.stats()), pressure: { hosts: [], bloom: st } } as never });
    expect(text).toMatch(/shardcrawl_seen_filter_stages\{node="node0"\} 2/);
    expect(text).toMatch(/shardcrawl_seen_filter_bytes_per_url\{node="node0"\} \d/);
  });

  it("a fixed filter (growth never planned) climbs past the target where the growing one does not", async () => {
    const n = 10_000;
    const p = 0.01;
    const f = await Frontier.open(redis, { prefix: "fixed:", bloom: { expectedUrls: n, falsePositiveRate: p } });
    await redis.del("fixed:bf:grow", "fixed:bf:plan"); // what code before growth left in Redis
    const dropped = await insert(f, "in", 3 * n);
    const hits = (await f.mightHaveSeen(Array.from({ length: 20_000 }, (_, i) => urlOf("out", i)))).filter(Boolean).length;
    console.log(`fixed bloom at 3x: measured FP ${((hits / 20_000) * 100).toFixed(2)}%, dropped while inserting ${dropped}`);
    expect(hits / 20_000).toBeGreaterThan(10 * p);
  });

  it("resumes a filter built before growth: insertions estimated from its bits, then it grows", async () => {
    const n = 5_000;
    // Code before growth knew only the classic layout.
    const f = await Frontier.open(redis, { prefix: "old:", bloom: { expectedUrls: n, falsePositiveRate: 0.02, layout: "classic" } });
    await redis.del("old:bf:grow", "old:bf:plan");
    const dropped = await insert(f, "in", 4_000);
    expect(await redis.exists("old:bf:grow")).toBe(0);
    const other = server.client();
    const resumed = await Frontier.open(other, { prefix: "old:", bloom: { expectedUrls: n, falsePositiveRate: 0.02 } });
    const st = await resumed.bloomStatus();
    expect(Math.abs(st.insertions - (4_000 - dropped))).toBeLessThan(100);
    expect(await redis.get("old:bf:plan")).toContain(`${resumed.bloom.m},${resumed.bloom.k},${n};`);
    // Old URLs stay seen; past capacity the filter grows.
    expect((await resumed.mightHaveSeen([urlOf("in", 1), urlOf("in", 3999)]))).toEqual([true, true]);
    await insert(resumed, "more", 3_000);
    const after = await resumed.bloomStatus();
    expect(after.stages).toBe(2);
    expect((await resumed.mightHaveSeen([urlOf("in", 2), urlOf("more", 2999)]))).toEqual([true, true]);
    expect((await resumed.stats()).counters["bloom:grown"]).toBe(1);
    await other.quit();
  });

  it("plans the growth once per crawl: a child or a resumed run with the plan stored runs no bloom_stages", async () => {
    const sizing = { expectedUrls: 1_000, falsePositiveRate: 0.01 };
    const started = await Frontier.open(redis, { prefix: "plan:", bloom: sizing });
    const scripts = new Scripts(redis);
    const ran: string[] = [];
    const recording = { run: (name: Parameters<Scripts["run"]>[0], args: Parameters<Scripts["run"]>[1]) => (ran.push(name), scripts.run(name, args)) } as Scripts;
    const keys = new FrontierKeys("plan:");
    expect(await initBloom(redis, recording, keys, sizing)).toEqual(started.bloom);
    expect(ran).toEqual(["bloom_init"]);
    // A child opens without sizing: the stored parameters, no script at all.
    ran.length = 0;
    expect(await initBloom(redis, recording, keys)).toEqual(started.bloom);
    expect(ran).toEqual([]);
    // Growth state missing (a filter from before growth): planned again.
    await redis.del("plan:bf:grow");
    expect(await initBloom(redis, recording, keys, sizing)).toEqual(started.bloom);
    expect(ran).toEqual(["bloom_init", "bloom_stages"]);
    expect(await redis.exists("plan:bf:grow")).toBe(1);
  });

  it("plans stages at growing size and tightening rate", () => {
    const st = bloomStages({ n: 1000, p: 0.01, m: 9586, k: 7 });
    expect(st[1]!.n).toBe(2000);
    expect(st[1]!.p).toBeCloseTo(0.001, 10);
    expect(st[1]!.k).toBe(10);
    expect(st.length).toBe(8);
    expect(BLOOM_WARN_RATIO).toBe(1.2);
    // Blocked: every stage sized by the blocked rate, later stages in bigger blocks.
    const b = bloomStages({ n: 1_000_000, p: 0.01, m: 10_182_400, k: 6, blockBits: 256 });
    expect(b[0]!.blockBits).toBe(256);
    expect(b[1]!.blockBits).toBe(2048);
    expect(b[1]!.m % 2048).toBe(0);
    for (const st of b) expect(blockedFalsePositiveRate(st.n, st.m, st.k, st.blockBits!)).toBeLessThanOrEqual(st.p);
    // ... and stage 1 within 6% of the classic filter's bits per URL.
    expect(b[1]!.m / b[1]!.n).toBeLessThan(1.06 * (-Math.log(0.001) / Math.LN2 ** 2));
  });
});
