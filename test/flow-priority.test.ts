// Configured priority rules decide what is shed: one host behind a small per-host queue cap, its
// listing pages (*.php?...) made the lowest tier by --priority-rule. When the cap is reached those
// are shed (or refused) first, so the capped queue ends up holding only other URLs; the inverse
// rules (listing pages first, everything else last) leave mostly listing pages queued. Real Redis,
// real simweb, real processes.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startRedis, type TestRedis } from "./harness/redis.js";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { readPageLog, runCrawl, simwebFlags, writeSeeds, type CrawlRun } from "./harness/crawl.js";
import { flowSimConfig, writeSimConfig } from "./flow-support.js";
import { decodeElement } from "../packages/shardcrawl/src/frontier/element.js";

const CAP = 15;
const LISTING = /\.php\?/;

interface Outcome { run: CrawlRun; listing: number; other: number; shed: number; fetchedListing: number; fetched: number }

describe("flow: configured priority rules", () => {
  let sim: SimwebProcess;
  let redisServer: TestRedis;
  let redis: Redis;
  const outcomes: Record<"rule" | "inverse", Outcome> = {} as Record<"rule" | "inverse", Outcome>;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-flow-prio-"));
    const cfg = flowSimConfig({}, { hostPageCap: 200, pagesPerHost: { min: 200, alpha: 1, max: 200 }, outDegree: { median: 12, sigma: 0.3, max: 20 } });
    const { args } = writeSimConfig(join(dir, "sim.json"), cfg, 3, 1);
    sim = await startSimwebProcess({ extraArgs: args });
    redisServer = await startRedis();
    redis = redisServer.client();
    writeSeeds(args, join(dir, "seeds.txt"));
    const rules = { rule: ["--priority-rule", "3:\\.php\\?"], inverse: ["--priority-rule", "0:\\.php\\?", "--priority-rule", "3:."] };
    for (const name of ["rule", "inverse"] as const) {
      await redis.flushall();
      const run = await runCrawl([
        "--seeds", join(dir, "seeds.txt"), "--out", join(dir, name), "--redis", redisServer.url, "--scope", "hosts", "--delay", "0",
        "--host-concurrency", "2", "--fetchers", "1", "--parsers", "1", "--max-pages", "8", "--max-queued-per-host", String(CAP),
        ...rules[name], ...simwebFlags(sim),
      ]);
      const queued: string[] = [];
      for (const key of await redis.keys("sc:q*")) queued.push(...(await redis.lrangeBuffer(key, 0, -1)).map((e) => decodeElement(e).url));
      const stats = await redis.hgetall("sc:stats");
      outcomes[name] = {
        run, listing: queued.filter((u) => LISTING.test(u)).length, other: queued.filter((u) => !LISTING.test(u)).length,
        shed: Number(stats.shed ?? 0) + Number(stats["dropped:host-full"] ?? 0),
        fetchedListing: readPageLog(join(dir, name)).filter((p) => LISTING.test(p.url)).length,
        fetched: readPageLog(join(dir, name)).length,
      };
    }
    await sim.stop();
  }, 120_000);

  afterAll(async () => {
    redis?.disconnect();
    await sim?.stop();
    await redisServer?.stop();
  });

  test("the low-priority pattern is shed first: the capped queue holds none of it, and the inverse rules keep it", () => {
    const { rule, inverse } = outcomes;
    console.log(`queued at the end (cap ${CAP}): with the rule ${rule.listing} listing + ${rule.other} other (shed/refused ${rule.shed}, listing fetched ${rule.fetchedListing}/${rule.fetched}); ` +
      `inverse rules ${inverse.listing} listing + ${inverse.other} other (shed/refused ${inverse.shed}, listing fetched ${inverse.fetchedListing}/${inverse.fetched})`);
    for (const o of [rule, inverse]) {
      expect(o.run.stderr).not.toMatch(/fatal|exited \(code/);
      expect(o.run.code).toBe(0);
    }
    expect(rule.shed).toBeGreaterThan(0);
    expect(rule.other).toBeGreaterThan(CAP / 2);
    expect(rule.listing).toBe(0);
    expect(inverse.listing).toBeGreaterThan(CAP / 2);
    expect(inverse.listing).toBeGreaterThan(inverse.other);
    // The parse worker used the rules for leasing order too: listing pages last, or first.
    expect(rule.fetchedListing).toBe(0);
    expect(inverse.fetchedListing).toBeGreaterThan(inverse.fetched / 2);
  });
});
