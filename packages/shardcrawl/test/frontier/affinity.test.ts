// Host affinity in lease.lua against a real redis-server: with several fetchers leasing (owners
// "f<index>.<pid>"), each host's leases go to one fetcher; a fetcher that goes silent has its hosts
// moved to the others and only those; a fetcher that joins takes hosts only from the others into
// itself; and a due host whose owner does not lease it is taken by another fetcher after the grace.
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../../../../test/harness/redis.js";
import { affinityGraceMs, Frontier, type FrontierOptions } from "../../src/frontier/index.js";
import { checkInvariants, link, page } from "./helpers.js";

let server: TestRedis;
let redis: Redis;
let n = 0;
const bloom = { expectedUrls: 10_000, falsePositiveRate: 0.001 };
const HOSTS = 48;
const GRACE = 1000;

async function open(opts: FrontierOptions = {}): Promise<Frontier> {
  const f = await Frontier.open(redis, { prefix: `af${++n}:`, bloom, delayMs: 10, parseQueueMax: 1_000_000, ...opts });
  await redis.hset(`${f.keys.prefix}flowcfg`, "affgrace", String(GRACE));
  return f;
}

/** Each owner leases in turn at `now` and completes at once; returns host -> owners that leased it. */
async function round(f: Frontier, owners: string[], now: number, seen: Map<string, Set<string>>): Promise<number> {
  let leased = 0;
  for (const o of owners) {
    const { leases } = await f.lease(500, now, 60_000, o);
    for (const l of leases) {
      if (!seen.has(l.host)) seen.set(l.host, new Set());
      seen.get(l.host)!.add(o.split(".")[0]!);
      await f.completeWithPage(l, page(l.url), now);
      leased++;
    }
  }
  return leased;
}

async function queueHosts(f: Frontier, perHost: number): Promise<void> {
  const links = [];
  for (let h = 0; h < HOSTS; h++) for (let i = 0; i < perHost; i++) links.push(link(`https://h${h}.d${h}.test/${i}`));
  await f.addLinks(links, { now: 0 });
}

/** Registers fetcher slots as live at `now`, as their first lease call would. */
async function register(f: Frontier, slots: string[], now: number): Promise<void> {
  for (const s of slots) await redis.hset(`${f.keys.prefix}aff`, s, String(now));
  await redis.incr(`${f.keys.prefix}affv`);
}

const ownerOf = (seen: Map<string, Set<string>>) => new Map([...seen].map(([h, s]) => [h, [...s].join(",")]));

beforeAll(async () => {
  server = await startRedis();
  redis = server.client();
});
afterAll(async () => {
  await server.stop();
});

describe.each(["host", "domain"] as const)("host affinity (politeness key %s)", (politenessKey) => {
  it("gives each host to one fetcher, moves only a silent fetcher's hosts, and a new fetcher takes only hosts that move to it", async () => {
    const f = await open({ politenessKey });
    await queueHosts(f, 30);
    const seen = new Map<string, Set<string>>();
    await register(f, ["0", "1"], 1);
    for (let t = 100; t < 1100; t += 100) await round(f, ["f0.100", "f1.101"], t, seen);
    // Every host had several visits, each by the same fetcher; both fetchers got hosts.
    const before = ownerOf(seen);
    expect(before.size).toBeGreaterThanOrEqual(HOSTS - 2);
    for (const o of before.values()) expect(o.split(",")).toHaveLength(1);
    const f0 = [...before].filter(([, o]) => o === "f0").length;
    expect(f0).toBeGreaterThan(HOSTS / 5);
    expect(f0).toBeLessThan((HOSTS * 4) / 5);

    // f1 goes silent (dies) for longer than the slot lifetime: f0 takes its hosts, and keeps its own.
    const later = new Map<string, Set<string>>();
    for (let t = 70_000; t < 70_800; t += 100) await round(f, ["f0.100"], t, later);
    expect(later.size).toBeGreaterThanOrEqual(HOSTS - 2);
    for (const [h, o] of ownerOf(later)) expect(o, h).toBe("f0");

    // f1 comes back (new pid, same index) and f2 joins: a host that moves goes to the newcomer
    // slot it hashes to; hosts of f0 that did not move stay with f0.
    const after = new Map<string, Set<string>>();
    await register(f, ["1", "2"], 80_000);
    // The first round after the gap finds every host overdue by more than the grace (nobody leased
    // for 10 s): whoever asks first may take it (work-conserving). Ownership is checked after it.
    await round(f, ["f0.100", "f1.200", "f2.201"], 80_050, new Map());
    for (let t = 80_100; t < 81_100; t += 100) await round(f, ["f0.100", "f1.200", "f2.201"], t, after);
    const third = ownerOf(after);
    expect(third.size).toBeGreaterThanOrEqual(HOSTS - 2);
    for (const [h, o] of third) {
      expect(o.split(","), h).toHaveLength(1);
      // Rendezvous hashing: f1's hosts return to it; nothing moves between f0 and f1.
      if (before.get(h) === "f1") expect(["f1", "f2"], h).toContain(o);
      if (before.get(h) === "f0") expect(["f0", "f2"], h).toContain(o);
    }
    expect([...third.values()].filter((o) => o === "f2").length).toBeGreaterThan(HOSTS / 10);
    await checkInvariants(redis, f);
  }, 300_000);

  it("is work-conserving: a due host its owner does not lease goes to another fetcher after the grace", async () => {
    const f = await open({ politenessKey });
    await queueHosts(f, 3);
    await register(f, ["0", "1"], 1);
    const seen = new Map<string, Set<string>>();
    // Only f0 leases (f1 is alive but saturated: it registered but leases nothing). Within the
    // grace f0 gets its own hosts only; once the others are overdue by the grace, f0 takes them.
    for (let t = 2; t < 2 + GRACE - 100; t += 100) await round(f, ["f0.300"], t, seen);
    expect(seen.size).toBeGreaterThan(HOSTS / 5);
    expect(seen.size).toBeLessThan((HOSTS * 4) / 5);
    for (let t = 2 + GRACE + 10; t < 2 + GRACE + 8000; t += 100) await round(f, ["f0.300"], t, seen);
    expect(seen.size).toBeGreaterThanOrEqual(HOSTS - 2);
    expect((await f.stats(10_000)).queued).toBe(0);
    await checkInvariants(redis, f);
  }, 300_000);
});

describe("without an owner (a single leasing process), or with affinity turned off", () => {
  it("leases any due host", async () => {
    const f = await open();
    await queueHosts(f, 1);
    expect((await f.lease(500, 10)).leases).toHaveLength(HOSTS);
    const g = await open();
    await redis.hset(`${g.keys.prefix}flowcfg`, "affgrace", "0");
    await queueHosts(g, 1);
    await register(g, ["0", "1"], 1);
    expect((await g.lease(500, 10, 60_000, "f0.8")).leases).toHaveLength(HOSTS);
  });
});

describe("affinity grace from the per-host delay", () => {
  it("is a quarter of the delay between 1 s and 15 s, and Frontier.open publishes it", async () => {
    expect(affinityGraceMs(20)).toBe(1000);
    expect(affinityGraceMs(10_000)).toBe(2500);
    expect(affinityGraceMs(70_000)).toBe(15_000);
    const f = await Frontier.open(redis, { prefix: `afg${++n}:`, bloom, delayMs: 10_000 });
    expect(await redis.hget(`${f.keys.prefix}flowcfg`, "affgrace")).toBe("2500");
  });
});
