// Queue element forms against a real redis-server (element.ts): the packed form (path without the
// "/", mark and depth in top bits) and the depth-byte form ("<depth byte>path" without the "/")
// are what add_links writes now; queues written by the previous
// version ("/path<depth byte>", "/path\t<d>,<h>,<a>", "/path" for depth 0, full URLs) must still be
// leased, retried, spilled and shed as the exact URL with its depth, hops and attempt, so a node
// that restarts on an older Redis (AOF) needs no conversion.
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { Frontier, type FrontierOptions } from "../../src/frontier/index.js";
import { decodeElement, encodeRelative } from "../../src/frontier/element.js";
import { checkInvariants, link } from "./helpers.js";

let redis: Redis;
let n = 0;

function open(opts: FrontierOptions = {}): Promise<Frontier> {
  return Frontier.open(redis, { prefix: `forms${++n}:`, bloom: { expectedUrls: 10_000, falsePositiveRate: 0.001 }, delayMs: 0, ...opts });
}

useRedis((server) => {
  redis = server.client();
});

/** Leases everything (one host at a time, every lease failed), returning url/depth/hops/attempt in lease order. */
async function drain(f: Frontier, from: number): Promise<string[]> {
  const out: string[] = [];
  for (let t = from; ; t++) {
    const { leases } = await f.lease(1, t);
    if (leases.length === 0) return out;
    const l = leases[0]!;
    out.push(`${l.url} d${l.depth} h${l.hops} a${l.attempt}`);
    await f.fail(l, "other", t);
  }
}

describe("queue element forms", () => {
  it("stores a same-origin URL at depth 1..8 in fewer bytes than its path, and leases it back exactly", async () => {
    const f = await open();
    const paths = ["/x/y?z=1", "/abcd", "/~a%20b/c.php?q=1&r=%C3%A9", "/", "/ab", "/é/non-ascii"];
    await f.addLinks([
      ...paths.map((p, i) => link(`https://a.test${p}`, 0, 1 + i)), link("https://a.test/deep", 0, 9),
      link("https://a.test/hop", 0, 2, 1), link("https://a.test/seed", 0, 0), link("http://a.test/other-origin", 0, 4),
    ], { now: 0 });
    const els = await redis.lrangeBuffer(f.keys.queue("a.test", 0), 0, -1);
    expect(els.map((e) => e.toString("latin1"))).toEqual([
      ...paths.map((p, i) => Buffer.from(encodeRelative(p, 1 + i, 0, 0), i < 3 ? "latin1" : "utf8").toString("latin1")),
      "/deep\t9", "/hop\t2,1", "/seed", "http://a.test/other-origin\x04",
    ]);
    // Packed (ASCII, >= 4 bytes after the "/"): the "/" and 1 of every 8 more bytes saved; else the depth byte replaces the "/".
    expect(els.slice(0, 6).map((e, i) => e.length - Buffer.byteLength(paths[i]!))).toEqual([-1, -1, -3, 0, 0, 0]);
    expect(els.slice(0, 6).map((e) => decodeElement(e))).toEqual(paths.map((p, i) => ({ url: p, depth: 1 + i, hops: 0, attempt: 0 })));
    expect(await drain(f, 1)).toEqual([
      ...paths.map((p, i) => `https://a.test${p} d${1 + i} h0 a0`), "https://a.test/deep d9 h0 a0",
      "https://a.test/hop d2 h1 a0", "https://a.test/seed d0 h0 a0", "http://a.test/other-origin d4 h0 a0",
    ]);
  });

  it("packs every depth 1..8 and keeps lease data and page records as text", async () => {
    const f = await open();
    await f.addLinks([1, 2, 3, 4, 5, 6, 7, 8].map((d) => link(`https://p.test/page-${d}?x`, 0, d)), { now: 0 });
    const els = await redis.lrangeBuffer(f.keys.queue("p.test", 0), 0, -1);
    expect(els.map((e) => e[0]! >= 0x80)).toEqual(Array(8).fill(true));
    expect(els.map((e) => decodeElement(e).depth)).toEqual([1, 2, 3, 4, 5, 6, 7, 8]);
    const { leases } = await f.lease(1, 1);
    expect(leases[0]).toMatchObject({ url: "https://p.test/page-1?x", depth: 1 });
    expect(Object.values(await redis.hgetall(f.keys.leaseData))).toEqual(["p.test\t0\t/page-1?x\x01"]);
    // A long path (bits carried across many 200-byte chunks of the Lua decoder) comes back whole.
    const long = `/${"abcdefghij0123456789-._~!$&'()*+,;=:@%2F".repeat(75)}?q=${"z".repeat(99)}`;
    await f.addLinks([link(`https://l.test${long}`, 0, 6)], { now: 0 });
    const [el] = await redis.lrangeBuffer(f.keys.queue("l.test", 0), 0, -1);
    expect(el!.length).toBe(Buffer.byteLength(long) - 1 - Math.floor((Buffer.byteLength(long) - 5) / 8));
    expect((await f.lease(5, 2)).leases.find((l) => l.host === "l.test")).toMatchObject({ url: `https://l.test${long}`, depth: 6 });
  });

  it("leases queues written by the previous version (trailing depth byte) unchanged, next to new elements", async () => {
    const f = await open();
    await f.addLinks([link("https://b.test/new1", 0, 2)], { now: 0 });
    // As the previous version wrote them (origin stored once in the host hash).
    await redis.rpush(f.keys.queue("b.test", 0), "/old1\x05", "/old2", "/old3\t12,1,2", "https://b.test:8443/p\x02");
    await redis.hincrby(f.keys.host("b.test"), "q", 4);
    await redis.hincrby(f.keys.stats, "queued", 4);
    await checkInvariants(redis, f);
    expect(await drain(f, 1)).toEqual([
      "https://b.test/new1 d2 h0 a0", "https://b.test/old1 d5 h0 a0", "https://b.test/old2 d0 h0 a0",
      "https://b.test/old3 d12 h1 a2", "https://b.test:8443/p d2 h0 a0",
    ]);
  });

  it("a retried or expired compact element goes back with one more attempt and the same URL", async () => {
    const f = await open({ leaseTtlMs: 10 });
    await f.addLinks([link("https://c.test/r?x", 0, 4), link("https://c.test/e", 0, 6)], { now: 0 });
    const { leases: [first] } = await f.lease(1, 1);
    expect(first).toMatchObject({ url: "https://c.test/r?x", depth: 4, attempt: 0 });
    expect(await f.requeue(first!, { countAttempt: true, reason: "status-5xx" }, 2)).toBe(true);
    const { leases: [again] } = await f.lease(1, 3);
    expect(again).toMatchObject({ url: "https://c.test/r?x", depth: 4, hops: 0, attempt: 1 });
    await f.fail(again!, "other", 4);
    const { leases: [second] } = await f.lease(1, 5);
    expect(second).toMatchObject({ url: "https://c.test/e", depth: 6, attempt: 0 });
    expect(await f.reapExpired(100)).toBe(1);
    const { leases: [reaped] } = await f.lease(1, 101);
    expect(reaped).toMatchObject({ url: "https://c.test/e", depth: 6, hops: 0, attempt: 1 });
    await f.fail(reaped!, "other", 102);
    await checkInvariants(redis, f);
  });

  it("spills compact and old elements as full URLs and re-admits them in the compact form", async () => {
    const f = await open({ maxQueuedPerHost: 3, flow: { shedMode: "spill" } });
    await f.addLinks([link("https://s.test/low1", 2, 3), link("https://s.test/low2", 2, 0)], { now: 0 });
    await redis.rpush(f.keys.queue("s.test", 2), "/old\x07");
    await redis.hincrby(f.keys.host("s.test"), "q", 1);
    await redis.hincrby(f.keys.stats, "queued", 1);
    // Three better URLs shed all three (newest first).
    await f.addLinks([link("https://s.test/top1", 0, 1), link("https://s.test/top2", 0, 1), link("https://s.test/top3", 0, 1)], { now: 0 });
    const spilled = await f.peekSpilled(10);
    expect(spilled).toEqual(["s.test\t2\thttps://s.test/old\x07", "s.test\t2\thttps://s.test/low2", "s.test\t2\thttps://s.test/low1\x03"]);
    // Room again: re-admit them (as the spill store does from its files).
    await drain(f, 1);
    await f.dropSpilled(spilled.length);
    expect(await f.readmit(spilled, 100)).toMatchObject({ readmitted: 3, returned: 0 });
    expect(await redis.lrange(f.keys.queue("s.test", 2), 0, -1)).toEqual(["\x07old", "/low2", "\x03low1"]); // re-admitted: depth-byte form
    expect(await drain(f, 200)).toEqual(["https://s.test/old d7 h0 a0", "https://s.test/low2 d0 h0 a0", "https://s.test/low1 d3 h0 a0"]);
  });
});
