// Per-IP in-flight slots (--ip-concurrency) against a real redis-server: a full address refuses,
// a release frees, an expired lease's slot frees itself, and a dead fetcher's slots come back with
// its leases (release_owner.lua).
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { Frontier } from "../../src/frontier/index.js";
import { takeIpSlot } from "../../src/node/ip-slots.js";
import { link } from "./helpers.js";

let redis: Redis;
let n = 0;
const bloom = { expectedUrls: 10_000, falsePositiveRate: 0.001 };

useRedis((server) => {
  redis = server.client();
});

describe("IP slots", () => {
  it("at most n leases hold slots of one address; release and expiry free them", async () => {
    const f = await Frontier.open(redis, { prefix: `ip${++n}:`, bloom });
    const a = { id: "1", expiresAt: 10_000 }, b = { id: "2", expiresAt: 20_000 }, c = { id: "3", expiresAt: 20_000 };
    expect(await f.acquireIpSlot("10.0.0.1", a, 2, 0)).toBe(true);
    expect(await f.acquireIpSlot("10.0.0.1", b, 2, 0)).toBe(true);
    expect(await f.acquireIpSlot("10.0.0.1", a, 2, 0)).toBe(true); // already held: idempotent
    expect(await f.acquireIpSlot("10.0.0.1", c, 2, 0)).toBe(false);
    expect(await f.acquireIpSlot("10.0.0.2", c, 2, 0)).toBe(true); // another address
    await f.releaseIpSlot("10.0.0.1", b);
    expect(await f.acquireIpSlot("10.0.0.1", c, 2, 0)).toBe(true);
    expect(await f.acquireIpSlot("10.0.0.1", { id: "4", expiresAt: 30_000 }, 2, 5_000)).toBe(false);
    // a's lease expired at 10 s: its slot frees itself.
    expect(await f.acquireIpSlot("10.0.0.1", { id: "4", expiresAt: 30_000 }, 2, 10_001)).toBe(true);
  });

  it("a dead fetcher's slots are returned with its leases", async () => {
    const f = await Frontier.open(redis, { prefix: `ip${++n}:`, bloom, delayMs: 0 });
    await f.addLinks([link("https://a.test/1"), link("https://b.test/1")], { now: 1 });
    const held = (await f.lease(10, 2, 60_000, "fetcher-0-123")).leases;
    expect(held).toHaveLength(2);
    for (const l of held) expect(await f.acquireIpSlot("10.0.0.9", l, 2, 3)).toBe(true);
    expect(await f.acquireIpSlot("10.0.0.9", { id: "x", expiresAt: 60_000 }, 2, 4)).toBe(false);
    expect(await f.releaseOwner("fetcher-0-123", 5)).toBe(2);
    expect(await redis.exists(f.keys.ipSlotsOf("fetcher-0-123"))).toBe(0);
    expect(await f.acquireIpSlot("10.0.0.9", { id: "x", expiresAt: 60_000 }, 2, 6)).toBe(true);
  });

  it("takeIpSlot waits for a slot, then gives up with full; an unknown address takes none", async () => {
    const f = await Frontier.open(redis, { prefix: `ip${++n}:`, bloom });
    const lease = (id: string) => ({ id, expiresAt: Date.now() + 60_000, url: "https://a.test/", host: "a.test", tier: 0, depth: 0, hops: 0, attempt: 0 });
    const at = () => Promise.resolve("10.1.1.1");
    const first = await takeIpSlot(f, at, lease("1"), 1, 100);
    expect(first).not.toBe("full");
    expect(await takeIpSlot(f, at, lease("2"), 1, 100)).toBe("full");
    setTimeout(() => void (first as { release(): Promise<void> }).release(), 100);
    const second = await takeIpSlot(f, at, lease("3"), 1, 5_000);
    expect(second && second !== "full" ? second.addr : second).toBe("10.1.1.1");
    expect(await takeIpSlot(f, () => Promise.reject(new Error("ENOTFOUND")), lease("4"), 1, 100)).toBeNull();
  });
});
