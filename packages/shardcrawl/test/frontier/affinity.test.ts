// Host affinity in lease.lua against a real redis-server: with several fetchers leasing (owners
// "f<index>.<pid>"), each host's leases go to one fetcher; a fetcher that goes silent has its hosts
// moved to the others and only those; a fetcher that joins takes hosts only from the others into
// itself; a backlog waits for its owners while they ask (also through blocked calls); the hosts of a
// fetcher that stops asking are taken by another after the grace; and the start-up handshake counts
// the fetchers asking.
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
    // Every host is overdue by far more than the grace (nobody leased for 10 s), yet each waits
    // for its owner: all three slots are asking, so the first to ask takes only its own.
    for (let t = 80_050; t < 81_100; t += 100) await round(f, ["f0.100", "f1.200", "f2.201"], t, after);
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

  it("keeps a slot whose lease calls are blocked (disk full) asking, and its hosts for it", async () => {
    const f = await open({ politenessKey });
    await queueHosts(f, 2);
    await register(f, ["0", "1"], 1);
    await redis.hset(`${f.keys.prefix}flow`, "disk", "disk full");
    // Both fetchers keep asking through a block far longer than the grace.
    for (let t = 100; t < 5000; t += 100) {
      expect((await f.lease(500, t, 60_000, "f0.400")).blocked).toBe("disk-full");
      expect((await f.lease(500, t, 60_000, "f1.401")).blocked).toBe("disk-full");
    }
    await redis.hdel(`${f.keys.prefix}flow`, "disk");
    // When it clears, f0 asks first and finds only its own hosts; f1 then gets the rest.
    const seen = new Map<string, Set<string>>();
    await round(f, ["f0.400", "f1.401"], 5000, seen);
    expect(seen.size).toBe(HOSTS);
    const f0 = [...ownerOf(seen).values()].filter((o) => o === "f0").length;
    expect(f0).toBeGreaterThan(HOSTS / 5);
    expect(f0).toBeLessThan((HOSTS * 4) / 5);
    await checkInvariants(redis, f);
  });

  it("is work-conserving: the hosts of a slot that stops asking go to another fetcher after the grace", async () => {
    const f = await open({ politenessKey });
    await queueHosts(f, 3);
    await register(f, ["0", "1"], 1);
    const seen = new Map<string, Set<string>>();
    // Only f0 leases (f1 is alive but saturated: it registered but asks for nothing). Within the
    // grace f0 gets its own hosts only; once f1 has not asked for the grace, f0 takes its hosts.
    for (let t = 2; t < 2 + GRACE - 100; t += 100) await round(f, ["f0.300"], t, seen);
    expect(seen.size).toBeGreaterThan(HOSTS / 5);
    expect(seen.size).toBeLessThan((HOSTS * 4) / 5);
    for (let t = 2 + GRACE + 10; t < 2 + GRACE + 8000; t += 100) await round(f, ["f0.300"], t, seen);
    expect(seen.size).toBeGreaterThanOrEqual(HOSTS - 2);
    expect((await f.stats(10_000)).queued).toBe(0);
    await checkInvariants(redis, f);
  }, 300_000);
});

describe("the start-up handshake", () => {
  it("counts the slots that asked within the grace, by slot (index), whatever the pid", async () => {
    const f = await open();
    expect(await f.joinAffinity("f0.10", 5000)).toBe(1);
    expect(await f.joinAffinity("f1.11", 5100)).toBe(2);
    // A slot from a run long gone does not count; the same slot under a new pid is one slot.
    await register(f, ["7"], 100);
    expect(await f.joinAffinity("f1.12", 5200)).toBe(2);
    expect(await f.joinAffinity("f2.13", 5300)).toBe(3);
    // f0 last asked 1,000 ms (the grace) before: still counted; 1 ms later it is not.
    expect(await f.joinAffinity("f2.13", 6000)).toBe(3);
    expect(await f.joinAffinity("f2.13", 6001)).toBe(2);
  });
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
