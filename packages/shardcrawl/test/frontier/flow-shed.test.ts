// A bounded frontier against a real redis-server: priority-aware shedding past the per-host and
// total caps (drop and spill), spill to compressed files and re-admission when room frees up,
// the host page budget, the URL filter chain, and the memory governor's total cap.
import { existsSync, mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { Frontier, MemoryGovernor, redisUsedMemory, SpillStore, type FrontierOptions } from "../../src/frontier/index.js";
import { AdmissionCounts, BatchAdmission, buildUrlFilters, filterUrl } from "../../src/admit/index.js";
import { checkInvariants, link } from "./helpers.js";

let redis: Redis;
let n = 0;
const bloom = { expectedUrls: 100_000, falsePositiveRate: 0.001 };

function open(opts: FrontierOptions = {}): Promise<Frontier> {
  return Frontier.open(redis, { prefix: `shed${++n}:`, bloom, delayMs: 0, ...opts });
}

useRedis((server) => {
  redis = server.client();
});

async function queue(f: Frontier, host: string, tier: number): Promise<string[]> {
  return redis.lrange(f.keys.queue(host, tier), 0, -1);
}

describe("priority-aware shedding", () => {
  it("past a host's cap, a better URL replaces the newest of the lowest tier; equal or worse ones are refused", async () => {
    const f = await open({ maxQueuedPerHost: 4 });
    await f.addLinks([link("https://a.test/d1", 2, 5), link("https://a.test/d2", 2, 5), link("https://a.test/m1", 1, 3), link("https://a.test/s1", 0)]);
    const r = await f.addLinks([link("https://a.test/s2", 0), link("https://a.test/d3", 2, 5), link("https://a.test/m2", 1, 3), link("https://a.test/m3", 1, 3)]);
    expect(r).toMatchObject({ added: 2, dropped: 2 });
    expect(await queue(f, "a.test", 0)).toEqual(["/s1", "/s2"]);
    expect(await queue(f, "a.test", 1)).toEqual(["\x03m1", "\x03m2"]); // depth 3 as one leading byte instead of the "/" (element.ts)
    expect(await queue(f, "a.test", 2)).toEqual([]);
    expect((await f.stats()).counters.shed).toBe(2);
    // m3 (tier 1) found only tier-1 URLs left: refused, and its bits stay clear so it can come back.
    expect(await f.mightHaveSeen(["https://a.test/m3", "https://a.test/d3"])).toEqual([false, false]);
    await checkInvariants(redis, f);
  });

  it("past the total cap, sheds the lowest tier of the biggest host for a better URL of another host", async () => {
    const f = await open({ maxQueuedTotal: 150 });
    await f.addLinks(Array.from({ length: 150 }, (_, i) => link(`https://trap.test/x/${i}`, 3, 9)));
    const r = await f.addLinks([link("https://good.test/", 0), link("https://good.test/a", 1, 2), link("https://other.test/deep", 3, 9)]);
    expect(r).toMatchObject({ added: 2, dropped: 1 });
    const s = await f.stats();
    expect(s.queued).toBe(150);
    expect(s.counters.shed).toBe(2);
    expect(s.counters["dropped:frontier-full"]).toBe(1);
    expect((await queue(f, "trap.test", 3)).length).toBe(148);
    await checkInvariants(redis, f);
  });

  it("spills shed URLs to compressed files and re-admits them when there is room", async () => {
    const out = mkdtempSync(join(tmpdir(), "sc-spill-"));
    const f = await open({ maxQueuedPerHost: 100, flow: { shedMode: "spill" } });
    await f.addLinks(Array.from({ length: 100 }, (_, i) => link(`https://s.test/deep/${i}?q=1`, 2, 6)), { now: 0 });
    await f.addLinks(Array.from({ length: 60 }, (_, i) => link(`https://s.test/top${i}`, 0, 1)), { now: 0 });
    expect((await f.stats()).counters.spilled).toBe(60);
    expect(await f.spilledWaiting()).toBe(60);
    const store = new SpillStore(join(out, "spill"), f, { drainBatch: 25, entriesPerFile: 50, readmitBelow: 0.5 });
    let moved = 0;
    for (let m = await store.drain(); m > 0; m = await store.drain()) moved += m;
    expect(moved).toBe(60);
    expect(await f.spilledWaiting()).toBe(0);
    expect(store.files()).toHaveLength(2);
    // No room yet (100 queued, cap 100): nothing comes back.
    await f.setFlow({ totalCap: 100 });
    expect(await store.readmitIfRoom()).toBe(0);
    // Fetch 80 URLs: now there is room, the oldest file comes back, then the next.
    const urls: string[] = [];
    for (let i = 0; i < 80; i++) {
      const { leases } = await f.lease(1, 1000 + i);
      urls.push(leases[0]!.url);
      await f.fail(leases[0]!, "other", 1000 + i);
    }
    expect(await store.readmitIfRoom()).toBe(50);
    expect(await store.readmitIfRoom()).toBe(0); // 70 queued >= 50% of 100
    await f.setFlow({ totalCap: null });
    expect(await store.readmitIfRoom()).toBe(10);
    store.close();
    expect(readdirSync(join(out, "spill"))).toEqual([]);
    expect((await f.stats()).counters.readmitted).toBe(60);
    // Re-admitted URLs are leased like any other: every URL comes out exactly once overall.
    for (let i = 0; ; i++) {
      const { leases } = await f.lease(1, 5000 + i);
      if (leases.length === 0) break;
      urls.push(leases[0]!.url);
      await f.fail(leases[0]!, "other", 5000 + i);
    }
    expect(urls).toHaveLength(160);
    expect(new Set(urls).size).toBe(160);
    expect(urls.filter((u) => u.includes("/deep/"))).toHaveLength(100);
    await checkInvariants(redis, f);
    expect(existsSync(out)).toBe(true);
  });
});

describe("spill crash safety", () => {
  // A "crash" is a crashPoint that throws between two steps; the next SpillStore on the same
  // folder and Redis is the restarted process. Every shed URL must come back exactly once.
  async function spilled(f: Frontier, n: number): Promise<void> {
    // The host's cap is n: n better URLs shed the n deep ones.
    await f.addLinks(Array.from({ length: n }, (_, i) => link(`https://c.test/deep/${i}?q=1`, 2, 6)), { now: 0 });
    await f.addLinks(Array.from({ length: n }, (_, i) => link(`https://c.test/top${i}`, 0, 1)), { now: 0 });
    expect(await f.spilledWaiting()).toBe(n);
  }
  // Re-admission runs on the real clock (SpillStore), so leasing does too.
  let clock = 0;
  async function leaseAll(f: Frontier): Promise<string[]> {
    const urls: string[] = [];
    for (;;) {
      clock = Math.max(clock + 1, Date.now());
      const { leases } = await f.lease(1, clock);
      if (leases.length === 0) return urls;
      urls.push(leases[0]!.url);
      await f.fail(leases[0]!, "other", clock);
    }
  }
  const crashAt = (step: string) => (s: string) => {
    if (s === step) throw new Error(`simulated crash at ${s}`);
  };

  it("a crash between re-admitting a batch and deleting the file admits no URL twice", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "sc-spill-crash-")), "spill");
    const f = await open({ maxQueuedPerHost: 50, flow: { shedMode: "spill" } });
    await spilled(f, 50);
    const first = new SpillStore(dir, f, { drainBatch: 100, entriesPerFile: 100, readmitBelow: 1, readmitBatch: 20, crashPoint: crashAt("readmit-batch") });
    expect(await first.drain()).toBe(50);
    const before = await leaseAll(f); // the 50 queued URLs: room for re-admission
    await f.setFlow({ totalCap: 1000 });
    await expect(first.readmitIfRoom()).rejects.toThrow(/simulated crash/);
    first.close();
    expect((await f.stats()).counters.readmitted).toBe(20);
    expect(await f.spillPosition(first.files()[0]!)).toBe(20);
    const second = new SpillStore(dir, f, { drainBatch: 100, entriesPerFile: 100, readmitBelow: 1, readmitBatch: 20 });
    expect(await second.readmitIfRoom()).toBe(30);
    expect(second.files()).toEqual([]);
    expect(await f.spilledOnDisk()).toBe(0);
    const after = await leaseAll(f);
    expect(after).toHaveLength(50);
    expect(new Set([...before, ...after]).size).toBe(100);
    expect(await redis.hlen(f.keys.spillPos)).toBe(0);
    await checkInvariants(redis, f);
  });

  it("a crash between writing a spill member and removing its entries from Redis puts no entry on disk twice", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "sc-spill-crash-")), "spill");
    const f = await open({ maxQueuedPerHost: 30, flow: { shedMode: "spill" } });
    await spilled(f, 30);
    const first = new SpillStore(dir, f, { drainBatch: 10, entriesPerFile: 100, readmitBelow: 1 });
    expect(await first.drain()).toBe(10);
    const crashing = new SpillStore(dir, f, { drainBatch: 10, entriesPerFile: 100, readmitBelow: 1, crashPoint: crashAt("drain-written") });
    await expect(crashing.drain()).rejects.toThrow(/simulated crash/);
    crashing.close();
    first.close();
    expect(await f.spilledWaiting()).toBe(20);
    const second = new SpillStore(dir, f, { drainBatch: 100, entriesPerFile: 100, readmitBelow: 1 });
    expect(await second.drain()).toBe(20);
    expect(await f.spilledOnDisk()).toBe(30);
    const before = await leaseAll(f);
    await f.setFlow({ totalCap: 1000 });
    let back = 0;
    for (let n = await second.readmitIfRoom(); n > 0; n = await second.readmitIfRoom()) back += n;
    second.close();
    expect(back).toBe(30);
    const after = await leaseAll(f);
    expect(after).toHaveLength(30);
    expect(new Set([...before, ...after]).size).toBe(60);
    await checkInvariants(redis, f);
  });
});

describe("spider-trap defences", () => {
  it("a host past its page budget admits nothing more", async () => {
    const f = await open({ flow: { hostPageBudget: 5 } });
    const r = await f.addLinks(Array.from({ length: 8 }, (_, i) => link(`https://b.test/${i}`)), { now: 0 });
    expect(r).toMatchObject({ added: 5, dropped: 3 });
    const l = (await f.lease(1, 1)).leases[0]!;
    await f.fail(l, "other", 1);
    expect((await f.addLinks([link("https://b.test/new")], { now: 2 })).added).toBe(0);
    expect((await f.stats()).counters["dropped:host-budget"]).toBe(4);
  });

  it("the URL filter chain refuses deep, looping and parameter-heavy URLs and counts why", async () => {
    const chain = buildUrlFilters(["max-path-depth=4", "max-repeated-segment=2", "max-query-params=3", "max-url-length=60"]);
    expect(filterUrl(chain, "https://a.test/a/b/c/d")).toBeUndefined();
    expect(filterUrl(chain, "https://a.test/a/b/c/d/e")).toBe("path-depth");
    expect(filterUrl(chain, "https://a.test/x/y/x/x")).toBe("repeated-segment");
    expect(filterUrl(chain, "https://a.test/p?a=1&b=2&c=3&d=4")).toBe("query-params");
    expect(filterUrl(chain, `https://a.test/${"z".repeat(60)}`)).toBe("url-length");
    expect(() => buildUrlFilters(["max-depth=3"])).toThrow(/unknown filter/);
    expect(() => buildUrlFilters(["max-path-depth"])).toThrow(/name=number/);
    // The admission chain runs them before the frontier, and counts its refusals by reason.
    const f = await open({});
    const admission = new BatchAdmission({ urlFilters: ["max-path-depth=4", "max-query-params=3"], counts: new AdmissionCounts() });
    const { own, refused } = await admission.admit([link("https://c.test/ok"), link("https://c.test/1/2/3/4/5/6"), link("https://c.test/?a&b&c&d")]);
    expect(refused).toBe(2);
    expect(await f.addLinks(own)).toMatchObject({ added: 1 });
    await admission.writeCounts(f);
    const s = await f.stats();
    expect(s.counters["filtered:path-depth"]).toBe(1);
    expect(s.counters["filtered:query-params"]).toBe(1);
  });
});

describe("memory governor", () => {
  it("lowers the total cap below what is queued when Redis nears its budget, and lifts it when memory falls", async () => {
    const f = await open({ maxQueuedTotal: 1_000_000 });
    await f.addLinks(Array.from({ length: 5000 }, (_, i) => link(`https://m${i % 50}.test/page/${i}`)));
    // Between the high mark and the last 5% of the budget: 10% below what is queued, never below 1,000.
    // (Redis's own memory moves by a few KiB between ticks: each tick gets a budget 10% above it.)
    const near = async () => new MemoryGovernor(f, { budgetBytes: Math.round((await redisUsedMemory(f)) / 0.9), high: 0.85, low: 0.7 }).tick();
    const r = await near();
    expect(r.action).toBe("lowered");
    expect(r.totalCap).toBe(4500);
    for (let i = 0; i < 30; i++) await near();
    expect((await f.flowState()).totalCap).toBe(1000);
    expect((await f.addLinks([link("https://new.test/")])).dropped).toBe(1);
    // Past it (here far past, over the budget itself): the cap halves each tick down to 10 URLs.
    const tight = new MemoryGovernor(f, { budgetBytes: 1024, high: 0.85, low: 0.7 });
    expect((await tight.tick()).totalCap).toBe(500);
    for (let i = 0; i < 30; i++) await tight.tick();
    expect((await f.flowState()).totalCap).toBe(10);
    const roomy = new MemoryGovernor(f, { budgetBytes: 1e12, high: 0.85, low: 0.7 });
    expect((await roomy.tick()).action).toBe("raised");
    for (let i = 0; i < 60 && (await f.flowState()).totalCap !== undefined; i++) await roomy.tick();
    expect((await f.flowState()).totalCap).toBeUndefined();
    expect((await f.addLinks([link("https://new.test/")])).added).toBe(1);
  });

  it("holds leasing for a tick when a rise would pass the budget by the next tick, never two ticks running", async () => {
    const f = await open({ maxQueuedTotal: 1_000_000 });
    const used = await redisUsedMemory(f);
    // The budget sits just above the first reading; then ~200 KB arrive before the next tick.
    const g = new MemoryGovernor(f, { budgetBytes: Math.round(used / 0.97), high: 0.85, low: 0.7 });
    expect((await g.tick()).held).toBeUndefined(); // no rise seen yet
    await f.addLinks(Array.from({ length: 2000 }, (_, i) => link(`https://hold${i % 20}.test/a/long/enough/path/${i}`)));
    const r = await g.tick();
    expect(r.held).toBe(true);
    expect(Number(await f.redis.hget(f.keys.flow, "mem"))).toBeGreaterThan(Date.now());
    expect((await f.lease(8)).blocked).toBe("memory");
    expect((await g.tick()).held).toBeUndefined(); // the crawl always moves between holds
  });
});
