// Politeness per registrable domain (politenessKey "domain") against a real redis-server: the
// hosts of one domain share one clock and one in-flight limit, take turns (round robin), a domain
// with many hosts is one entry in the ready schedule, and other domains are not held back.
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { Frontier, type FrontierOptions } from "../../src/frontier/index.js";
import { checkInvariants, link, page } from "./helpers.js";

let redis: Redis;
let n = 0;
const bloom = { expectedUrls: 10_000, falsePositiveRate: 0.001 };

function open(opts: FrontierOptions = {}): Promise<Frontier> {
  return Frontier.open(redis, { prefix: `dp${++n}:`, bloom, politenessKey: "domain", ...opts });
}

useRedis((server) => {
  redis = server.client();
});

describe("politeness per registrable domain", () => {
  it("hosts of one domain share the delay and take turns; another domain is not held back", async () => {
    const f = await open({ delayMs: 1000 });
    await f.addLinks([
      link("https://www.a.test/1"), link("https://www.a.test/2"), link("https://m.a.test/1"), link("https://m.a.test/2"),
      link("https://b.test/1"), link("https://b.test/2"),
    ], { now: 0 });
    // One entry per domain in the schedule, whatever the number of hosts.
    expect((await f.stats(0)).readyHosts).toBe(2);
    const first = (await f.lease(10, 10)).leases;
    expect(first.map((l) => l.host).sort()).toEqual(["b.test", "www.a.test"]);
    // Nothing more while both domains have a request in flight (concurrency 1).
    expect((await f.lease(10, 20)).leases).toEqual([]);
    await checkInvariants(redis, f);
    const a1 = first.find((l) => l.host === "www.a.test")!;
    await f.completeWithPage(a1, page(a1.url), 100);
    // The domain's clock runs from the end of that response, for every host of the domain.
    expect((await f.lease(10, 1099)).leases).toEqual([]);
    const next = (await f.lease(10, 1100)).leases;
    expect(next.map((l) => l.host)).toEqual(["m.a.test"]);
    expect((await f.hostState("m.a.test"))!.politenessDomain).toBe("a.test");
    await f.completeWithPage(next[0]!, page(next[0]!.url), 1200);
    const third = (await f.lease(10, 2200)).leases;
    expect(third.map((l) => l.host)).toEqual(["www.a.test"]);
    await checkInvariants(redis, f);
  });

  it("a domain's concurrency limit holds across its hosts", async () => {
    const f = await open({ delayMs: 0, hostConcurrency: 2 });
    const links = [];
    for (let h = 0; h < 5; h++) for (let i = 0; i < 3; i++) links.push(link(`https://h${h}.big.test/${i}`));
    await f.addLinks(links, { now: 0 });
    const held = [];
    for (let t = 1; t < 20; t++) held.push(...(await f.lease(10, t)).leases);
    expect(held).toHaveLength(2);
    expect(new Set(held.map((l) => l.host)).size).toBe(2);
    await checkInvariants(redis, f, 2);
    await f.fail(held[0]!, "other", 30);
    const more = (await f.lease(10, 31)).leases;
    expect(more).toHaveLength(1);
    await checkInvariants(redis, f, 2);
  });

  it("a domain with hundreds of hosts is one ready entry and lease reads O(leased) entries", async () => {
    const f = await open({ delayMs: 0 });
    const links = [];
    for (let h = 0; h < 500; h++) links.push(link(`https://h${h}.huge.test/x`));
    for (let d = 0; d < 20; d++) links.push(link(`https://small${d}.test/x`));
    await f.addLinks(links, { now: 0 });
    expect((await f.stats(0)).readyHosts).toBe(21);
    expect(await redis.zcard(f.keys.domainWaiting("huge.test"))).toBe(499);
    // One call leases one URL per domain: the huge domain does not crowd out the small ones.
    const got = (await f.lease(100, 1)).leases;
    expect(got).toHaveLength(21);
    await checkInvariants(redis, f);
    // Every host of the domain gets its turn, one at a time.
    const hosts = new Set<string>();
    let t = 2;
    for (const l of got) await f.fail(l, "other", t);
    while (hosts.size < 500 && t < 2000) {
      const ls = (await f.lease(100, ++t)).leases;
      for (const l of ls) {
        if (l.host.endsWith(".huge.test")) hosts.add(l.host);
        await f.fail(l, "other", t);
      }
    }
    expect(hosts.size).toBe(499);
    await checkInvariants(redis, f);
  });

  it("hosts first found on a parsed page share their domain's clock too", async () => {
    const f = await open({ delayMs: 1000 });
    await f.addLinks([link("https://www.a.test/1")], { now: 0 });
    const [a1] = (await f.lease(10, 10)).leases;
    await f.completeWithPage(a1!, page(a1!.url), 100);
    const [taken] = await f.parse.take("c1", 10);
    // The page links to three new hosts of its own domain (as a wildcard-DNS farm's pages do).
    await f.parse.ack("c1", taken!.id, [link("https://x1.a.test/"), link("https://x2.a.test/"), link("https://x3.a.test/")], { now: 200 });
    // One ready entry for the domain, and one request per delay across its hosts.
    expect((await f.stats(200)).readyHosts).toBe(1);
    expect((await f.lease(10, 1099)).leases).toEqual([]);
    const next = (await f.lease(10, 1200)).leases;
    expect(next).toHaveLength(1);
    await f.completeWithPage(next[0]!, page(next[0]!.url), 1300);
    expect((await f.lease(10, 2000)).leases).toEqual([]);
    expect((await f.lease(10, 2400)).leases).toHaveLength(1);
    await checkInvariants(redis, f);
  });

  it("a one-host domain keeps its representative while leased; a host joining then shares the clock", async () => {
    const f = await open({ delayMs: 1000 });
    await f.addLinks([link("https://www.a.test/1"), link("https://www.a.test/2")], { now: 0 });
    const [a1] = (await f.lease(10, 10)).leases;
    expect(a1!.host).toBe("www.a.test");
    // Nobody else waits: no trip through the domain's line.
    expect(await redis.hget(f.keys.politenessDomain("a.test"), "r")).toBe("www.a.test");
    expect(await redis.exists(f.keys.domainWaiting("a.test"))).toBe(0);
    expect((await f.stats(10)).readyHosts).toBe(0);
    await checkInvariants(redis, f);
    // A second host of the domain appears while the first one's request is in flight.
    await f.addLinks([link("https://m.a.test/1")], { now: 20 });
    expect((await f.lease(10, 50)).leases).toEqual([]);
    await checkInvariants(redis, f);
    await f.completeWithPage(a1!, page(a1!.url), 100);
    // One clock for both: nothing before the domain's next start, then one host per turn.
    expect((await f.lease(10, 1099)).leases).toEqual([]);
    const second = (await f.lease(10, 1100)).leases;
    expect(second.map((l) => l.host)).toEqual(["m.a.test"]);
    await checkInvariants(redis, f);
    await f.completeWithPage(second[0]!, page(second[0]!.url), 1200);
    expect((await f.lease(10, 2199)).leases).toEqual([]);
    expect((await f.lease(10, 2200)).leases.map((l) => l.host)).toEqual(["www.a.test"]);
    await checkInvariants(redis, f);
  });

  it("host mode keeps a clock per host", async () => {
    const f = await open({ delayMs: 1000, politenessKey: "host" });
    await f.addLinks([link("https://www.a.test/1"), link("https://m.a.test/1")], { now: 0 });
    expect((await f.lease(10, 1)).leases).toHaveLength(2);
    await checkInvariants(redis, f);
  });
});
