// The cap on hosts per registrable domain, in the add_links script on a real Redis: a wildcard-DNS
// farm's new hosts stop being admitted at the cap, hosts already admitted go on, other domains are
// not touched, and every refusal is counted.
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { Frontier } from "../../src/frontier/index.js";
import type { DiscoveredLink } from "../../src/shared/types.js";

let redis: Redis;
useRedis((server) => {
  redis = server.client();
});

const link = (host: string, path: string): DiscoveredLink => ({ url: `http://${host}/${path}`, host, tier: 0, depth: 1, hops: 0 });

describe("hosts per registrable domain", () => {
  it("admits at most the cap of new hosts of one domain, in one batch and across batches", async () => {
    const f = await Frontier.open(redis, { prefix: "dh:", bloom: { expectedUrls: 10_000, falsePositiveRate: 0.01 }, maxHostsPerDomain: 3 });
    const farm = Array.from({ length: 10 }, (_, i) => `w${i}.farm.test`);
    const r1 = await f.addLinks([...farm.slice(0, 5).flatMap((h) => [link(h, "a"), link(h, "b")]), link("www.other.test", "x")]);
    expect(r1.added).toBe(3 * 2 + 1);
    expect(r1.dropped).toBe(2 * 2);
    const r2 = await f.addLinks([...farm.slice(5).map((h) => link(h, "a")), link("w0.farm.test", "c"), link("w2.farm.test", "d")]);
    expect(r2.added).toBe(2); // hosts already admitted go on
    expect(r2.dropped).toBe(5);
    expect(await redis.hget("dh:dh", "farm.test")).toBe("3");
    expect(await redis.hget("dh:dh", "other.test")).toBe("1");
    expect((await f.stats()).counters["dropped:domain-hosts"]).toBe(9);
    // A refused link stays out of the seen filter: it may come back if the cap is raised.
    expect(await f.mightHaveSeen(["http://w9.farm.test/a", "http://w1.farm.test/a"])).toEqual([false, true]);
  });

  it("is off with 0", async () => {
    const f = await Frontier.open(redis, { prefix: "dh0:", bloom: { expectedUrls: 10_000, falsePositiveRate: 0.01 } });
    const r = await f.addLinks(Array.from({ length: 20 }, (_, i) => link(`w${i}.farm.test`, "a")));
    expect(r.added).toBe(20);
    expect(await redis.exists("dh0:dh")).toBe(0);
  });
});
