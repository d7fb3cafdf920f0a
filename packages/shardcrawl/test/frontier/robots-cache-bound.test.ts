// The robots.txt cache's byte bound (frontier/robots-cache.ts, lua/robots_set.lua) on a real
// redis-server: past maxBytes the oldest writes are evicted in the same step as the write, the
// charged total stays under the bound, evictions are counted, an evicted origin reads as not
// cached, and expired entries give their bytes back without counting as evictions.
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { Frontier, robotsCacheMaxBytes, DEFAULT_ROBOTS_CACHE_MAX_BYTES } from "../../src/frontier/index.js";
import { sleep } from "./helpers.js";

let redis: Redis;
useRedis((server) => {
  redis = server.client();
});

const body = (i: number) => `User-agent: *\nDisallow: /private-${i}/\n${"Disallow: /x\n".repeat(50)}`;

describe("robots cache byte bound", () => {
  it("evicts the oldest writes past the bound, in the write's own step, and counts them", async () => {
    const f = await Frontier.open(redis, { prefix: "rb1:", bloom: { expectedUrls: 1000, falsePositiveRate: 0.01 } });
    f.robots.maxBytes = 20_000;
    for (let i = 0; i < 100; i++) await f.robots.set(`https://h${i}.test`, { kind: "rules", body: body(i), fetchedAt: i }, 60_000);
    const { bytes, evicted } = await f.robots.usage();
    expect(bytes).toBeGreaterThan(15_000);
    expect(bytes).toBeLessThanOrEqual(20_000);
    expect(evicted).toBeGreaterThan(50);
    // The newest are kept, the oldest are gone (and read as "fetch it again").
    expect(await f.robots.get("https://h99.test")).toMatchObject({ kind: "rules", fetchedAt: 99 });
    expect(await f.robots.get("https://h0.test")).toBeUndefined();
    const kept = (await redis.keys("rb1:robots:*")).length;
    expect(kept).toBe(100 - evicted);
    expect(await redis.hlen("rb1:rcb")).toBe(kept);
    expect(await redis.zcard("rb1:rco")).toBe(kept);
    // The charged bytes are what was stored: the sum of the per-origin charges.
    const charges = Object.values(await redis.hgetall("rb1:rcb")).reduce((a, b) => a + Number(b), 0);
    expect(charges).toBe(bytes);
  });

  it("a rewrite moves an origin to the young end and replaces its charge", async () => {
    const f = await Frontier.open(redis, { prefix: "rb2:", bloom: { expectedUrls: 1000, falsePositiveRate: 0.01 } });
    for (const i of [0, 1, 2]) await f.robots.set(`https://h${i}.test`, { kind: "rules", body: body(i).slice(0, 600), fetchedAt: i }, 60_000);
    const before = (await f.robots.usage()).bytes;
    f.robots.maxBytes = before + 10; // room for these three, not a fourth
    await f.robots.set("https://h0.test", { kind: "rules", body: body(0).slice(0, 600), fetchedAt: 9 }, 60_000);
    expect((await f.robots.usage()).bytes).toBe(before);
    // The next write past the bound evicts h1 (now the oldest), not h0.
    await f.robots.set("https://h3.test", { kind: "rules", body: body(3).slice(0, 600), fetchedAt: 3 }, 60_000);
    expect(await f.robots.get("https://h1.test")).toBeUndefined();
    expect(await f.robots.get("https://h0.test")).toMatchObject({ fetchedAt: 9 });
  });

  it("expired entries give their bytes back without counting as evictions", async () => {
    const f = await Frontier.open(redis, { prefix: "rb3:", bloom: { expectedUrls: 1000, falsePositiveRate: 0.01 } });
    f.robots.maxBytes = 5_000;
    for (let i = 0; i < 5; i++) await f.robots.set(`https://old${i}.test`, { kind: "disallow-all", fetchedAt: i }, 50);
    await sleep(120);
    for (let i = 0; i < 5; i++) await f.robots.set(`https://h${i}.test`, { kind: "rules", body: body(i), fetchedAt: i }, 60_000);
    const { bytes, evicted } = await f.robots.usage();
    expect(bytes).toBeLessThanOrEqual(5_000);
    const live = (await redis.keys("rb3:robots:*")).length;
    expect(evicted).toBe(5 - live);
  });

  it("bounded work per write: one write removes at most 32 entries", async () => {
    const f = await Frontier.open(redis, { prefix: "rb4:", bloom: { expectedUrls: 1000, falsePositiveRate: 0.01 } });
    f.robots.maxBytes = 0; // no bound while filling
    for (let i = 0; i < 100; i++) await f.robots.set(`https://h${i}.test`, { kind: "allow-all", fetchedAt: i }, 60_000);
    f.robots.maxBytes = 1000;
    await f.robots.set("https://new.test", { kind: "allow-all", fetchedAt: 1 }, 60_000);
    expect((await f.robots.usage()).evicted).toBe(32);
  });

  it("stores a long body deflated and reads it back whole; a damaged one reads as not cached", async () => {
    const f = await Frontier.open(redis, { prefix: "rb5:", bloom: { expectedUrls: 1000, falsePositiveRate: 0.01 } });
    const long = `User-agent: *\n${Array.from({ length: 20_000 }, (_, i) => `Disallow: /archive/${i}/\n`).join("")}`;
    await f.robots.set("https://big.test", { kind: "rules", body: long, fetchedAt: 7 }, 60_000, 60_000);
    expect(await f.robots.get("https://big.test")).toEqual({ kind: "rules", body: long, fetchedAt: 7, fresh: expect.any(Number) });
    expect(await f.robots.getLast("https://big.test")).toMatchObject({ body: long });
    const stored = (await redis.get("rb5:robots:https://big.test"))!;
    expect(stored.length).toBeLessThan(long.length / 5);
    await redis.set("rb5:robots:https://bad.test", JSON.stringify({ kind: "rules", z: "bm90IGRlZmxhdGU=", fetchedAt: 1 }));
    expect(await f.robots.get("https://bad.test")).toBeUndefined();
  });

  it("the default bound: 256 MiB, or a quarter of a smaller Redis budget; a flag wins", () => {
    expect(robotsCacheMaxBytes(0)).toBe(DEFAULT_ROBOTS_CACHE_MAX_BYTES);
    expect(robotsCacheMaxBytes(0, 400 * 1024 * 1024)).toBe(100 * 1024 * 1024);
    expect(robotsCacheMaxBytes(0, 64 * 1024 ** 3)).toBe(DEFAULT_ROBOTS_CACHE_MAX_BYTES);
    expect(robotsCacheMaxBytes(12345, 1000)).toBe(12345);
  });
});
