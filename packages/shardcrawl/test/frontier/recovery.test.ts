// Nothing is lost: the reaper returns expired leases, recoverAll returns a dead run's leases and
// parse in-flight pages, the parse queue survives a consumer crash, and add-links is atomic.
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis, type TestRedis } from "../../../../test/harness/redis.js";
import { Frontier, type FrontierOptions } from "../../src/frontier/index.js";
import { checkInvariants, link, page, sleep } from "./helpers.js";

let server: TestRedis;
let redis: Redis;
let n = 0;
const bloom = { expectedUrls: 100_000, falsePositiveRate: 0.0001 };
const open = (opts: FrontierOptions = {}) => Frontier.open(redis, { prefix: `r${++n}:`, bloom, ...opts });

useRedis((started) => {
  server = started;
  redis = started.client();
});

/** Leases, fetches and parses until the crawl is done; returns every URL that reached the parse stage. */
async function drain(f: Frontier, consumer: string, start: number): Promise<string[]> {
  const parsed: string[] = [];
  for (let t = start; !(await f.isDone(t)); t++) {
    const { leases } = await f.lease(100, t);
    for (const l of leases) await f.completeWithPage(l, page(l.url), t);
    for (const p of await f.parse.take(consumer, 100)) {
      parsed.push(p.page!.url);
      await f.parse.ack(consumer, p.id, [], { now: t });
    }
    if (t - start > 100_000) throw new Error("drain did not finish");
  }
  return parsed;
}

describe("reaper", () => {
  it("returns expired leases to the head of their queues with one more attempt, and nothing is lost", async () => {
    const f = await open({ delayMs: 0, leaseTtlMs: 1000 });
    const urls = Array.from({ length: 30 }, (_, i) => `https://h${i % 6}.test/p${i}`);
    await f.addLinks(urls.map((u) => link(u)), { now: 0 });
    const { leases } = await f.lease(100, 10);
    expect(leases).toHaveLength(6);
    expect(await f.reapExpired(1009)).toBe(0);
    expect(await f.reapExpired(1010)).toBe(6);
    await checkInvariants(redis, f);
    const s = await f.stats(1010);
    expect(s.leases).toBe(0);
    expect(s.counters.reaped).toBe(6);
    // Each host's reaped URL comes back first, with attempt 1.
    const again = (await f.lease(100, 1011)).leases;
    expect(new Set(again.map((l) => l.url))).toEqual(new Set(leases.map((l) => l.url)));
    expect(again.every((l) => l.attempt === 1)).toBe(true);
    // The fetcher that held an expired lease completes late: the page is dropped (the URL is queued again).
    expect(await f.completeWithPage(leases[0]!, page(leases[0]!.url), 1012)).toBeNull();
    for (const l of again) await f.completeWithPage(l, page(l.url), 1012);
    // Every URL is parsed exactly once in the end.
    const parsed = await drain(f, "p", 1013);
    expect(parsed.sort()).toEqual(urls.slice().sort());
  });

  it("reaps in batches larger than one script call", async () => {
    const f = await open({ delayMs: 0, leaseTtlMs: 10, hostConcurrency: 1 });
    await f.addLinks(Array.from({ length: 1200 }, (_, i) => link(`https://h${i}.test/`)), { now: 0 });
    expect((await f.lease(10_000, 1)).leases).toHaveLength(1200);
    expect(await f.reapExpired(100)).toBe(1200);
    await checkInvariants(redis, f);
  });
});

describe("recoverAll after a crash", () => {
  it("returns a dead run's leases and parse in-flight pages; the next run loses nothing", async () => {
    const prefix = `crash${++n}:`;
    const urls = Array.from({ length: 40 }, (_, i) => `https://h${i % 8}.test/p${i}`);
    // Run 1: seeds, some leases completed with pages, some pages taken by a parser, then "crash".
    const run1 = await Frontier.open(redis, { prefix, bloom, delayMs: 0 });
    await run1.addLinks(urls.map((u) => link(u)), { now: 0, kind: "seeds" });
    const first = (await run1.lease(100, 1)).leases;
    for (const l of first.slice(0, 5)) await run1.completeWithPage(l, page(l.url), 2);
    const taken = await run1.parse.take("parser-1", 3);
    expect(taken).toHaveLength(3);
    const second = (await run1.lease(100, 3)).leases;
    expect(second.length).toBeGreaterThan(0);
    const before = await run1.stats(3);
    expect(before.leases).toBe(3 + second.length);
    expect(before.parseInFlight).toBe(3);
    // Run 2 on a new connection: a restarted node.
    const client2 = server.client();
    const run2 = await Frontier.open(client2, { prefix, delayMs: 0 });
    expect(await run2.recoverAll(10)).toEqual({ leases: 3 + second.length, pages: 3 });
    await checkInvariants(client2, run2);
    const s = await run2.stats(10);
    expect(s).toMatchObject({ leases: 0, parseInFlight: 0, parseQueue: 5 });
    const parsed = await drain(run2, "parser-1", 11);
    expect(parsed.sort()).toEqual(urls.slice().sort());
    const end = await run2.stats();
    expect(end.counters).toMatchObject({ seeds: 40, fetched: 40, parsed: 40, recovered: 3 + second.length, parseRecovered: 3 });
  });
});

describe("parse queue", () => {
  it("take, crash, recover, ack: every page parsed once acknowledged, stale acks change nothing", async () => {
    const f = await open({ delayMs: 0 });
    await f.addLinks(Array.from({ length: 6 }, (_, i) => link(`https://h${i}.test/`)), { now: 0, kind: "seeds" });
    for (const l of (await f.lease(10, 1)).leases) await f.completeWithPage(l, page(l.url, `body of ${l.url}`), 2);
    expect(await f.parse.depth()).toBe(6);
    const c1 = await f.parse.take("c1", 2);
    // Oldest first.
    expect(c1.map((p) => p.page?.url)).toEqual(["https://h0.test/", "https://h1.test/"]);
    expect(c1[0]!.page!.body.toString()).toBe("body of https://h0.test/");
    const c2 = await f.parse.take("c2", 10);
    expect(c2).toHaveLength(4);
    expect((await f.stats()).parseInFlight).toBe(6);
    // c1 crashes; its pages go back to the front of the queue.
    expect(await f.parse.recover("c1")).toBe(2);
    expect(await f.parse.inFlight("c1")).toEqual([]);
    const c3 = await f.parse.take("c3", 10);
    expect(c3.map((p) => p.page?.url)).toEqual(["https://h0.test/", "https://h1.test/"]);
    // A late ack from the crashed consumer is refused and deletes nothing.
    expect((await f.parse.ack("c1", c1[0]!.id, [link("https://new.test/")])).acked).toBe(false);
    expect(await redis.exists(f.keys.page(c1[0]!.id))).toBe(1);
    for (const p of c3) {
      expect(await f.parse.ack("c3", p.id, [link(`https://new.test/${p.id}`, 1, 1)])).toMatchObject({ acked: true, added: 1 });
      expect(await redis.exists(f.keys.page(p.id))).toBe(0);
    }
    for (const p of c2) await f.parse.ack("c2", p.id, [], { parseError: "decode-error" });
    const s = await f.stats();
    expect(s).toMatchObject({ parseQueue: 0, parseInFlight: 0, queued: 2 });
    expect(s.counters).toMatchObject({ seeds: 6, parsed: 6, discovered: 2, staleAcks: 1, "parseErr:decode-error": 4 });
  });

  it("a blocking take wakes up for a page pushed meanwhile, and times out empty", async () => {
    const f = await open({ delayMs: 0 });
    expect(await f.parse.take("b", 5, { blockMs: 100 })).toEqual([]);
    await f.addLinks([link("https://a.test/")], { now: 0 });
    const l = (await f.lease(1, 1)).leases[0]!;
    const waiting = f.parse.take("b", 5, { blockMs: 5000 });
    await sleep(50);
    await f.completeWithPage(l, page(l.url), 2);
    const got = await waiting;
    expect(got.map((p) => p.page?.url)).toEqual(["https://a.test/"]);
    expect(await f.parse.inFlight("b")).toEqual([got[0]!.id]);
    await f.close();
  });

  it("hands over a damaged page with the reason instead of throwing", async () => {
    const f = await open({ delayMs: 0 });
    await redis.hset(f.keys.page("999"), "m", "{not json", "b", "x");
    await redis.lpush(f.keys.parseQueue, "999");
    const [p] = await f.parse.take("d", 1);
    expect(p).toMatchObject({ id: "999", page: null });
    expect((p as { error: string }).error).toMatch(/not JSON/);
    expect((await f.parse.ack("d", "999", [])).acked).toBe(true);
  });
});

describe("spooled bodies", () => {
  it("carries only the reference through Redis, and a lost body sends the URL back to its queue", async () => {
    const f = await open({ delayMs: 0 });
    await f.addLinks([link("https://s.test/a", 0, 2), link("https://s.test/b", 0, 2)], { now: 0 });
    const [l] = (await f.lease(1, 1)).leases;
    const { body: _body, ...meta } = page(l!.url);
    const spool = { file: "node0-f0-1-abc-1", offset: 4096, bytes: 123_456, crc: 42 };
    const id = await f.completeWithPage(l!, { ...meta, spool }, 2);
    expect(await redis.hexists(f.keys.page(id!), "b")).toBe(0);
    expect((await f.stats(2)).counters.parseBytes).toBe(123_456);
    expect(await f.parse.spooledFiles()).toEqual(new Set([spool.file]));
    const [taken] = await f.parse.take("c", 5);
    expect(taken).toMatchObject({ id, spool });
    expect(taken!.page!.body.length).toBe(0);
    // Another consumer cannot send it back; the taker can, once.
    expect(await f.parse.refetch("other", id!)).toBe(false);
    expect(await f.parse.refetch("c", id!, 3)).toBe(true);
    expect(await f.parse.refetch("c", id!, 3)).toBe(false);
    const s = await f.stats(3);
    expect(s.counters).toMatchObject({ parseBytes: 0, spoolLost: 1, fetched: 0 });
    expect(await redis.exists(f.keys.page(id!))).toBe(0);
    await checkInvariants(redis, f);
    // The URL is first in its queue again, with its depth.
    const [again] = (await f.lease(1, 4)).leases;
    expect(again).toMatchObject({ url: l!.url, depth: 2 });
    await f.close();
  });
});

describe("parse stage bytes", () => {
  it("counts a page's bytes from complete to ack, lists spooled pages queued and taken, and drains pages queued by the version that kept bytes in P pqb", async () => {
    const f = await open({ delayMs: 0 });
    await f.addLinks(["a", "b", "c"].map((p) => link(`https://z${p}.test/${p}`, 0, 1)), { now: 0 });
    const leases = (await f.lease(3, 1)).leases;
    expect(leases).toHaveLength(3);
    const { body: _b, ...meta } = page(leases[0]!.url);
    const files = ["node0-f0-1-a-1", "node0-f0-1-b-1", "node0-f0-1-c-1"];
    const ids: string[] = [];
    for (const [i, l] of leases.entries()) ids.push((await f.completeWithPage(l, { ...meta, url: l.url, spool: { file: files[i]!, offset: 0, bytes: 1000 * (i + 1), crc: 1 } }, 2))!);
    expect((await f.stats(2)).counters.parseBytes).toBe(6000);
    expect(await f.parseQueueOldestAgeMs(2 + 250)).toBe(250);
    // One page taken (in flight), two queued: all three are the stage's.
    const [taken] = await f.parse.take("c", 1);
    expect(await f.parse.spooledFiles()).toEqual(new Set(files));
    // The other two as an older version left them: bytes and enqueue time in P pqb / P pqt.
    for (const id of ids.filter((x) => x !== taken!.id)) {
      const [z, w] = await redis.hmget(f.keys.page(id), "z", "w");
      await redis.hdel(f.keys.page(id), "z", "w");
      await redis.hset(f.keys.parseQueueBytes, id, z!);
      await redis.hset(f.keys.parseQueueTimes, id, w!);
    }
    expect(await f.parseQueueOldestAgeMs(2 + 100)).toBe(100);
    expect(await f.parse.spooledFiles()).toEqual(new Set(files));
    await f.parse.ack("c", taken!.id, [], { now: 3 });
    for (const p of await f.parse.take("c", 5)) await f.parse.ack("c", p.id, [], { now: 3 });
    expect((await f.stats(3)).counters.parseBytes).toBe(0);
    expect(await redis.exists(f.keys.parseQueueBytes, f.keys.parseQueueTimes)).toBe(0);
    expect(await f.parse.spooledFiles()).toEqual(new Set());
    await f.close();
  });
});

describe("add-links atomicity", () => {
  it("concurrent overlapping batches queue each URL once and the counts agree", async () => {
    const f = await open({ delayMs: 0 });
    const urls = Array.from({ length: 8000 }, (_, i) => `https://h${i % 50}.test/page/${i}`);
    // Four clients add shuffled, overlapping batches at the same time.
    const clients = [redis, server.client(), server.client(), server.client()];
    const fs = await Promise.all(clients.map((c) => Frontier.open(c, { prefix: f.keys.prefix, delayMs: 0 })));
    const results = await Promise.all(fs.map(async (fi, w) => {
      const mine = urls.filter((_, i) => (i + w) % 4 !== 0).sort(() => Math.random() - 0.5);
      let added = 0;
      for (let i = 0; i < mine.length; i += 250) added += (await fi.addLinks(mine.slice(i, i + 250).map((u) => link(u)))).added;
      return added;
    }));
    const added = results.reduce((a, b) => a + b, 0);
    const elements = await checkInvariants(redis, f);
    expect(elements.length).toBe(added);
    expect(new Set(elements).size).toBe(elements.length);
    expect((await f.stats()).counters.discovered).toBe(added);
    // With p = 1e-4 at most a handful of URLs can be lost to false positives.
    expect(added).toBeGreaterThan(urls.length - 10);
    expect(added).toBeLessThanOrEqual(urls.length);
  });
});

describe("lease ownership: a dead fetcher's leases come back at once", () => {
  // Ownership lists, not host affinity (frontier/affinity.test.ts): any fetcher may lease any host here.
  const openAnyFetcher = async (opts: FrontierOptions) => {
    const f = await open(opts);
    await redis.hset(`${f.keys.prefix}flowcfg`, "affgrace", "0");
    return f;
  };
  it("releaseOwner returns exactly that owner's leases, leaves the others in flight, and loses nothing", async () => {
    const f = await openAnyFetcher({ delayMs: 0, leaseTtlMs: 120_000 });
    const urls = Array.from({ length: 40 }, (_, i) => `https://h${i % 10}.test/p${i}`);
    await f.addLinks(urls.map((u) => link(u)), { now: 0 });
    const a = (await f.lease(4, 1, undefined, "f0.111")).leases;
    const b = (await f.lease(100, 1, undefined, "f1.222")).leases;
    expect(a).toHaveLength(4);
    expect(b).toHaveLength(6);
    expect(a.every((l) => l.id.endsWith("@f0.111"))).toBe(true);
    expect((await f.leasesOf("f0.111")).sort()).toEqual(a.map((l) => l.id).sort());
    // Owner f0 died: its 4 leases return at once (long before the 120 s TTL), f1's stay leased.
    expect(await f.releaseOwner("f0.111", 2)).toBe(4);
    expect(await f.leasesOf("f0.111")).toEqual([]);
    expect(await f.releaseOwner("f0.111", 2)).toBe(0);
    await checkInvariants(redis, f);
    const s = await f.stats(2);
    expect(s.leases).toBe(6);
    expect(s.counters.ownerReleased).toBe(4);
    // The returned URLs go out first again (head of their queues), attempt not counted.
    const again = (await f.lease(100, 3, undefined, "f0.333")).leases;
    expect(new Set(again.map((l) => l.url))).toEqual(new Set(a.map((l) => l.url)));
    expect(again.every((l) => l.attempt === 0)).toBe(true);
    // A completion the dead process sent before it died arrives late: dropped, not parsed twice.
    expect(await f.completeWithPage(a[0]!, page(a[0]!.url), 4)).toBeNull();
    for (const l of [...b, ...again]) expect(await f.completeWithPage(l, page(l.url), 4)).not.toBeNull();
    const parsed = await drain(f, "p", 5);
    expect(parsed.sort()).toEqual(urls.slice().sort());
    await checkInvariants(redis, f);
    expect(await redis.exists(f.keys.leaseOwner("f1.222"), f.keys.leaseOwner("f0.333"))).toBe(0);
  });

  it("leases that expired or were recovered leave the owner's list too", async () => {
    const f = await openAnyFetcher({ delayMs: 0, leaseTtlMs: 1000 });
    await f.addLinks(Array.from({ length: 6 }, (_, i) => link(`https://h${i}.test/`)), { now: 0 });
    expect((await f.lease(3, 1, undefined, "f0.1")).leases).toHaveLength(3);
    expect((await f.lease(3, 1, undefined, "f1.2")).leases).toHaveLength(3);
    expect(await f.reapExpired(2000)).toBe(6);
    expect(await f.leasesOf("f0.1")).toEqual([]);
    expect(await f.releaseOwner("f1.2", 2001)).toBe(0);
    await checkInvariants(redis, f);
    expect((await f.lease(3, 2002, undefined, "f0.1")).leases).toHaveLength(3);
    expect((await f.recoverAll(2003)).leases).toBe(3);
    expect(await f.leasesOf("f0.1")).toEqual([]);
  });

  it("refuses owner ids that could not be told apart from the lease sequence", async () => {
    const f = await open();
    await expect(f.lease(1, 1, undefined, "a@b")).rejects.toThrow(/invalid lease owner/);
    await expect(f.releaseOwner("")).rejects.toThrow(/invalid lease owner/);
  });
});
