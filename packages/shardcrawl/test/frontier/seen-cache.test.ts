// The parser's seen cache: bounded, keeps repeats, and at the ack never hides a URL the seen filter
// does not hold (a refused link is sent again later and admitted once there is room).
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { Frontier } from "../../src/frontier/index.js";
import { DEFAULT_SEEN_CACHE_ENTRIES, SeenCache } from "../../src/frontier/seen-cache.js";
import { defaultConfig } from "../../src/node/config.js";
import { NodeFrontier } from "../../src/node/open-frontier.js";
import { checkInvariants, link, page } from "./helpers.js";

describe("SeenCache", () => {
  it("stays within its bound and keeps URLs that repeat", () => {
    const c = new SeenCache(100);
    c.remember("https://a.test/nav");
    for (let i = 0; i < 1000; i++) {
      c.remember(`https://a.test/p${i}`);
      expect(c.has("https://a.test/nav")).toBe(true); // a repeat moves to the newer generation
      expect(c.size).toBeLessThanOrEqual(100);
    }
    expect(c.has("https://a.test/p0")).toBe(false);
    expect(c.has("https://a.test/p999")).toBe(true);
    expect(c.unknown([{ url: "https://a.test/nav" }, { url: "https://a.test/new" }])).toEqual([{ url: "https://a.test/new" }]);
    expect(c.hits).toBe(1);
    c.clear();
    expect(c.size).toBe(0);
  });

  it("the node config's default size is the cache's own (the schema states it without importing the frontier)", () => {
    expect(defaultConfig().seenCacheEntries).toBe(DEFAULT_SEEN_CACHE_ENTRIES);
  });

  it("answers seen only for URLs it was told about (fingerprints do not collide on near-identical URLs)", () => {
    const c = new SeenCache(200_000);
    const near = (i: number) => `https://a.test/p/${i}?q=${i % 7}`;
    for (let i = 0; i < 90_000; i++) c.remember(near(i));
    expect(c.size).toBe(90_000);
    for (let i = 0; i < 90_000; i++) if (!c.has(near(i))) expect.fail(`forgot ${near(i)}`);
    for (let i = 90_000; i < 400_000; i++) if (c.has(near(i))) expect.fail(`claims ${near(i)}`);
    for (const u of ["", "h", "https://a.test/p/1?q=2", "https://a.test/p/1?q=1 ", "https://a.test/\u00e9"]) expect(c.has(u)).toBe(false);
  });
});

let redis: Redis;
useRedis((server) => {
  redis = server.client();
});

describe("NodeFrontier.ackPage with the seen cache", () => {
  // NodeFrontier.ackPage stamps its scripts with the clock: the test uses real time throughout.
  async function takeOne(f: Frontier): Promise<string> {
    const t = Date.now();
    const { leases } = await f.lease(1, t);
    expect(leases).toHaveLength(1);
    await f.completeWithPage(leases[0]!, page(leases[0]!.url), t);
    const [taken] = await f.parse.take("c1", 1);
    return taken!.id;
  }

  it("sends only links Redis has not taken in yet, and counts the others", async () => {
    const f = await Frontier.open(redis, { prefix: "sc1:", bloom: { expectedUrls: 10_000, falsePositiveRate: 0.001 }, delayMs: 0 });
    const node = new NodeFrontier(f);
    await f.addLinks([link("https://a.test/")], { now: Date.now() });
    const nav = ["https://a.test/x", "https://a.test/y"].map((u) => link(u));
    expect(await node.ackPage("c1", await takeOne(f), nav, { error: null })).toBe(true);
    expect(node.takeSeenCacheHits()).toBe(0);
    expect(await node.ackPage("c1", await takeOne(f), [...nav, link("https://a.test/z")], { error: null })).toBe(true);
    expect(node.takeSeenCacheHits()).toBe(2);
    const s = await f.stats(Date.now());
    // a.test/ (added as discovered), x, y, z queued once each; Redis itself saw no duplicate (the cache answered them).
    expect(s.counters.discovered).toBe(4);
    expect(s.counters.duplicates ?? 0).toBe(0);
    await checkInvariants(redis, f);
  });

  it("answers a parser's unknownLinks before the admission chain, and an ack of those sends them as they are", async () => {
    const f = await Frontier.open(redis, { prefix: "sc3:", bloom: { expectedUrls: 10_000, falsePositiveRate: 0.001 }, delayMs: 0 });
    const node = new NodeFrontier(f);
    await f.addLinks([link("https://a.test/")], { now: Date.now() });
    const nav = ["https://a.test/x", "https://a.test/y"].map((u) => link(u));
    expect(node.unknownLinks(nav)).toEqual(nav);
    expect(await node.ackPage("c1", await takeOne(f), nav, { error: null, unknownOnly: true })).toBe(true);
    const next = [...nav, link("https://a.test/z")];
    const unknown = node.unknownLinks(next);
    expect(unknown.map((l) => l.url)).toEqual(["https://a.test/z"]);
    expect(node.takeSeenCacheHits()).toBe(2);
    expect(await node.ackPage("c1", await takeOne(f), unknown, { error: null, unknownOnly: true })).toBe(true);
    expect(node.unknownLinks(next)).toEqual([]);
    expect(node.takeSeenCacheHits()).toBe(3);
    const s = await f.stats(Date.now());
    expect(s.counters.discovered).toBe(4);
    expect(s.counters.duplicates ?? 0).toBe(0);
    await checkInvariants(redis, f);
  });

  it("does not remember a batch with a refused link: it is sent again and admitted once there is room", async () => {
    const f = await Frontier.open(redis, { prefix: "sc2:", bloom: { expectedUrls: 10_000, falsePositiveRate: 0.001 }, delayMs: 0, maxQueuedPerHost: 1 });
    const node = new NodeFrontier(f);
    await f.addLinks([link("https://a.test/")], { now: Date.now() });
    const id1 = await takeOne(f); // a.test/ leased: the queue is empty, one slot of room
    const links = ["https://a.test/1", "https://a.test/2"].map((u) => link(u));
    await node.ackPage("c1", id1, links, { error: null }); // /1 queued, /2 refused (host full)
    const id2 = await takeOne(f); // /1 leased: room again
    await node.ackPage("c1", id2, links, { error: null });
    expect(node.takeSeenCacheHits()).toBe(0); // nothing was remembered from the batch with a refusal
    const { leases } = await f.lease(1, Date.now());
    expect(leases.map((l) => l.url)).toEqual(["https://a.test/2"]);
  });
});
