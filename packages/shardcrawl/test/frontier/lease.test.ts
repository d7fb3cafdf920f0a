// Leasing against a real redis-server: order, FIFO within tiers, politeness over real time,
// concurrency, host independence, budget, parse-queue back-pressure, requeue and host limits.
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { Frontier, type FrontierOptions } from "../../src/frontier/index.js";
import { checkInvariants, link, page, sleep } from "./helpers.js";

let redis: Redis;
let n = 0;
const bloom = { expectedUrls: 10_000, falsePositiveRate: 0.001 };

/** A fresh crawl (own prefix) on the shared server. */
function open(opts: FrontierOptions = {}): Promise<Frontier> {
  return Frontier.open(redis, { prefix: `t${++n}:`, bloom, ...opts });
}

useRedis((server) => {
  redis = server.client();
});

describe("lease order", () => {
  it("serves the lowest tier first, FIFO within a tier, one URL per host per call", async () => {
    const f = await open({ delayMs: 0 });
    await f.addLinks([link("https://a.test/t2-1", 2), link("https://a.test/t2-2", 2), link("https://a.test/t0-1", 0), link("https://a.test/t0-2", 0, 3)], { now: 1000 });
    const got: string[] = [];
    for (let i = 0; i < 4; i++) {
      const { leases } = await f.lease(10, 2000 + i);
      expect(leases).toHaveLength(1);
      got.push(leases[0]!.url);
      await f.fail(leases[0]!, "other", 2000 + i);
    }
    expect(got).toEqual(["https://a.test/t0-1", "https://a.test/t0-2", "https://a.test/t2-1", "https://a.test/t2-2"]);
    await checkInvariants(redis, f);
  });

  it("leases hosts by oldest ready time and never before their time", async () => {
    const f = await open({ delayMs: 0 });
    await f.addLinks([link("https://c.test/1")], { now: 3000 });
    await f.addLinks([link("https://a.test/1")], { now: 1000 });
    await f.addLinks([link("https://b.test/1")], { now: 2000 });
    expect((await f.lease(10, 999)).leases).toEqual([]);
    expect((await f.lease(10, 1500)).leases.map((l) => l.host)).toEqual(["a.test"]);
    expect((await f.lease(10, 5000)).leases.map((l) => l.host)).toEqual(["b.test", "c.test"]);
    await checkInvariants(redis, f);
  });

  it("returns full lease data: url, tier, depth, hops, attempt, expiry", async () => {
    const f = await open({ delayMs: 0, leaseTtlMs: 5000 });
    await f.addLinks([link("https://a.test/p?q=1", 1, 4, 2), { url: "http://other.test:81/x", host: "a.test", tier: 0, depth: 0, hops: 0 }], { now: 1 });
    const a = (await f.lease(1, 10)).leases[0]!;
    // The second link's origin differs from the host's stored origin: it is stored in full.
    expect(a).toMatchObject({ url: "http://other.test:81/x", host: "a.test", tier: 0, depth: 0, hops: 0, attempt: 0, expiresAt: 5010 });
    await f.fail(a, "other", 10);
    const b = (await f.lease(1, 20)).leases[0]!;
    expect(b).toMatchObject({ url: "https://a.test/p?q=1", host: "a.test", tier: 1, depth: 4, hops: 2, attempt: 0 });
    expect(await redis.hget(f.keys.host("a.test"), "o")).toBe("https://a.test");
  });
});

describe("one call, many leases", () => {
  it("records every lease of a 2,500-lease call (distinct ids, the owner's list, expiries, lease data) and completes each", async () => {
    const f = await open({ delayMs: 0 });
    const hosts = 2500;
    for (let i = 0; i < hosts; i += 500) {
      await f.addLinks(Array.from({ length: 500 }, (_, j) => link(`https://m${i + j}.test/p`)), { now: 1000 });
    }
    const { leases } = await f.lease(hosts, 2000, 60_000, "f0.1");
    expect(leases).toHaveLength(hosts);
    expect(new Set(leases.map((l) => l.id)).size).toBe(hosts);
    expect(leases.every((l) => l.id.endsWith("@f0.1") && l.expiresAt === 62_000)).toBe(true);
    expect(new Set(leases.map((l) => l.url)).size).toBe(hosts);
    expect(await redis.scard(f.keys.leaseOwner("f0.1"))).toBe(hosts);
    expect(await redis.zcard(f.keys.leases)).toBe(hosts);
    const data = await redis.hmget(f.keys.leaseData, ...leases.slice(0, 3).map((l) => l.id));
    expect(data.map((d) => d!.split("\t")[0])).toEqual(leases.slice(0, 3).map((l) => l.host));
    for (const l of leases) await f.completeWithPage(l, page(l.url), 3000);
    expect(await redis.scard(f.keys.leaseOwner("f0.1"))).toBe(0);
    expect(await redis.zcard(f.keys.leases)).toBe(0);
    await checkInvariants(redis, f);
  });
});

describe("politeness", () => {
  it("never starts a request to a host before delay after the previous one ended (real time, c=1)", async () => {
    const delay = 60;
    const f = await open({ delayMs: delay });
    const hosts = ["h1.test", "h2.test", "h3.test", "h4.test"];
    const links = hosts.flatMap((h) => Array.from({ length: 8 }, (_, i) => link(`https://${h}/p${i}`)));
    await f.addLinks(links);
    const log = new Map<string, Array<{ start: number; end: number }>>();
    const inFlight = new Map<string, number>();
    let maxInFlight = 0;
    // Three concurrent fetch loops, each fetch taking a random 0-25 ms.
    const worker = async () => {
      for (;;) {
        const start = Date.now();
        const { leases } = await f.lease(3, start);
        if (leases.length === 0) {
          if ((await f.stats()).queued === 0) return;
          await sleep(5);
          continue;
        }
        await Promise.all(leases.map(async (l) => {
          inFlight.set(l.host, (inFlight.get(l.host) ?? 0) + 1);
          maxInFlight = Math.max(maxInFlight, inFlight.get(l.host)!);
          await sleep(Math.floor(Math.random() * 25));
          inFlight.set(l.host, inFlight.get(l.host)! - 1);
          const end = Date.now();
          await f.completeWithPage(l, page(l.url), end);
          const entries = log.get(l.host) ?? [];
          entries.push({ start, end });
          log.set(l.host, entries);
        }));
      }
    };
    await Promise.all([worker(), worker(), worker()]);
    expect(maxInFlight).toBe(1);
    for (const h of hosts) {
      const entries = log.get(h)!.sort((a, b) => a.start - b.start);
      expect(entries).toHaveLength(8);
      for (let i = 1; i < entries.length; i++) {
        expect(entries[i]!.start - entries[i - 1]!.end, `${h} gap ${i}`).toBeGreaterThanOrEqual(delay);
      }
    }
    await checkInvariants(redis, f);
  });

  it("never exceeds a host's concurrency and spaces starts by delay/c (c=3)", async () => {
    const delay = 90;
    const c = 3;
    const f = await open({ delayMs: delay, hostConcurrency: c });
    // Fetches (150-250 ms) outlast c starts (c * delay/c = 90 ms), so a missing slot check would show.
    await f.addLinks(Array.from({ length: 15 }, (_, i) => link(`https://c.test/p${i}`)));
    const starts: number[] = [];
    let inFlight = 0;
    let maxInFlight = 0;
    const pending: Array<Promise<void>> = [];
    while (starts.length < 15) {
      const now = Date.now();
      const { leases } = await f.lease(10, now);
      for (const l of leases) {
        starts.push(now);
        inFlight++;
        maxInFlight = Math.max(maxInFlight, inFlight);
        pending.push((async () => {
          await sleep(150 + Math.floor(Math.random() * 100));
          inFlight--;
          await f.completeWithPage(l, page(l.url), Date.now());
        })());
      }
      await sleep(3);
    }
    await Promise.all(pending);
    expect(maxInFlight).toBeLessThanOrEqual(c);
    // No more than c starts within any window of `delay` ms.
    for (let i = c; i < starts.length; i++) expect(starts[i]! - starts[i - c]!).toBeGreaterThanOrEqual(delay);
    await checkInvariants(redis, f, c);
  });

  it("a host with a long delay does not hold back other hosts", async () => {
    const f = await open({ delayMs: 0 });
    await f.addLinks(Array.from({ length: 20 }, (_, i) => link(`https://slow.test/p${i}`)), { now: 1000 });
    await f.setHostLimits("slow.test", { delayMs: 3_600_000 }, 1000);
    await f.addLinks(["a", "b"].flatMap((h) => Array.from({ length: 20 }, (_, i) => link(`https://${h}.test/p${i}`))), { now: 1001 });
    const perHost = new Map<string, number>();
    for (let t = 2000; t < 2050; t++) {
      const { leases } = await f.lease(10, t);
      for (const l of leases) {
        perHost.set(l.host, (perHost.get(l.host) ?? 0) + 1);
        await f.completeWithPage(l, page(l.url), t);
      }
    }
    expect(perHost.get("slow.test")).toBe(1);
    expect(perHost.get("a.test")).toBe(20);
    expect(perHost.get("b.test")).toBe(20);
    const s = await f.stats(2050);
    expect(s.queued).toBe(19);
    expect(s.readyHosts).toBe(1);
    expect(s.dueHosts).toBe(0);
    expect((await f.hostState("slow.test"))!.nextAt).toBe(2000 + 3_600_000);
  });

  it("measures the gap from the END of the response, with the larger of default and override", async () => {
    const f = await open({ delayMs: 100 });
    await f.addLinks([link("https://a.test/1"), link("https://a.test/2"), link("https://a.test/3")], { now: 0 });
    const l1 = (await f.lease(1, 10)).leases[0]!;
    await f.completeWithPage(l1, page(l1.url), 500);
    expect((await f.lease(1, 599)).leases).toEqual([]);
    const l2 = (await f.lease(1, 600)).leases[0]!;
    await f.setHostLimits("a.test", { delayMs: 250 }, 600);
    await f.completeWithPage(l2, page(l2.url), 700);
    expect((await f.lease(1, 949)).leases).toEqual([]);
    expect((await f.lease(1, 950)).leases).toHaveLength(1);
  });
});

describe("limits", () => {
  it("stops leasing at the page budget (fetched + failed + leased)", async () => {
    const f = await open({ delayMs: 0, maxPages: 5 });
    await f.addLinks(Array.from({ length: 10 }, (_, i) => link(`https://h${i}.test/`)), { now: 0 });
    const a = await f.lease(3, 1);
    expect(a.leases).toHaveLength(3);
    const b = await f.lease(10, 2);
    expect(b.leases).toHaveLength(2);
    expect(await f.lease(10, 3)).toEqual({ leases: [], blocked: "budget" });
    await f.fail(a.leases[0]!, "dns", 4);
    expect(await f.lease(10, 5)).toEqual({ leases: [], blocked: "budget" });
    for (const l of [...a.leases.slice(1), ...b.leases]) await f.completeWithPage(l, page(l.url), 6);
    const s = await f.stats();
    expect(s.counters.fetched! + s.counters.failed!).toBe(5);
    expect(s.queued).toBe(5);
    // Pages still wait for parsing: not done yet; once parsed, done with URLs left queued.
    expect(await f.isDone()).toBe(false);
    for (const t of await f.parse.take("p", 10)) await f.parse.ack("p", t.id, []);
    expect(await f.isDone()).toBe(true);
  });

  it("stops leasing while the parse queue is full", async () => {
    const f = await open({ delayMs: 0, parseQueueMax: 2 });
    await f.addLinks(Array.from({ length: 5 }, (_, i) => link(`https://h${i}.test/`)), { now: 0 });
    const { leases } = await f.lease(3, 1);
    for (const l of leases) await f.completeWithPage(l, page(l.url), 2);
    expect(await f.parse.hasRoom()).toBe(false);
    expect(await f.lease(5, 3)).toEqual({ leases: [], blocked: "parse-full" });
    await f.parse.take("p", 2);
    expect(await f.parse.hasRoom()).toBe(true);
    expect((await f.lease(5, 4)).leases).toHaveLength(2);
  });

  it("drops links beyond a host's queue bound without marking them seen", async () => {
    const f = await open({ delayMs: 0, maxQueuedPerHost: 3 });
    const r = await f.addLinks(Array.from({ length: 5 }, (_, i) => link(`https://a.test/${i}`)), { now: 0 });
    expect(r).toEqual({ added: 3, seen: 0, dropped: 2, invalid: 0 });
    expect(await f.mightHaveSeen(["https://a.test/3", "https://a.test/4"])).toEqual([false, false]);
    const l = (await f.lease(1, 1)).leases[0]!;
    await f.fail(l, "other", 1);
    expect((await f.addLinks([link("https://a.test/3")], { now: 2 })).added).toBe(1);
    expect((await f.stats()).counters["dropped:host-full"]).toBe(2);
  });

  it("skips invalid links and counts them", async () => {
    const f = await open();
    const r = await f.addLinks([link("https://a.test/ok"), { ...link("https://a.test/x"), tier: 7 }, { ...link("https://a.test/y"), url: "https://a.test/\ty" }]);
    expect(r).toEqual({ added: 1, seen: 0, dropped: 0, invalid: 2 });
  });
});

describe("completion variants", () => {
  it("requeue puts the URL back at the head, counts attempts on retries and honours not-before", async () => {
    const f = await open({ delayMs: 10 });
    await f.addLinks([link("https://a.test/1", 0, 2), link("https://a.test/2")], { now: 0 });
    const l = (await f.lease(1, 0)).leases[0]!;
    expect(l.url).toBe("https://a.test/1");
    // robots.txt fetched first: same attempt.
    expect(await f.requeue(l, { countAttempt: false }, 5)).toBe(true);
    const l2 = (await f.lease(1, 15)).leases[0]!;
    expect(l2).toMatchObject({ url: "https://a.test/1", attempt: 0, depth: 2 });
    // Retry with Retry-After.
    expect(await f.requeue(l2, { countAttempt: true, notBefore: 5000, reason: "http-503" }, 20)).toBe(true);
    expect((await f.lease(1, 4999)).leases).toEqual([]);
    const l3 = (await f.lease(1, 5000)).leases[0]!;
    expect(l3).toMatchObject({ url: "https://a.test/1", attempt: 1, depth: 2 });
    await f.requeue(l3, { countAttempt: true }, 5001);
    const l4 = (await f.lease(1, 6000)).leases[0]!;
    expect(l4.attempt).toBe(2);
    const s = await f.stats();
    expect(s.counters.requeued).toBe(3);
    expect(s.counters["retry:http-503"]).toBe(1);
    await checkInvariants(redis, f);
  });

  it("a failure is recorded per host and per class", async () => {
    const f = await open({ delayMs: 0 });
    await f.addLinks([link("https://a.test/1"), link("https://a.test/2")], { now: 0 });
    for (let t = 1; t <= 2; t++) await f.fail((await f.lease(1, t)).leases[0]!, "connect-timeout", t);
    const h = (await f.hostState("a.test"))!;
    expect(h.errors).toBe(2);
    expect(h.errorsByClass).toEqual({ "connect-timeout": 2 });
    expect((await f.stats()).counters["err:connect-timeout"]).toBe(2);
    expect(await f.isDone()).toBe(true);
  });

  it("lowering concurrency takes effect, raising it re-readies the host", async () => {
    const f = await open({ delayMs: 0, hostConcurrency: 1 });
    await f.addLinks(Array.from({ length: 6 }, (_, i) => link(`https://a.test/${i}`)), { now: 0 });
    const first = (await f.lease(1, 1)).leases;
    expect((await f.lease(1, 2)).leases).toEqual([]);
    await f.setHostLimits("a.test", { concurrency: 3 }, 3);
    const more = [...(await f.lease(1, 4)).leases, ...(await f.lease(1, 5)).leases, ...(await f.lease(1, 6)).leases];
    expect(more).toHaveLength(2);
    expect((await f.hostState("a.test"))!.inFlight).toBe(3);
    await f.setHostLimits("a.test", { concurrency: null }, 7);
    for (const l of [...first, ...more]) await f.fail(l, "other", 8);
    expect((await f.lease(5, 9)).leases).toHaveLength(1);
    await checkInvariants(redis, f);
  });
});
