// Per-host AIMD in Lua against a real redis-server: multiplicative decrease on back-off signals
// (once per window), additive increase under the limit that failed until a probe interval has
// passed, the floor then a delay multiplier, Retry-After as the host's not-before, the pressure
// index, and the node-wide signals (global cap, upstream pause, quota stop).
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { Frontier, type FrontierOptions } from "../../src/frontier/index.js";
import type { Lease } from "../../src/shared/types.js";
import { checkInvariants, link, page } from "./helpers.js";

let redis: Redis;
let n = 0;
const bloom = { expectedUrls: 10_000, falsePositiveRate: 0.001 };

function open(opts: FrontierOptions = {}): Promise<Frontier> {
  // Per-host AIMD: each test host keeps its own clock (domain politeness has its own tests).
  return Frontier.open(redis, { prefix: `aimd${++n}:`, bloom, politenessKey: "host", ...opts });
}

useRedis((server) => {
  redis = server.client();
});

async function limitOf(f: Frontier, host: string): Promise<{ a: number | undefined; m: number }> {
  const [a, m] = await redis.hmget(f.keys.host(host), "a", "m");
  return { a: a === null ? undefined : Number(a), m: m === null ? 1 : Number(m) };
}

async function seed(f: Frontier, host: string, count: number, now: number): Promise<void> {
  await f.addLinks(Array.from({ length: count }, (_, i) => link(`https://${host}/p${i}`)), { now });
}

/** Leases every URL of `host` that may start at `now` (up to its current limit). */
async function leaseAll(f: Frontier, now: number): Promise<Lease[]> {
  const out: Lease[] = [];
  for (;;) {
    const { leases } = await f.lease(1, now);
    if (leases.length === 0) return out;
    out.push(...leases);
  }
}

describe("per-host AIMD", () => {
  it("halves the limit on a back-off signal once per window, then grows it additively up to just below the limit that failed", async () => {
    const f = await open({ delayMs: 0, hostConcurrency: 8, flow: { aimdIncrease: 0.5, aimdProbeMs: 60_000 } });
    await seed(f, "a.test", 500, 1000);
    let now = 2000;
    const first = await leaseAll(f, now);
    expect(first).toHaveLength(8); // starts at the hard limit
    // Two 429s from the same window: one decrease only.
    await f.completeWithPage(first[0]!, page(first[0]!.url), ++now, { signal: "backoff", startedAt: 2000 });
    await f.completeWithPage(first[1]!, page(first[1]!.url), ++now, { signal: "backoff", startedAt: 2000 });
    expect((await limitOf(f, "a.test")).a).toBe(4);
    expect(await redis.hget(f.keys.stats, "aimd:decrease")).toBe("1");
    for (const l of first.slice(2)) await f.completeWithPage(l, page(l.url), ++now, { signal: "ok", latencyMs: 10, startedAt: 2000 });
    // Six successes at +0.5/a each: 4 -> ~4.7; never beyond 7.99 (the limit that failed was 8).
    const a1 = (await limitOf(f, "a.test")).a!;
    expect(a1).toBeGreaterThan(4.5);
    const second = await leaseAll(f, now);
    expect(second).toHaveLength(4);
    await checkInvariants(redis, f, 8);
    for (const l of second) await f.completeWithPage(l, page(l.url), ++now, { signal: "ok", latencyMs: 10, startedAt: now - 1 });
    // Many successes within the probe interval: the limit stops just below 8.
    for (let i = 0; i < 200; i++) {
      const got = await leaseAll(f, ++now);
      for (const l of got) await f.completeWithPage(l, page(l.url), ++now, { signal: "ok", latencyMs: 10, startedAt: now - 1 });
    }
    const capped = (await limitOf(f, "a.test")).a!;
    expect(capped).toBeCloseTo(7.99, 5);
    expect((await f.hostPressure(5)).find((h) => h.host === "a.test")?.limit).toBe(7);
    await checkInvariants(redis, f, 8);
  });

  it("probes the failed limit again after the probe interval", async () => {
    const f = await open({ delayMs: 0, hostConcurrency: 4, flow: { aimdIncrease: 1, aimdProbeMs: 1000 } });
    await seed(f, "b.test", 100, 1000);
    const [l0, ...rest] = await leaseAll(f, 2000);
    await f.fail(l0!, "headers-timeout", 2001, { signal: "backoff", startedAt: 2000 });
    expect((await limitOf(f, "b.test")).a).toBe(2);
    let now = 2002;
    // Requests of the window that failed say nothing new, good or bad.
    for (const l of rest) await f.completeWithPage(l, page(l.url), ++now, { signal: "backoff", startedAt: 2000 });
    expect((await limitOf(f, "b.test")).a).toBe(2);
    for (let i = 0; i < 20; i++) {
      const got = await leaseAll(f, now);
      for (const l of got) await f.completeWithPage(l, page(l.url), ++now, { signal: "ok", latencyMs: 5, startedAt: now - 1 });
    }
    expect((await limitOf(f, "b.test")).a).toBeLessThan(4);
    now += 2000;
    for (let i = 0; i < 5; i++) {
      const got = await leaseAll(f, now);
      for (const l of got) await f.completeWithPage(l, page(l.url), ++now, { signal: "ok", latencyMs: 5, startedAt: now - 1 });
    }
    expect((await limitOf(f, "b.test")).a).toBe(4);
  });

  it("at the floor it multiplies the delay instead, and success brings the multiplier back down", async () => {
    const f = await open({ delayMs: 200, hostConcurrency: 1, flow: { aimdIncrease: 0.5 } });
    await seed(f, "c.test", 20, 1000);
    let now = 2000;
    for (let i = 0; i < 3; i++) {
      const [l] = await leaseAll(f, now);
      await f.completeWithPage(l!, page(l!.url), now + 10, { signal: "backoff", startedAt: now });
      now = Number(await redis.hget(f.keys.host("c.test"), "n"));
    }
    expect((await limitOf(f, "c.test")).m).toBe(8);
    // The gap after a response is 200 ms x 8 (the multiplier at the end of the response: a
    // success lowers it for the gaps after this one).
    const [l] = await leaseAll(f, now);
    await f.completeWithPage(l!, page(l!.url), now + 10, { signal: "ok", latencyMs: 10, startedAt: now });
    expect((await limitOf(f, "c.test")).m).toBe(7.5);
    expect(Number(await redis.hget(f.keys.host("c.test"), "n"))).toBe(now + 10 + 1600);
    const top = await f.hostPressure(3);
    expect(top[0]).toMatchObject({ host: "c.test", delayMultiplier: 7.5, limit: 1 });
  });

  it("honours a not-before (Retry-After) and counts latency far above the baseline as a back-off", async () => {
    const f = await open({ delayMs: 0, hostConcurrency: 4, flow: { aimdLatencyFactor: 4, aimdLatencyMinMs: 100 } });
    await seed(f, "d.test", 20, 1000);
    const got = await leaseAll(f, 2000);
    await f.completeWithPage(got[0]!, page(got[0]!.url), 2010, { signal: "ok", latencyMs: 50, startedAt: 2000 });
    await f.completeWithPage(got[1]!, page(got[1]!.url), 2400, { signal: "ok", latencyMs: 400, startedAt: 2000 });
    expect((await limitOf(f, "d.test")).a).toBe(2);
    expect(await redis.hget(f.keys.stats, "aimd:slow")).toBe("1");
    await f.requeue(got[2]!, { countAttempt: true, reason: "http-429", feedback: { signal: "none", notBefore: 9000 } }, 2500);
    expect((await f.lease(10, 8999)).leases).toEqual([]);
    expect((await f.lease(10, 9000)).leases.length).toBeGreaterThan(0);
    expect(await redis.hget(f.keys.stats, "retries")).toBe("1");
  });

  it("signals about one host never touch another", async () => {
    const f = await open({ delayMs: 0, hostConcurrency: 4 });
    await seed(f, "e.test", 10, 1000);
    await seed(f, "f.test", 10, 1000);
    const got = await f.lease(10, 2000);
    const e = got.leases.find((l) => l.host === "e.test")!;
    await f.fail(e, "connect-timeout", 2001, { signal: "backoff", startedAt: 2000 });
    expect((await limitOf(f, "e.test")).a).toBe(2);
    expect((await limitOf(f, "f.test")).a).toBeUndefined();
  });
});

describe("node-wide signals", () => {
  it("caps leases at the global concurrency, pauses on an upstream pause and stops on quota", async () => {
    const f = await open({ delayMs: 0, hostConcurrency: 4, flow: { globalConcurrency: 3 } });
    for (const h of ["g1.test", "g2.test", "g3.test", "g4.test"]) await seed(f, h, 5, 1000);
    const a = await f.lease(10, 2000);
    expect(a.leases).toHaveLength(3);
    expect((await f.lease(10, 2001)).blocked).toBe("global-full");
    await f.completeWithPage(a.leases[0]!, page(a.leases[0]!.url), 2002);
    await f.setFlow({ pauseUntil: 5000 });
    expect((await f.lease(10, 2003)).blocked).toBe("upstream");
    expect((await f.lease(10, 5000)).leases).toHaveLength(1);
    await f.setFlow({ stop: "upstream quota exhausted" });
    expect(await f.lease(10, 6000)).toEqual({ leases: [], blocked: "quota", message: "upstream quota exhausted" });
  });

  it("pauses all leasing while the output disk is full, keeping the first reason, until cleared", async () => {
    const f = await open({ delayMs: 0, hostConcurrency: 4 });
    await seed(f, "d.test", 5, 1000);
    await f.setFlow({ diskFull: "p0: ENOSPC: write failed" });
    await f.setFlow({ diskFull: "f0: ENOSPC: a later writer" });
    expect(await f.lease(10, 2000)).toEqual({ leases: [], blocked: "disk-full", message: "p0: ENOSPC: write failed" });
    expect((await f.flowState()).diskFull).toBe("p0: ENOSPC: write failed");
    await f.setFlow({ diskFull: null });
    expect((await f.flowState()).diskFull).toBeUndefined();
    expect((await f.lease(10, 2001)).leases).toHaveLength(1);
  });

  it("stops leasing while the parse stage holds its byte bound, until the pages are acknowledged", async () => {
    const f = await open({ delayMs: 0, hostConcurrency: 4, parseQueueMaxBytes: 1000 });
    await seed(f, "h.test", 5, 1000);
    const a = await f.lease(1, 2000);
    await f.completeWithPage(a.leases[0]!, page(a.leases[0]!.url, "x".repeat(1200)), 2001);
    expect((await f.lease(1, 2002)).blocked).toBe("parse-full");
    const taken = await f.parse.take("c1", 10);
    expect(taken).toHaveLength(1);
    expect((await f.lease(1, 2003)).blocked).toBe("parse-full"); // being parsed still counts
    await f.parse.ack("c1", taken[0]!.id, []);
    expect((await f.lease(1, 2004)).leases).toHaveLength(1);
    expect(await redis.hget(f.keys.stats, "parseBytes")).toBe("0");
  });
});
