// Hosts deferred against a real redis-server: a due Retry-After deferral is forgotten, a due
// robots.txt outage is kept until robots.txt answers (pruneAsked reads them all in one pipeline).
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { Frontier } from "../../src/frontier/index.js";
import { link } from "./helpers.js";

let redis: Redis;
let n = 0;

useRedis((server) => {
  redis = server.client();
});

describe("pruneAsked", () => {
  it("forgets due Retry-After deferrals only, and leaves those not yet due", async () => {
    const f = await Frontier.open(redis, { prefix: `ro${++n}:`, bloom: { expectedUrls: 10_000, falsePositiveRate: 0.001 }, delayMs: 0 });
    const hosts = ["asked.test", "outage.test", "later.test", "outage2.test"];
    await f.addLinks(hosts.map((h) => link(`http://${h}/1`)), { now: 1000 });
    const { leases } = await f.lease(10, 2000);
    expect(leases).toHaveLength(hosts.length);
    const state = (origin: string, nextTryAt: number, lastError: string) => ({ origin, firstFailureAt: 2000, tries: 1, nextTryAt, lastTryAt: 2000, lastError });
    for (const l of leases) {
      const origin = `http://${l.host}`;
      if (l.host === "asked.test") await f.outages.defer(l.id, l.host, state(origin, 3000, "retry-after: 503 asked 1 s"), 2000);
      else if (l.host === "later.test") await f.outages.defer(l.id, l.host, state(origin, 60_000, "retry-after: 429 asked 58 s"), 2000);
      else await f.outages.defer(l.id, l.host, state(origin, 3000, "robots-unavailable: robots.txt answered 503"), 2000);
    }
    expect(await f.outages.count()).toBe(4);
    expect(await f.outages.pruneAsked(1500)).toBe(0);
    expect(await f.outages.pruneAsked(5000)).toBe(1);
    expect((await f.outages.list()).map((h) => h.host).sort()).toEqual(["later.test", "outage.test", "outage2.test"]);
    expect((await f.outages.get("outage.test"))?.lastError).toMatch(/^robots-unavailable/);
    expect(await f.outages.get("asked.test")).toBeUndefined();
    expect(await f.outages.pruneAsked(5000)).toBe(0);
  });
});
