import { describe, expect, it } from "vitest";
import { DnsCache, DnsLookupError, type LookupAll } from "../../src/fetch/dns-cache.js";
import { DnsStatsReporter } from "../../src/fetch/dns-stats.js";

// A resolver over a fixed table (like /etc/hosts) that counts its calls; unknown names fail ENOTFOUND.
function tableLookup(table: Record<string, string[]>): LookupAll & { calls: string[] } {
  const calls: string[] = [];
  const fn = (async (name: string) => {
    calls.push(name);
    await new Promise((r) => setImmediate(r));
    const addrs = table[name];
    if (!addrs) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${name}`), { code: "ENOTFOUND" });
    return addrs.map((address) => ({ address, family: address.includes(":") ? 6 : 4 }));
  }) as LookupAll & { calls: string[] };
  fn.calls = calls;
  return fn;
}

describe("DnsCache", () => {
  it("caches answers until the TTL passes", async () => {
    let now = 1_000;
    const lookup = tableLookup({ "a.test": ["192.0.2.10", "2001:db8::10"] });
    const cache = new DnsCache({ ttlMs: 5_000, timeoutMs: 1_000, lookup, now: () => now });
    expect(await cache.resolve("a.test")).toEqual(["192.0.2.10", "2001:db8::10"]);
    expect(await cache.resolve("A.TEST")).toEqual(["192.0.2.10", "2001:db8::10"]);
    expect(lookup.calls).toEqual(["a.test"]);
    now += 5_001;
    await cache.resolve("a.test");
    expect(lookup.calls).toEqual(["a.test", "a.test"]);
  });

  it("caches failures for the negative TTL", async () => {
    let now = 0;
    const lookup = tableLookup({});
    const cache = new DnsCache({ ttlMs: 60_000, negativeTtlMs: 1_000, timeoutMs: 1_000, lookup, now: () => now });
    await expect(cache.resolve("gone.test")).rejects.toMatchObject({ name: "DnsLookupError", code: "ENOTFOUND" });
    await expect(cache.resolve("gone.test")).rejects.toBeInstanceOf(DnsLookupError);
    expect(lookup.calls).toHaveLength(1);
    now += 1_001;
    await expect(cache.resolve("gone.test")).rejects.toBeInstanceOf(DnsLookupError);
    expect(lookup.calls).toHaveLength(2);
  });

  it("never caches SERVFAIL, refused or timeouts: the next lookup asks again", async () => {
    let fail = "ESERVFAIL";
    const calls: string[] = [];
    const lookup: LookupAll = (name) => {
      calls.push(name);
      if (fail) return Promise.reject(Object.assign(new Error(`query ${fail} ${name}`), { code: fail }));
      return Promise.resolve([{ address: "192.0.2.30", family: 4 }]);
    };
    const cache = new DnsCache({ ttlMs: 60_000, negativeTtlMs: 60_000, timeoutMs: 1_000, lookup });
    for (const code of ["ESERVFAIL", "ETIMEOUT", "ECONNREFUSED", "EAI_AGAIN"]) {
      fail = code;
      await expect(cache.resolve("flaky.test")).rejects.toMatchObject({ code });
    }
    fail = "";
    expect(await cache.resolve("flaky.test")).toEqual(["192.0.2.30"]);
    expect(calls).toHaveLength(5);
  });

  it("coalesces concurrent lookups of one name", async () => {
    const lookup = tableLookup({ "b.test": ["192.0.2.20"] });
    const cache = new DnsCache({ ttlMs: 1_000, timeoutMs: 1_000, lookup });
    const answers = await Promise.all([cache.resolve("b.test"), cache.resolve("b.test"), cache.resolve("b.test")]);
    expect(answers).toEqual([["192.0.2.20"], ["192.0.2.20"], ["192.0.2.20"]]);
    expect(lookup.calls).toHaveLength(1);
  });

  it("gives up on a lookup that never answers", async () => {
    const never: LookupAll = () => new Promise(() => {});
    const cache = new DnsCache({ ttlMs: 1_000, timeoutMs: 50, lookup: never });
    await expect(cache.resolve("slow.test")).rejects.toMatchObject({ code: "ETIMEOUT" });
  });

  it("answers RFC 6761 special-use names without asking the resolver", async () => {
    const lookup = tableLookup({});
    const cache = new DnsCache({ ttlMs: 1_000, timeoutMs: 1_000, lookup });
    await expect(cache.resolve("no-such-host.invalid")).rejects.toMatchObject({ code: "ENOTFOUND" });
    expect(await cache.resolve("foo.localhost")).toEqual(["127.0.0.1", "::1"]);
    expect(lookup.calls).toEqual([]);
  });

  it("keeps an answer for its record TTL, clamped to the minimum and maximum", async () => {
    let now = 0;
    let ttl = 5;
    const lookup: LookupAll = () => Promise.resolve([{ address: "192.0.2.40", family: 4, ttl }, { address: "192.0.2.41", family: 4, ttl: ttl + 100 }]);
    const cache = new DnsCache({ ttlMs: 60_000, minTtlMs: 2_000, maxTtlMs: 20_000, timeoutMs: 1_000, lookup, now: () => now });
    // How long until the next resolve asks the resolver again (in 500 ms steps).
    const expiry = async (): Promise<number> => {
      const before = cache.lookups;
      await cache.resolve("t.test");
      const start = now;
      while (cache.lookups === before + 1) {
        now += 500;
        await cache.resolve("t.test");
      }
      return now - start;
    };
    expect(await expiry()).toBe(5_000); // the shortest record TTL (5 s) counts, not the fixed 60 s
    ttl = 0;
    now += 100_000;
    expect(await expiry()).toBe(2_000); // clamped up to 2 s
    ttl = 86_400;
    now += 100_000;
    expect(await expiry()).toBe(20_000); // clamped down to 20 s
  });

  it("bounds resolver calls in flight, shares one call per name and fails as transient when the queue is full", async () => {
    const pending = new Map<string, () => void>();
    let active = 0;
    let maxActive = 0;
    const lookup: LookupAll = (name) => {
      active++;
      maxActive = Math.max(maxActive, active);
      return new Promise((resolve) => pending.set(name, () => { active--; resolve([{ address: "192.0.2.50", family: 4 }]); }));
    };
    const cache = new DnsCache({ ttlMs: 60_000, timeoutMs: 5_000, concurrency: 2, maxQueued: 1, lookup });
    const tick = () => new Promise((r) => setImmediate(r));
    const a = cache.resolve("a.test");
    const a2 = cache.resolve("a.test");
    const b = cache.resolve("b.test");
    const c = cache.resolve("c.test");
    await tick();
    expect([...pending.keys()]).toEqual(["a.test", "b.test"]); // c waits for a slot
    expect(cache.queued).toBe(1);
    await expect(cache.resolve("d.test")).rejects.toMatchObject({ code: "EQUEUEFULL" });
    expect(cache.counters.transient).toBe(1);
    pending.get("a.test")?.();
    expect(await a).toEqual(["192.0.2.50"]);
    expect(await a2).toEqual(["192.0.2.50"]);
    await tick();
    expect([...pending.keys()]).toContain("c.test");
    pending.get("b.test")?.();
    pending.get("c.test")?.();
    await Promise.all([b, c]);
    expect(maxActive).toBe(2);
    expect(cache.counters).toMatchObject({ lookups: 4, transient: 1, nxdomain: 0 });
    // The queue emptied: d is looked up now, and a is a cache hit.
    const d = cache.resolve("d.test");
    await tick();
    pending.get("d.test")?.();
    expect(await d).toEqual(["192.0.2.50"]);
    await cache.resolve("a.test");
    expect(cache.counters.hits).toBe(1);
  });

  it("counts lookups, hits and failures by class", async () => {
    const lookup = tableLookup({ "ok.test": ["192.0.2.60"] });
    const cache = new DnsCache({ ttlMs: 60_000, timeoutMs: 1_000, lookup });
    await cache.resolve("ok.test");
    await cache.resolve("ok.test");
    await expect(cache.resolve("gone.test")).rejects.toBeInstanceOf(DnsLookupError);
    await expect(cache.resolve("gone.test")).rejects.toBeInstanceOf(DnsLookupError);
    expect(cache.counters).toMatchObject({ lookups: 2, hits: 2, nxdomain: 1, transient: 0 });
    expect(cache.counters.lookupMs).toBeGreaterThanOrEqual(0);
  });

  it("stays within maxEntries", async () => {
    const lookup = tableLookup({ "1.test": ["192.0.2.1"], "2.test": ["192.0.2.2"], "3.test": ["192.0.2.3"] });
    const cache = new DnsCache({ ttlMs: 60_000, timeoutMs: 1_000, maxEntries: 2, lookup });
    for (const n of ["1.test", "2.test", "3.test"]) await cache.resolve(n);
    expect(cache.size).toBe(2);
    await cache.resolve("1.test"); // evicted first, so looked up again
    expect(lookup.calls.filter((n) => n === "1.test")).toHaveLength(2);
  });
});

describe("DnsStatsReporter", () => {
  it("adds only what moved since the last flush, under the stats-hash fields /metrics reads", async () => {
    const lookup = tableLookup({ "ok.test": ["192.0.2.70"] });
    const cache = new DnsCache({ ttlMs: 60_000, timeoutMs: 1_000, lookup });
    const reporter = new DnsStatsReporter(cache.counters);
    await cache.resolve("ok.test");
    await cache.resolve("ok.test");
    await expect(cache.resolve("gone.test")).rejects.toBeInstanceOf(DnsLookupError);
    const first = new Map(reporter.take());
    expect(first.get("dns:lookups")).toBe(2);
    expect(first.get("dns:hits")).toBe(1);
    expect(first.get("dnsFail:nxdomain")).toBe(1);
    expect(first.has("dnsFail:transient")).toBe(false);
    await cache.resolve("ok.test");
    expect(reporter.take()).toEqual([["dns:hits", 1]]);
    expect(reporter.take()).toEqual([]);
  });
});
