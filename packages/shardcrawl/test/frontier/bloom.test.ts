// The seen filter in a real Redis: false-positive rate at capacity, no false negatives, several
// segments, parameters that persist and refuse to change. Also prints the hashing cost.
import bloomFilters from "bloom-filters";
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis, type TestRedis } from "../../../../test/harness/redis.js";
import { BLOOM_SCHEME, BLOOM_SCHEME_BLOCKED, BloomHasher, bloomParamsFor, Frontier } from "../../src/frontier/index.js";
import type { DiscoveredLink } from "../../src/shared/types.js";

let server: TestRedis;
let redis: Redis;

useRedis((started) => {
  server = started;
  redis = started.client();
});

const linkOf = (url: string, host: string): DiscoveredLink => ({ url, host, tier: 0, depth: 1, hops: 0 });

async function fill(f: Frontier, count: number, tag: string): Promise<string[]> {
  const urls = Array.from({ length: count }, (_, i) => `https://www.site${i % 997}.test/${tag}/article-${i}.html?ref=${i % 13}`);
  for (let i = 0; i < urls.length; i += 5000) {
    const batch = urls.slice(i, i + 5000).map((u, j) => linkOf(u, `www.site${(i + j) % 997}.test`));
    await f.addLinks(batch, { now: 0 });
  }
  return urls;
}

describe("seen filter", () => {
  it("stays within 1.5x of the configured false-positive rate at capacity (n=200k, p=1%)", async () => {
    const n = 200_000;
    const p = 0.01;
    const f = await Frontier.open(redis, { prefix: "fp:", bloom: { expectedUrls: n, falsePositiveRate: p } });
    const inserted = await fill(f, n, "in");
    const added = (await f.stats()).counters.discovered!;
    // Inserted URLs are never missed (no false negatives).
    const again = await f.mightHaveSeen(inserted.filter((_, i) => i % 10 === 0));
    expect(again.every(Boolean)).toBe(true);
    const fresh = Array.from({ length: n }, (_, i) => `https://www.site${i % 997}.test/out/article-${i}.html?ref=${i % 13}`);
    const hits = (await f.mightHaveSeen(fresh)).filter(Boolean).length;
    const rate = hits / n;
    console.log(`bloom n=${n} p=${p}: m=${f.bloom.m} bits k=${f.bloom.k}; ${n - added} insert-time false positives; measured FP rate ${(rate * 100).toFixed(3)}%`);
    expect(rate).toBeLessThanOrEqual(1.5 * p);
    expect(rate).toBeGreaterThan(0); // a filter at capacity that never errs would mean it is not really that small
  });

  it.each([
    ["blocked", 13], // 10.2 bits per URL: blocks cost bits
    ["classic", 12],
  ] as const)("works across several segments (%s layout)", async (layout, want) => {
    const f = await Frontier.open(redis, { prefix: `seg-${layout}:`, bloom: { expectedUrls: 10_000, falsePositiveRate: 0.01, segmentBits: 8192, layout } });
    const segments = Math.ceil(f.bloom.m / 8192);
    expect(segments).toBe(want);
    for (let i = 0; i < segments; i++) {
      const bits = Math.min(8192, f.bloom.m - i * 8192);
      expect(await redis.strlen(f.keys.bloomSegment(i))).toBe(Math.ceil(bits / 8));
    }
    const inserted = await fill(f, 10_000, "in");
    expect((await f.mightHaveSeen(inserted)).every(Boolean)).toBe(true);
    const fresh = Array.from({ length: 10_000 }, (_, i) => `https://fresh.test/${i}`);
    const rate = (await f.mightHaveSeen(fresh)).filter(Boolean).length / 10_000;
    expect(rate).toBeLessThanOrEqual(0.015);
    // Every segment got bits (positions spread over the whole filter).
    for (let i = 0; i < segments; i++) expect(await redis.bitcount(f.keys.bloomSegment(i))).toBeGreaterThan(0);
  });

  it("stores its parameters on first start, reuses them on resume and refuses different ones", async () => {
    const sizing = { expectedUrls: 50_000, falsePositiveRate: 0.02 };
    const a = await Frontier.open(redis, { prefix: "persist:", bloom: sizing });
    await a.addLinks([linkOf("https://a.test/x", "a.test")]);
    const resumed = await Frontier.open(server.client(), { prefix: "persist:" });
    expect(resumed.bloom).toEqual(a.bloom);
    expect(await resumed.mightHaveSeen(["https://a.test/x", "https://a.test/never"])).toEqual([true, false]);
    await expect(Frontier.open(redis, { prefix: "persist:", bloom: sizing })).resolves.toBeDefined();
    await expect(Frontier.open(redis, { prefix: "persist:", bloom: { ...sizing, falsePositiveRate: 0.01 } })).rejects.toThrow(/refusing/);
    await expect(Frontier.open(redis, { prefix: "persist:", bloom: { ...sizing, seed: 7 } })).rejects.toThrow(/refusing/);
    await expect(Frontier.open(redis, { prefix: "empty:" })).rejects.toThrow(/no parameters stored/);
    // Code that would hash differently than the code that built the filter must not resume it.
    const stored = JSON.parse((await redis.get("persist:bf:params"))!);
    await redis.set("persist:bf:params", JSON.stringify({ ...stored, probe: [1, 2, 3] }));
    await expect(Frontier.open(redis, { prefix: "persist:" })).rejects.toThrow(/hashing differs/);
    await redis.set("persist:bf:params", "{oops");
    await expect(Frontier.open(redis, { prefix: "persist:" })).rejects.toThrow(/not JSON/);
  });

  it("a crawl started with the classic layout resumes with it and keeps answering seen/new", async () => {
    const sizing = { expectedUrls: 5_000, falsePositiveRate: 0.01 };
    const old = await Frontier.open(redis, { prefix: "classic:", bloom: { ...sizing, layout: "classic" } });
    expect(old.bloom.scheme).toBe(BLOOM_SCHEME);
    expect(old.bloom.blockBits).toBeUndefined();
    const first = await fill(old, 2_000, "old");
    // What code before the blocked layout stored: no blockBits field at all.
    expect(JSON.parse((await redis.get("classic:bf:params"))!)).not.toHaveProperty("blockBits");
    // Resumed as a node restarts: the configured sizing names no layout.
    const resumed = await Frontier.open(server.client(), { prefix: "classic:", bloom: sizing });
    expect(resumed.bloom).toEqual(old.bloom);
    expect((await resumed.mightHaveSeen(first)).every(Boolean)).toBe(true);
    const again = await resumed.addLinks(first.slice(0, 500).map((u) => linkOf(u, new URL(u).host)), { now: 0 });
    expect(again.added).toBe(0);
    // New URLs are new, then seen; past capacity the classic filter grows (classic stages).
    const more = Array.from({ length: 5_000 }, (_, i) => `https://more${i % 50}.test/p/${i}`);
    const r = await resumed.addLinks(more.map((u) => linkOf(u, new URL(u).host)), { now: 0 });
    expect(r.added).toBeGreaterThan(4_900);
    expect((await resumed.mightHaveSeen(more)).every(Boolean)).toBe(true);
    expect((await resumed.bloomStatus()).stages).toBe(2);
    expect(await redis.get("classic:bf:plan")).not.toMatch(/,\d+,\d+,\d+,/);
    const never = Array.from({ length: 2_000 }, (_, i) => `https://never.test/${i}`);
    expect((await resumed.mightHaveSeen(never)).filter(Boolean).length).toBeLessThan(60);
    // Asking for the blocked layout explicitly is a different filter: refused.
    await expect(Frontier.open(redis, { prefix: "classic:", bloom: { ...sizing, layout: "blocked" } })).rejects.toThrow(/refusing/);
  });

  it("blocked layout: one read per link, and a seen link writes nothing", async () => {
    const f = await Frontier.open(redis, { prefix: "blk:", bloom: { expectedUrls: 10_000, falsePositiveRate: 0.01 } });
    expect(f.bloom.scheme).toBe(BLOOM_SCHEME_BLOCKED);
    expect(f.bloom.blockBits).toBe(256);
    const calls = async (cmd: string) => Number((/calls=(\d+)/.exec((await redis.info("commandstats")).split("\n").find((l) => l.startsWith(`cmdstat_${cmd}:`)) ?? "") ?? [])[1] ?? 0);
    const links = Array.from({ length: 300 }, (_, i) => linkOf(`https://b${i % 7}.test/x/${i}`, `b${i % 7}.test`));
    const [g0, s0, b0] = [await calls("getrange"), await calls("setrange"), await calls("bitfield")];
    expect((await f.addLinks(links, { now: 0 })).added).toBe(300);
    const [g1, s1] = [await calls("getrange"), await calls("setrange")];
    expect(g1 - g0).toBe(300);
    expect(s1 - s0).toBe(300);
    const r = await f.addLinks(links, { now: 0 });
    expect(r.seen).toBe(300);
    expect(await calls("getrange") - g1).toBe(300);
    expect(await calls("setrange") - s1).toBe(0);
    expect(await calls("bitfield")).toBe(b0);
  });

  it("blocked positions: pinned, all k in one block, uniform over blocks and offsets", () => {
    const params = bloomParamsFor({ expectedUrls: 1_000_000, falsePositiveRate: 0.01 });
    expect([params.m, params.k, params.blockBits]).toEqual([10_177_280, 6, 256]);
    // Pinned: a change here means a resumed crawl would look up the wrong bits.
    expect(new BloomHasher(params).positions("https://www.d1.test/a")).toEqual([9031728, 9031802, 9031779, 9031738, 9031935, 9031873]);
    // k past the 10 offset bytes of one MD5 digest: more rounds, still one block.
    const h = new BloomHasher({ m: 256 * 1000, k: 14, seed: 0x5c0ffee, blockBits: 256 });
    const blocks = new Array<number>(1000).fill(0);
    const offsets = new Array<number>(256).fill(0);
    for (let i = 0; i < 20_000; i++) {
      const pos = h.positions(`https://h${i}.test/p`);
      const b = Math.floor(pos[0]! / 256);
      for (const x of pos) expect(Math.floor(x / 256)).toBe(b);
      blocks[b]!++;
      for (const x of pos) offsets[x - b * 256]!++;
    }
    // 20 URLs per block and 1,094 per offset on average: no block or offset left out or crowded.
    expect(Math.min(...blocks)).toBeGreaterThan(2);
    expect(Math.max(...blocks)).toBeLessThan(50);
    expect(Math.min(...offsets)).toBeGreaterThan(900);
    expect(Math.max(...offsets)).toBeLessThan(1300);
    expect(() => new BloomHasher({ m: 1000, k: 3, seed: 1, blockBits: 256 })).toThrow(/divide/);
    expect(() => bloomParamsFor({ expectedUrls: 1000, falsePositiveRate: 0.01, segmentBits: 1024 })).toThrow(/multiple of 2048/);
  });

  it("hashing cost (printed, not asserted)", async () => {
    const f = await Frontier.open(redis, { prefix: "speed:", bloom: { expectedUrls: 10_000_000, falsePositiveRate: 0.01 } });
    // The filter is allocated up front (m bits over segments).
    expect(await redis.strlen(f.keys.bloomSegment(0))).toBe(Math.ceil(f.bloom.m / 8));
    const urls = Array.from({ length: 200_000 }, (_, i) => `https://www.host${i % 500}.test/section/article-${i}-some-title-words.html?ref=${i % 7}`);
    let sink = 0;
    for (const u of urls.slice(0, 20_000)) sink += f.hasher.positions(u)[0]!; // warm-up
    let t = performance.now();
    for (const u of urls) sink += f.hasher.positions(u)[0]!;
    const ours = ((performance.now() - t) * 1000) / urls.length;
    const lib = new bloomFilters.Hashing();
    t = performance.now();
    for (const u of urls.slice(0, 50_000)) sink += lib.getIndexes(u, f.bloom.m, f.bloom.k, 42)[0]!;
    const theirs = ((performance.now() - t) * 1000) / 50_000;
    console.log(`bloom hashing (k=${f.bloom.k}, m=${f.bloom.m}): md5 + bloom-filters doubleHashing ${ours.toFixed(2)} us/URL; bloom-filters getIndexes (xxhashjs) ${theirs.toFixed(2)} us/URL [${sink > 0}]`);
    expect(sink).toBeGreaterThan(0);
  });
});
