// Queue compactness: Redis MEMORY USAGE of the host queues per queued URL versus the raw
// path+query bytes, for 100k typical URLs; and the robots cache round trip.
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { decodeElement, Frontier } from "../../src/frontier/index.js";
import type { DiscoveredLink } from "../../src/shared/types.js";
import { MAX_TIER } from "../../src/shared/types.js";
import { sleep } from "./helpers.js";
import { prng } from "../prng.js";

let redis: Redis;
useRedis((server) => {
  redis = server.client();
});

const WORDS = ["news", "world", "sport", "business", "tech", "science", "health", "travel", "culture", "opinion", "local",
  "market", "review", "guide", "best", "how", "to", "the", "new", "city", "report", "update", "video", "photos", "election",
  "weather", "football", "recipe", "home", "garden", "car", "music", "film", "book", "interview", "analysis", "data"];

/** Typical article/listing/product URLs: 1-4 path segments, slugs, ids, dates, sometimes a query. */
function typicalUrl(r: () => number, host: string): { url: string; path: string } {
  const pick = () => WORDS[Math.floor(r() * WORDS.length)]!;
  const slug = (n: number) => Array.from({ length: n }, pick).join("-");
  const kind = r();
  let path: string;
  if (kind < 0.45) path = `/${pick()}/${2015 + Math.floor(r() * 10)}/${String(1 + Math.floor(r() * 12)).padStart(2, "0")}/${slug(3 + Math.floor(r() * 5))}`;
  else if (kind < 0.7) path = `/${pick()}/${slug(2 + Math.floor(r() * 4))}-${Math.floor(r() * 1e7)}.html`;
  else if (kind < 0.85) path = `/${pick()}/${pick()}?page=${1 + Math.floor(r() * 50)}`;
  else path = `/p/${Math.floor(r() * 1e6)}?ref=${pick()}&utm_source=${pick()}`;
  return { url: `https://${host}${path}`, path };
}

describe("queue compactness", () => {
  it("stores 100k typical URLs in at most 1.3x their raw path+query bytes", async () => {
    const f = await Frontier.open(redis, { prefix: "mem:", bloom: { expectedUrls: 200_000, falsePositiveRate: 0.001 } });
    const r = prng(42);
    const links: DiscoveredLink[] = [];
    const paths = new Set<string>();
    let rawBytes = 0;
    // 100 hosts with a skewed share (a few big sites, many small ones), tiers mostly 0-1, depth 1-5.
    while (links.length < 100_000) {
      const hostNo = Math.floor(100 * r() ** 2);
      const host = `www.site${hostNo}.example`;
      const { url, path } = typicalUrl(r, host);
      if (paths.has(url)) continue;
      paths.add(url);
      rawBytes += Buffer.byteLength(path);
      const tier = Math.min(MAX_TIER, Math.floor(r() ** 3 * (MAX_TIER + 1)));
      links.push({ url, host, tier, depth: 1 + Math.floor(r() * 5), hops: 0 });
    }
    for (let i = 0; i < links.length; i += 10_000) await f.addLinks(links.slice(i, i + 10_000), { now: 0 });
    const s = await f.stats();
    // Compare only what was queued (a Bloom false positive keeps a URL out at p = 0.1%).
    expect(s.queued).toBeGreaterThan(99_700);
    let queueBytes = 0;
    let hostBytes = 0;
    let queued = 0;
    let raw = 0;
    for (let h = 0; h < 100; h++) {
      const host = `www.site${h}.example`;
      for (let t = 0; t <= MAX_TIER; t++) {
        const key = f.keys.queue(host, t);
        const items = await redis.lrangeBuffer(key, 0, -1);
        if (items.length === 0) continue;
        queued += items.length;
        for (const el of items) raw += Buffer.byteLength(decodeElement(el).url); // without the depth/hops suffix
        queueBytes += (await redis.memory("USAGE", key, "SAMPLES", 0)) ?? 0;
      }
      hostBytes += (await redis.memory("USAGE", f.keys.host(host), "SAMPLES", 0)) ?? 0;
    }
    expect(queued).toBe(s.queued);
    expect(raw).toBeLessThanOrEqual(rawBytes);
    const ratio = queueBytes / raw;
    const withHosts = (queueBytes + hostBytes) / raw;
    console.log(`queue memory: ${queued} URLs, raw path+query ${(raw / queued).toFixed(1)} B/URL, ` +
      `queues ${(queueBytes / queued).toFixed(1)} B/URL = ${ratio.toFixed(3)}x raw; with host hashes ${withHosts.toFixed(3)}x`);
    expect(ratio).toBeLessThanOrEqual(1.3);
  });
});

describe("robots cache", () => {
  it("stores, expires and rejects bad entries", async () => {
    const f = await Frontier.open(redis, { prefix: "rob:", bloom: { expectedUrls: 1000, falsePositiveRate: 0.01 } });
    await f.robots.set("https://a.test", { kind: "rules", body: "User-agent: *\nDisallow: /x\n", fetchedAt: 123 }, 60_000);
    await f.robots.set("https://b.test", { kind: "disallow-all", fetchedAt: 5 }, 100);
    expect(await f.robots.get("https://a.test")).toEqual({ kind: "rules", body: "User-agent: *\nDisallow: /x\n", fetchedAt: 123 });
    expect(await f.robots.get("https://b.test")).toEqual({ kind: "disallow-all", fetchedAt: 5 });
    expect(await f.robots.get("https://none.test")).toBeUndefined();
    expect(await redis.pttl(f.keys.robots("https://a.test"))).toBeGreaterThan(0);
    await sleep(150);
    expect(await f.robots.get("https://b.test")).toBeUndefined();
    await redis.set(f.keys.robots("https://c.test"), "{broken");
    expect(await f.robots.get("https://c.test")).toBeUndefined();
    await expect(f.robots.set("https://d.test", { kind: "rules", body: "x".repeat(600 * 1024), fetchedAt: 1 }, 1000)).rejects.toThrow(/above/);
    await expect(f.robots.set("https://d.test", { kind: "allow-all", fetchedAt: 1 }, 0)).rejects.toThrow(/ttlMs/);
  });
});
