// kill -9 of the whole node (supervisor, fetchers, parsers and Redis) in the middle of a crawl,
// then the same command again: the crawl continues from Redis, no URL is lost, duplicate fetches
// are bounded by what was in flight, and every WARC file reads back (a partial record is repaired).
import { createReadStream, existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { Redis } from "ioredis";
import { WARCParser } from "warcio";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { readPageLog, runCrawl, simwebFlags, startCrawl, verifyLog, writeSeeds, type CrawlRun, type VerifyReport } from "./harness/crawl.js";
import { nodeRedisUrl, redisPid, statusOf } from "./harness/chaos.js";

const DELAY_MS = 20;
const FETCHER_CONCURRENCY = 16;

/** SIGSTOPs the node's fetcher at a moment it holds leases (retrying briefly); returns how many. */
async function freezeFetcherWithLeases(out: string): Promise<number> {
  const fetcher = (await statusOf(out))?.children.find((c) => c.role === "fetcher")?.pid;
  if (!fetcher) throw new Error("the node's /status names no fetcher process");
  const redis = new Redis(nodeRedisUrl(out), { lazyConnect: true });
  await redis.connect();
  try {
    for (let i = 0; i < 200; i++) {
      process.kill(fetcher, "SIGSTOP");
      const held = await redis.zcard("sc:leases");
      if (held > 0) return held;
      process.kill(fetcher, "SIGCONT");
      await new Promise((r) => setTimeout(r, 10));
    }
    throw new Error("the fetcher never held a lease");
  } finally {
    redis.disconnect();
  }
}

/**
 * Exists at all, zombies included: the next run must start only once the killed processes are
 * reaped (the WARC repair leaves a file alone while its writer's pid still answers), so this is
 * not the harness's alive(), which counts a zombie as dead.
 */
function exists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

describe("kill -9 of the whole node, then resume", () => {
  let sim: SimwebProcess;
  let dir: string;
  let out: string;
  let second: CrawlRun;
  let report: VerifyReport;
  let fetchedBeforeKill = 0;
  let leasesAtKill = 0;
  const configArgs: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sc-resume-"));
    const cfg = join(dir, "simweb.json");
    writeFileSync(cfg, JSON.stringify({ pageSize: { median: 6000, mean: 7000, min: 2000, max: 40000 }, hostPageCap: 150 }));
    configArgs.push("--preset", "polite", "--seed", "5", "--hosts", "40", "--config", cfg);
    sim = await startSimwebProcess({ extraArgs: configArgs.slice(0) });
    const seedsFile = join(dir, "seeds.txt");
    writeSeeds(configArgs, seedsFile);
    out = join(dir, "out");
    const args = [
      "--seeds", seedsFile, "--out", out, "--scope", "domains", "--delay", String(DELAY_MS), "--max-crawl-delay", "200",
      "--fetchers", "1", "--parsers", "1", "--fetcher-concurrency", String(FETCHER_CONCURRENCY), ...simwebFlags(sim),
    ];
    const first = startCrawl(args);
    // Wait until a good part of the crawl is done, then kill everything at once.
    const deadline = Date.now() + 120_000;
    while (Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      fetchedBeforeKill = readPageLog(out).length;
      if (fetchedBeforeKill >= 600) break;
    }
    const redis = redisPid(out)!;
    // Freeze the fetcher while it holds leases and give Redis's AOF (fsync every second) time to
    // write them, so the kill always leaves leased URLs for the next run to recover: a fast
    // crawl of small pages holds its leases for milliseconds and could otherwise be caught with none.
    leasesAtKill = await freezeFetcherWithLeases(out);
    await new Promise((r) => setTimeout(r, 1_500));
    process.kill(-first.proc.pid!, "SIGKILL");
    process.kill(redis, "SIGKILL");
    const killed = await first.done;
    expect(killed.signal).toBe("SIGKILL");
    for (let i = 0; i < 50 && exists(redis); i++) await new Promise((r) => setTimeout(r, 100));
    second = await runCrawl(args);
    await sim.stop();
    report = verifyLog(configArgs, sim.logFile, { minGapMs: DELAY_MS, maxConcurrency: 1, seedsFile, scope: "domains", maxCrawlDelayMs: 200 });
  }, 600_000);

  afterAll(async () => {
    await sim?.stop();
  });

  test("the crawl was really interrupted in the middle", () => {
    expect(fetchedBeforeKill).toBeGreaterThanOrEqual(600);
    expect(report.coverage!.expected).toBeGreaterThan(fetchedBeforeKill + 200);
  });

  test("the second run finishes the crawl: no URL lost", () => {
    expect(second.code).toBe(0);
    expect(leasesAtKill).toBeGreaterThan(0);
    expect(second.stderr).toMatch(/recovered [1-9]\d* leased URLs/);
    const c = report.coverage!;
    expect(c.missing.examples).toEqual([]);
    expect(c.fetchedExpected).toBe(c.expected);
  });

  test("duplicate fetches are bounded by what was in flight at the kill", () => {
    expect(report.coverage!.duplicates.extraFetches).toBeLessThanOrEqual(FETCHER_CONCURRENCY);
  });

  test("politeness held across the crash (server's own log)", () => {
    expect(report.violations.disallowed.count).toBe(0);
    expect(report.violations.gap.examples).toEqual([]);
  });

  test("every WARC file reads back completely after repair", async () => {
    const warcDir = join(out, "warc");
    const names = readdirSync(warcDir);
    expect(names.filter((f) => f.endsWith(".open"))).toEqual([]);
    const files = names.filter((f) => f.endsWith(".warc.gz"));
    expect(files.length).toBeGreaterThanOrEqual(2);
    const urls = new Set<string>();
    for (const f of files) {
      for await (const record of new WARCParser(createReadStream(join(warcDir, f)))) {
        if (record.warcType === "response") urls.add(record.warcTargetURI!);
        await record.readFully(false);
      }
    }
    const lines = readPageLog(out).filter((p) => p.status !== null);
    for (const p of lines) expect(urls.has(p.url), p.url).toBe(true);
    expect(existsSync(join(out, "summary.json"))).toBe(true);
  });
});
