// Lease ownership, real processes: SIGKILL a fetcher in the middle of a crawl of slow
// hosts. The supervisor returns exactly that fetcher's leases at once -- long before any of them
// would expire -- the crawl completes with nothing lost, and the URLs fetched twice are at most
// the leases the dead fetcher held.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { simwebFlags, startCrawl, verifyLog, writeSeeds, type CrawlRun, type VerifyReport } from "./harness/crawl.js";
import { nodeRedisUrl, statusOf } from "./harness/chaos.js";
import { setTimeout as sleep } from "node:timers/promises";

const PREFIX = "sc:";

interface HeldLease {
  id: string;
  data: string;
  expiresAt: number;
}

describe("a killed fetcher's leases return at once", () => {
  let sim: SimwebProcess;
  let run: CrawlRun;
  const held: HeldLease[] = [];
  let killedAt = 0;
  let returnedAt = 0;
  /** Where each held URL was when its lease was gone: "queued", "leased" (by another fetcher) or "missing". */
  const whereAfter: string[] = [];
  let report: VerifyReport;
  let counters: Record<string, number>;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-lease-owner-"));
    const cfg = join(dir, "simweb.json");
    // Every host answers after ~1 s: a fetcher always holds many leases when it is killed.
    writeFileSync(cfg, JSON.stringify({
      hostPageCap: 10, behaviours: { slow: 1 }, slow: { medianMs: 1000, sigma: 0.3, maxMs: 3000 },
      pageSize: { median: 4000, mean: 5000, min: 2000, max: 20000 },
    }));
    const configArgs = ["--preset", "polite", "--seed", "8", "--hosts", "40", "--config", cfg];
    sim = await startSimwebProcess({ extraArgs: configArgs });
    const seedsFile = join(dir, "seeds.txt");
    writeSeeds(configArgs, seedsFile);
    const out = join(dir, "out");
    const crawl = startCrawl([
      "--seeds", seedsFile, "--out", out, "--scope", "domains", "--delay", "20", "--max-crawl-delay", "200",
      "--fetchers", "2", "--parsers", "1", "--fetcher-concurrency", "16", "--fetch-timeout", "10000",
      "--lease-ttl", "120000", ...simwebFlags(sim),
    ]);
    let redis: Redis | undefined;
    try {
      // Wait until the crawl is well under way, then freeze fetcher 0 so its lease list cannot
      // change while we read it, and kill it.
      let pid: number | undefined;
      for (let i = 0; i < 600 && pid === undefined; i++) {
        const s = await statusOf(out);
        if (s && s.stats.fetched >= 20) pid = s.children.find((c) => c.role === "fetcher" && c.index === 0)?.pid;
        else await sleep(100);
      }
      if (pid === undefined) throw new Error("the crawl did not get going");
      redis = new Redis(nodeRedisUrl(out), { maxRetriesPerRequest: 3 });
      process.kill(pid, "SIGSTOP");
      await sleep(300); // commands it sent before the stop are applied
      const owner = `${PREFIX}lo:f0.${pid}`;
      const ids = await redis.smembers(owner);
      for (const id of ids) {
        const data = await redis.hget(`${PREFIX}lease`, id);
        const score = await redis.zscore(`${PREFIX}leases`, id);
        if (data !== null && score !== null) held.push({ id, data, expiresAt: Number(score) });
      }
      killedAt = Date.now();
      process.kill(pid, "SIGKILL");
      for (let i = 0; i < 1200 && !returnedAt; i++) {
        const left = held.length ? await redis.hmget(`${PREFIX}lease`, ...held.map((h) => h.id)) : [];
        if (left.every((v) => v === null)) {
          returnedAt = Date.now();
          const leased = new Set(Object.values(await redis.hgetall(`${PREFIX}lease`)));
          for (const h of held) {
            const [host, tier, el] = splitLease(h.data);
            const pos = await redis.lpos(`${PREFIX}q${tier}:${host}`, el);
            whereAfter.push(pos !== null ? "queued" : leased.has(h.data) ? "leased" : "missing");
          }
        } else await sleep(50);
      }
    } finally {
      redis?.disconnect();
      run = await crawl.done;
    }
    await sim.stop();
    report = verifyLog(configArgs, sim.logFile, { minGapMs: 20, maxConcurrency: 1, seedsFile, scope: "domains", maxCrawlDelayMs: 200 });
    counters = (JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as { stats: { counters: Record<string, number> } }).stats.counters;
  }, 240_000);

  afterAll(async () => {
    await sim?.stop();
  });

  test("the killed fetcher held leases, and the supervisor returned all of them before any expired", () => {
    expect(held.length).toBeGreaterThan(0);
    expect(returnedAt).toBeGreaterThan(0);
    const earliestExpiry = Math.min(...held.map((h) => h.expiresAt));
    expect(returnedAt).toBeLessThan(earliestExpiry);
    expect(counters.ownerReleased).toBeGreaterThanOrEqual(held.length);
    expect(run.stderr).toMatch(new RegExp(`fetcher 0 \\(pid \\d+\\) is gone: returned its ${held.length} leased URLs`));
    console.log(`lease-owner: ${held.length} leases returned ${returnedAt - killedAt} ms after the SIGKILL (earliest expiry was ${earliestExpiry - killedAt} ms away)`);
  });

  test("each returned URL is back in its host's queue (or already leased by the live fetcher)", () => {
    expect(whereAfter).toHaveLength(held.length);
    expect(whereAfter.filter((w) => w === "missing")).toEqual([]);
    expect(whereAfter.filter((w) => w === "queued").length).toBeGreaterThan(0);
  });

  test("the crawl completes: nothing lost, duplicates at most the dead fetcher's leases", () => {
    expect(run.code).toBe(0);
    const c = report.coverage!;
    expect(c.missing.examples).toEqual([]);
    expect(c.fetchedExpected).toBe(c.expected);
    expect(c.duplicates.extraFetches).toBeLessThanOrEqual(held.length);
    console.log(`lease-owner: ${c.duplicates.extraFetches} duplicate fetches (bound ${held.length}), ${c.fetchedExpected}/${c.expected} expected pages fetched`);
    expect(report.violations.concurrency.examples).toEqual([]);
    expect(report.violations.gap.examples).toEqual([]);
  });
});

/** "<host>\t<tier>\t<element>" (the element may itself hold a tab). */
function splitLease(data: string): [string, string, string] {
  const a = data.indexOf("\t");
  const b = data.indexOf("\t", a + 1);
  return [data.slice(0, a), data.slice(a + 1, b), data.slice(b + 1)];
}
