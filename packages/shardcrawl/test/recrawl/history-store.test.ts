// Per-URL re-crawl history in a real redis-server: the binary record round-trips, visits update
// the change history and the metrics in one step, stale writers are refused, and the bytes per
// URL stay small.
import fc from "fast-check";
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { Scripts } from "../../src/frontier/index.js";
import { useRedis } from "../../../../test/harness/redis.js";
import {
  BUCKETS, DAY_MS, RecrawlHistoryStore, decodeHistory, decodeRecord, emptyHistory, encodeHistoryV2, encodeRecord, estimateRate, observe,
  pathKey, priorAround, type UrlHistory,
} from "../../src/schedule/recrawl/index.js";

let redis: Redis;
let n = 0;
const store = () => new RecrawlHistoryStore(redis, `t${++n}:`, 1000);
const T0 = Date.UTC(2025, 0, 1);
const hex = (i: number) => i.toString(16).padStart(16, "0");

useRedis((server) => {
  redis = server.client();
});

describe("history record codec", () => {
  it("round-trips every field (bucket means within 1%) and rejects damaged records", () => {
    fc.assert(fc.property(
      fc.array(fc.tuple(fc.double({ min: 1e-4, max: 400, noNaN: true }), fc.boolean()), { maxLength: 300 }),
      fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
      fc.string({ maxLength: 80 }),
      fc.constantFrom(0, 2, 3, 7),
      fc.constantFrom(1, 1.5),
      fc.boolean(),
      (obs, etag, path, tier, cost, lm) => {
        const h = emptyHistory();
        for (const [t, c] of obs) observe(h, t, c);
        const u: UrlHistory = { lastVisitMs: T0 + 5000, ...(lm ? { lastModifiedMs: T0 - 86_400_000 } : {}), etag: etag?.replace(/[^\x20-\x7e]/g, ""), etagChurns: true, digest: hex(obs.length), tier, cost, history: h, dueSec: T0 / 1000 + 77 };
        // Every format is read: 3 (with the path) and 2 (keyed by the path, from older nodes).
        const r = decodeRecord(encodeRecord(u, "/" + path));
        expect(r.path).toBe("/" + path);
        for (const d of [r.history, decodeHistory(encodeHistoryV2(u))]) {
        expect(d.digest).toBe(u.digest);
        expect(d.lastVisitMs).toBe(u.lastVisitMs);
        expect(d.lastModifiedMs).toBe(u.lastModifiedMs);
        expect(d.dueSec).toBe(u.dueSec);
        expect(d.digest).toBe(u.digest);
        expect(d.lastVisitMs).toBe(u.lastVisitMs);
        expect(d.etag ?? "").toBe(u.etag ?? "");
        expect([d.tier, d.cost, d.etagChurns]).toEqual([tier, cost, true]);
        expect(d.history.observations).toBe(h.observations);
        expect(d.history.changes).toBe(h.changes);
        expect(Math.abs(d.history.unchangedDays - h.unchangedDays)).toBeLessThanOrEqual(5e-4 * h.unchangedDays + 1e-6);
        for (let k = 0; k < BUCKETS; k++) {
          expect(d.history.changedCount[k]).toBe(h.changedCount[k]);
          if (h.changedCount[k]) expect(Math.abs(d.history.changedDays[k]! / h.changedDays[k]! - 1)).toBeLessThan(0.01);
        }
        }
      }), { numRuns: 100 });
    const good = encodeRecord({ lastVisitMs: T0, etagChurns: false, digest: hex(1), tier: 0, cost: 1, history: emptyHistory() }, "/a");
    expect(() => decodeHistory(good.subarray(0, 20))).toThrow(/too short|ends early/);
    const bad = Buffer.from(good);
    bad[0] = 9;
    expect(() => decodeHistory(bad)).toThrow(/unknown record format 9/);
    expect(() => encodeRecord({ lastVisitMs: T0, etagChurns: false, digest: "xyz", tier: 0, cost: 1, history: emptyHistory() }, "/")).toThrow(/16 hex/);
  });
  it("halves an overfull history instead of overflowing a counter", () => {
    const h = emptyHistory();
    for (let i = 0; i < 600; i++) observe(h, 1, true);
    const d = decodeHistory(encodeRecord({ lastVisitMs: T0, etagChurns: false, digest: hex(2), tier: 0, cost: 1, history: h }, "/x"));
    expect(d.history.changes).toBeLessThanOrEqual(255);
    expect(d.history.changes).toBeGreaterThan(100);
    expect(d.history.changedDays.reduce((a, b) => a + b, 0) / d.history.changes).toBeCloseTo(1, 2);
  });
});

const h1 = (): UrlHistory => ({ lastVisitMs: T0, etagChurns: false, digest: hex(1), tier: 1, cost: 1, history: emptyHistory() });

describe("history store (real redis-server)", () => {
  it("records visits: first visit, unchanged, changed, 304; metrics per host and node", async () => {
    const s = store();
    const url = "https://a.test/p?id=1";
    const v = { tier: 1, cost: 1 };
    expect((await s.recordVisit(url, { ...v, atMs: T0, status: 200, bytes: 1000, digest: hex(1), etag: '"e1"' })).changed).toBeNull();
    expect((await s.recordVisit(url, { ...v, atMs: T0 + DAY_MS, status: 200, bytes: 1000, digest: hex(1), etag: '"e1"', evidence: "ignored" })).changed).toBe(false);
    expect((await s.recordVisit(url, { ...v, atMs: T0 + 2 * DAY_MS, status: 200, bytes: 1200, digest: hex(2), etag: '"e2"' })).changed).toBe(true);
    const r = await s.recordVisit(url, { ...v, atMs: T0 + 3 * DAY_MS, status: 304, bytes: 0, evidence: "honoured" });
    expect(r.changed).toBe(false);
    const stored = await s.get(url);
    expect(stored?.digest).toBe(hex(2));
    expect(stored?.etag).toBe('"e2"');
    expect(stored?.history).toMatchObject({ observations: 3, changes: 1 });
    expect(stored?.history.unchangedDays).toBeCloseTo(2, 2); // stored on a log scale, 0.04% apart
    await s.recordVisit("https://b.test/", { ...v, atMs: T0, status: 200, bytes: 500, digest: hex(3) });
    const host = await s.metrics("a.test");
    expect(host).toMatchObject({ fetches: 4, changes: 1, unchanged: 2, notModified: 1, bytes: 3200, fetchesPerChange: 4, bytesPerChange: 3200, validators: { honoured: 1, ignored: 1, churningEtag: 0 } });
    expect(host.notModifiedShare).toBe(0.25);
    expect((await s.metrics()).fetches).toBe(5);
    // the outcome stream the node's scheduler learns from
    const out = await s.outcomes();
    expect(out.map((o) => o.changed)).toEqual([null, false, true, false, null]);
    expect(out[2]).toMatchObject({ url, atMs: T0 + 2 * DAY_MS });
    expect(await s.outcomes(out[3]!.id)).toHaveLength(1);
    await expect(s.recordVisit("https://a.test/new", { ...v, atMs: T0, status: 304, bytes: 0 })).rejects.toThrow(/no stored copy/);
  });

  it("the stored history gives the same rate estimate as the in-memory one", async () => {
    const s = store();
    const mem = emptyHistory();
    let t = T0;
    let version = 0;
    let rand = 12345;
    const next = () => ((rand = (rand * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
    await s.recordVisit("https://c.test/x", { atMs: t, status: 200, bytes: 10, digest: hex(version), tier: 0, cost: 1 });
    for (let i = 0; i < 60; i++) {
      const dt = (0.2 + 2 * next()) * DAY_MS;
      const changed = next() < -Math.expm1(-0.7 * (dt / DAY_MS));
      if (changed) version++;
      t += Math.round(dt / 1000) * 1000;
      observe(mem, Math.round(dt / 1000) * 1000 / DAY_MS, changed);
      await s.recordVisit("https://c.test/x", { atMs: t, status: 200, bytes: 10, digest: hex(version), tier: 0, cost: 1 });
    }
    const stored = (await s.get("https://c.test/x"))!;
    const prior = priorAround(0.5, 1.3);
    expect(Math.abs(estimateRate(stored.history, prior) / estimateRate(mem, prior) - 1)).toBeLessThan(0.01);
    let count = 0;
    for await (const [path] of s.scanHost("c.test")) if (path === "/x") count++;
    expect(count).toBe(1);
  });

  it("refuses a stale writer (compare-and-set) and never counts a refused visit", async () => {
    const s = store();
    const url = "https://d.test/x";
    await s.recordVisit(url, { atMs: T0, status: 200, bytes: 1, digest: hex(1), tier: 0, cost: 1 });
    // Two writers at once: both land, one after the other (the loser re-reads and retries).
    await Promise.all([
      s.recordVisit(url, { atMs: T0 + DAY_MS, status: 200, bytes: 1, digest: hex(1), tier: 0, cost: 1 }),
      s.recordVisit(url, { atMs: T0 + 2 * DAY_MS, status: 200, bytes: 1, digest: hex(2), tier: 0, cost: 1 }),
    ]);
    const h = (await s.get(url))!;
    expect(h.history.observations).toBe(2);
    // A writer holding an outdated read is refused by the script and changes nothing.
    const prefix = `t${n}:`;
    const res = await new Scripts(redis).runWithKeys("record_visit", [`${prefix}rp:d.test`, `${prefix}rm:d.test`, `${prefix}rm`, `${prefix}rv`, `${prefix}rh:d.test`], [pathKey("/x"), encodeRecord({ ...h, lastVisitMs: T0 + 9 * DAY_MS }, "/x"), Math.round(T0 / 1000) * 256, 1000, url, "1", T0 + 9 * DAY_MS, 1, "/x", "fetches", 1]);
    expect(res).toBe(0);
    expect((await s.metrics("d.test")).fetches).toBe(3);
    expect((await s.get(url))!.lastVisitMs).toBe(h.lastVisitMs);
    expect(await s.outcomes()).toHaveLength(3);
  });

  it("bytes per URL: measured with MEMORY USAGE for a host of 1,000 URLs", async () => {
    const host = "www.example-shop.test";
    n++;
    const urls = Array.from({ length: 1000 }, (_, i) => `https://${host}/products/item-${i}-blue-cotton.html`);
    const write = async (prefix: string) => {
      const st = new RecrawlHistoryStore(redis, prefix);
      for (const [i, u] of urls.entries()) await st.recordVisit(u, { atMs: T0 + i, status: 200, bytes: 1, digest: hex(i), etag: `"${(i * 7919).toString(36)}-${i.toString(36)}"`, tier: 1, cost: 1 });
      return Number(await redis.memory("USAGE", `${prefix}rp:${host}`, "SAMPLES", 0)) / urls.length;
    };
    const defaultConfig = await write(`mem${n}a:`);
    await redis.config("SET", "hash-max-listpack-entries", "4096");
    await redis.config("SET", "hash-max-listpack-value", "128");
    const listpack = await write(`mem${n}b:`);
    await redis.config("SET", "hash-max-listpack-entries", "128");
    await redis.config("SET", "hash-max-listpack-value", "64");
    console.log(`recrawl history: ${defaultConfig.toFixed(1)} bytes/URL (default hash encoding), ${listpack.toFixed(1)} bytes/URL (listpack: hash-max-listpack-value 128, -entries 4096); path ${"/products/item-500-blue-cotton.html".length} B (coded ${encodeRecord(h1(), "/products/item-500-blue-cotton.html").length - encodeRecord(h1(), "").length} B), record ${encodeRecord(h1(), "").length} B + ETag + path`);
    expect(listpack).toBeLessThan(defaultConfig);
    expect(listpack).toBeLessThan(90);
    expect(defaultConfig).toBeLessThan(180);
  });
});
