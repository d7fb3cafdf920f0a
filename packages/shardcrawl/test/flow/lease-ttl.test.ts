// Lease TTL from a percentile of fetch times (schedule/lease-ttl.ts): the pure computation, and the
// node-wide sample in a real Redis, shared by several fetchers (each a SharedLeaseTtl on its own
// connection) so that all of them lease with the same TTL.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../../../../test/harness/redis.js";
import { shareFetchTimes } from "../../src/frontier/index.js";
import { LeaseTtl, SharedLeaseTtl, percentileOf, ttlFromSamples, type LeaseTtlSettings } from "../../src/schedule/lease-ttl.js";

const S: LeaseTtlSettings = { percentile: 0.9, headroom: 2, floorMs: 1000, capMs: 60_000, size: 100, minSamples: 10 };
const range = (from: number, n: number, step = 1) => Array.from({ length: n }, (_, i) => from + i * step);

describe("ttlFromSamples", () => {
  it("is the nearest-rank percentile times the headroom, clamped to [floor, cap]; the cap until minSamples", () => {
    expect(percentileOf(range(1, 100), S)).toBe(90);
    expect(ttlFromSamples(range(100, 100, 100), S)).toBe(18_000); // p90 = 9000 ms, x2
    expect(ttlFromSamples(range(1, 100), S)).toBe(1000); // p90 x 2 = 180 ms < floor
    expect(ttlFromSamples(range(1000, 100, 1000), S)).toBe(60_000); // p90 x 2 > cap
    expect(ttlFromSamples(range(1, 9), S)).toBe(60_000);
  });

  it("the local LeaseTtl keeps the newest `size` samples", () => {
    const t = new LeaseTtl({ ...S, size: 10 });
    for (const ms of range(10_000, 10)) t.record(ms);
    for (const ms of range(100, 10)) t.record(ms);
    expect(t.percentileMs()).toBe(108);
  });
});

describe("SharedLeaseTtl (real Redis)", () => {
  let server: TestRedis;
  let a: Redis;
  let b: Redis;
  beforeAll(async () => {
    server = await startRedis();
    a = server.client();
    b = server.client();
  });
  afterAll(async () => {
    a.disconnect();
    b.disconnect();
    await server.stop();
  });

  it("two fetchers with different fetch times compute the same TTL, from the node's capped sample", async () => {
    const fast = new SharedLeaseTtl((batch, size) => shareFetchTimes(a, "t1:fetchtimes", batch, size), S);
    const slow = new SharedLeaseTtl((batch, size) => shareFetchTimes(b, "t1:fetchtimes", batch, size), S);
    for (const ms of range(100, 60)) fast.record(ms); // 100..159 ms
    for (const ms of range(20_000, 20, 100)) slow.record(ms); // 20.0..21.9 s
    await fast.sync();
    await slow.sync();
    await fast.sync(); // fast reads what slow pushed after fast's first sync
    expect(fast.ttlMs()).toBe(slow.ttlMs());
    // p90 of the 80 samples: the 72nd smallest = slow's 12th = 21.1 s, x2 capped at 60 s is 42.2 s.
    expect(slow.percentileMs()).toBe(21_100);
    expect(fast.ttlMs()).toBe(42_200);
    // Alone, the fast fetcher would have leased for the floor: the slow one's fetches matter to it.
    expect(ttlFromSamples(range(100, 60), S)).toBe(1000);
  });

  it("the list stays capped at `size`, newest kept", async () => {
    const t = new SharedLeaseTtl((batch, size) => shareFetchTimes(a, "t2:fetchtimes", batch, size), S);
    for (const ms of range(1, 250)) t.record(ms);
    await t.sync();
    expect(await a.llen("t2:fetchtimes")).toBe(S.size);
    expect(Math.min(...(await a.lrange("t2:fetchtimes", 0, -1)).map(Number))).toBe(151);
    const other = new SharedLeaseTtl((batch, size) => shareFetchTimes(b, "t2:fetchtimes", batch, size), S);
    await other.sync();
    expect(other.percentileMs()).toBe(t.percentileMs());
  });
});
