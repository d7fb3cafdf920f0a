// Running the frontier's Lua: after Redis loses its script cache, many calls in flight at once
// load each script once (SCRIPT LOAD), not one EVAL of the whole source per call, and all succeed.
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { Frontier } from "../../src/frontier/index.js";
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

describe("Scripts after NOSCRIPT", () => {
  it("loads a script once for every call that met NOSCRIPT at once, and each call runs", async () => {
    const f = await Frontier.open(redis, { prefix: "ns:", bloom: { expectedUrls: 1000, falsePositiveRate: 0.01 }, delayMs: 0 });
    await f.addLinks(Array.from({ length: 40 }, (_, i) => link(`https://h${i}.test/`)), { kind: "seeds", now: 1000 });
    await redis.script("FLUSH");
    const loads0 = await calls(redis, "script|load");
    const evals0 = await calls(redis, "eval");
    // 40 lease calls sent before the first answer: every one meets NOSCRIPT.
    const batches = await Promise.all(Array.from({ length: 40 }, () => f.lease(1, 2000)));
    expect(batches.reduce((n, b) => n + b.leases.length, 0)).toBe(40);
    expect(await calls(redis, "script|load")).toBe(loads0 + 1);
    expect(await calls(redis, "eval")).toBe(evals0);
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
