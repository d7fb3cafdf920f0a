// Running the frontier's Lua as Redis functions: after Redis loses its functions, many calls in
// flight at once load the library once (FUNCTION LOAD) and all succeed; a node's supervisor removes
// other builds' libraries and nothing else; the library's per-call state never leaks from one call
// (or one crawl's prefix) into the next.
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { Frontier, Scripts } from "../../src/frontier/index.js";
import { link } from "./helpers.js";

let redis: Redis;
useRedis((server) => {
  redis = server.client();
});

/** Calls of one command so far (INFO commandstats). */
async function calls(r: Redis, command: string): Promise<number> {
  const m = new RegExp(`^cmdstat_${command.replace("|", "\\|")}:calls=(\\d+)`, "m").exec(await r.info("commandstats"));
  return m ? Number(m[1]) : 0;
}

/** Library names Redis holds. */
async function libraries(r: Redis): Promise<string[]> {
  const listed = (await r.call("FUNCTION", "LIST")) as unknown[][];
  return listed.map((l) => String(l[l.indexOf("library_name") + 1])).sort();
}

describe("Scripts as Redis functions", () => {
  it("loads the library once for every call that found it missing at once, and each call runs", async () => {
    const f = await Frontier.open(redis, { prefix: "ns:", bloom: { expectedUrls: 1000, falsePositiveRate: 0.01 }, delayMs: 0 });
    await f.addLinks(Array.from({ length: 40 }, (_, i) => link(`https://h${i}.test/`)), { kind: "seeds", now: 1000 });
    await redis.call("FUNCTION", "FLUSH");
    const loads0 = await calls(redis, "function|load");
    // 40 lease calls sent before the first answer: every one finds the function missing.
    const batches = await Promise.all(Array.from({ length: 40 }, () => f.lease(1, 2000)));
    expect(batches.reduce((n, b) => n + b.leases.length, 0)).toBe(40);
    expect(await calls(redis, "function|load")).toBe(loads0 + 1);
  });

  it("a node's supervisor drops other builds' libraries as it opens; a child or a tool leaves them", async () => {
    await redis.call("FUNCTION", "FLUSH");
    await redis.call("FUNCTION", "LOAD", "#!lua name=shardcrawl_000000000000\nredis.register_function('sc000000000000_x', function() return 1 end)");
    await redis.call("FUNCTION", "LOAD", "#!lua name=someone_else\nredis.register_function('someone_else_x', function() return 2 end)");
    const ours = /^#!lua name=(\S+)/.exec(new Scripts(redis).library())![1]!;
    const opts = { prefix: "lib:", bloom: { expectedUrls: 1000, falsePositiveRate: 0.01 }, delayMs: 0 };
    const supervisor = await Frontier.open(redis, opts);
    await supervisor.addLinks([link("https://a.test/")], { kind: "seeds", now: 1000 });
    expect(await libraries(redis)).toEqual([ours, "someone_else"].sort());
    // Another build's tool loads its library beside ours; a child opening the crawl keeps both.
    await redis.call("FUNCTION", "LOAD", "#!lua name=shardcrawl_111111111111\nredis.register_function('sc111111111111_x', function() return 1 end)");
    const child = await Frontier.open(redis, { ...opts, publishFlow: false });
    expect((await child.lease(10, 2000)).leases.map((l) => l.host)).toEqual(["a.test"]);
    expect(await libraries(redis)).toEqual([ours, "shardcrawl_111111111111", "someone_else"].sort());
  });

  it("keeps two crawls on one Redis apart when their calls interleave", async () => {
    const open = (prefix: string) => Frontier.open(redis, { prefix, bloom: { expectedUrls: 1000, falsePositiveRate: 0.01 }, delayMs: 0 });
    const [a, b] = [await open("one:"), await open("two:")];
    for (let i = 0; i < 20; i++) {
      await a.addLinks([link(`https://a${i}.test/`)], { kind: "seeds", now: 1000 });
      await b.addLinks([link(`https://b${i}.test/`), link(`https://b${i}.test/x`)], { kind: "seeds", now: 1000 });
    }
    // The same URL is new to each crawl once, whichever was called last.
    expect((await a.addLinks([link("https://both.test/")], { kind: "seeds", now: 1000 })).added).toBe(1);
    expect((await b.addLinks([link("https://both.test/")], { kind: "seeds", now: 1000 })).added).toBe(1);
    expect((await a.addLinks([link("https://both.test/")], { kind: "seeds", now: 1000 })).added).toBe(0);
    const hosts = async (f: Frontier) => (await f.lease(100, 5000)).leases.map((l) => l.host);
    const [la, lb] = [await hosts(a), await hosts(b)];
    expect(la.length).toBe(21);
    expect(lb.length).toBe(21);
    expect(la.every((h) => h.startsWith("a") || h === "both.test")).toBe(true);
    expect(lb.every((h) => h.startsWith("b"))).toBe(true);
  });
});

describe("Scripts on the socket", () => {
  it("sends the script calls of one turn of the event loop in one socket write", async () => {
    const f = await Frontier.open(redis, { prefix: "sw:", bloom: { expectedUrls: 1000, falsePositiveRate: 0.01 }, delayMs: 0 });
    await f.addLinks(Array.from({ length: 10 }, (_, i) => link(`https://h${i}.test/`)), { kind: "seeds", now: 1000 });
    await f.lease(1, 2000); // scripts loaded, connection ready
    const socket = redis.stream as unknown as { _write: (...a: unknown[]) => void; _writev: (...a: unknown[]) => void };
    const writes: number[] = [];
    const { _write, _writev } = socket;
    socket._write = function (this: unknown, ...a: unknown[]) {
      writes.push(1);
      return _write.apply(this, a);
    };
    socket._writev = function (this: unknown, ...a: unknown[]) {
      writes.push((a[0] as unknown[]).length);
      return _writev.apply(this, a);
    };
    try {
      const batches = await Promise.all(Array.from({ length: 9 }, () => f.lease(1, 2000)));
      expect(batches.reduce((n, b) => n + b.leases.length, 0)).toBe(9);
    } finally {
      socket._write = _write;
      socket._writev = _writev;
    }
    expect(writes).toEqual([9]);
  });
});
