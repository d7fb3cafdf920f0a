// P shedlog against a real redis-server: every URL shed from a queue (drop mode) or refused for
// want of room is noted with its reason, newest first, and the list stays capped.
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { Frontier, type FrontierOptions } from "../../src/frontier/index.js";
import { SHED_LOG_MAX } from "../../src/frontier/keys.js";
import { link } from "./helpers.js";

let redis: Redis;
let n = 0;

function open(opts: FrontierOptions = {}): Promise<Frontier> {
  return Frontier.open(redis, { prefix: `shedlog${++n}:`, bloom: { expectedUrls: 100_000, falsePositiveRate: 0.001 }, delayMs: 0, ...opts });
}

/** Entries as [reason, host, url], newest first. */
async function shedLog(f: Frontier): Promise<string[][]> {
  return (await redis.lrange(f.keys.shedLog, 0, -1)).map((e) => e.split("\t").slice(1));
}

useRedis((server) => {
  redis = server.client();
});

describe("shed log", () => {
  it("notes shed and refused URLs with their reason, full URL and host", async () => {
    const f = await open({ maxQueuedPerHost: 2 });
    await f.addLinks([link("https://a.test/low", 2, 5), link("https://a.test/mid", 1, 3)]);
    // s1 (tier 0) sheds /low; s2 (tier 0) sheds /mid; x (tier 2) finds nothing worse: refused.
    await f.addLinks([link("https://a.test/s1", 0), link("https://a.test/s2", 0), link("https://a.test/x?q=1", 2, 5)]);
    expect(await shedLog(f)).toEqual([
      ["dropped:host-full", "a.test", "https://a.test/x?q=1"],
      ["shed:host-full", "a.test", "https://a.test/mid"],
      ["shed:host-full", "a.test", "https://a.test/low"],
    ]);
  });

  it("names the frontier-full reason and stays capped", async () => {
    const f = await open({ maxQueuedTotal: 1 });
    await f.addLinks([link("https://b.test/", 0)]);
    const refused = Array.from({ length: SHED_LOG_MAX + 20 }, (_, i) => link(`https://c.test/p${i}`, 1, 1));
    await f.addLinks(refused);
    const log = await shedLog(f);
    expect(log.length).toBe(SHED_LOG_MAX);
    expect(log[0]).toEqual(["dropped:frontier-full", "c.test", `https://c.test/p${SHED_LOG_MAX + 19}`]);
  });

  it("spill mode notes nothing (spilled URLs are in the spill list and files)", async () => {
    const f = await open({ maxQueuedPerHost: 1, flow: { shedMode: "spill" } });
    await f.addLinks([link("https://d.test/low", 2, 5), link("https://d.test/top", 0)]);
    expect(await redis.llen(f.keys.spill)).toBe(1);
    expect(await shedLog(f)).toEqual([]);
  });
});
