// Full disk at node level: the node's output folder lives on a real 8 MB tmpfs that the
// test fills up mid-crawl. Writes fail with ENOSPC -> the node pauses (no new request starts,
// the reason is logged and shown in /status), resumes once the test frees space, and finishes
// with nothing lost and every WARC file readable. Redis runs elsewhere (its AOF is not on the full
// disk: that is a different failure). Needs root to mount; skipped with the reason otherwise.
import { execFileSync } from "node:child_process";
import { closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync, unlinkSync, writeFileSync, writeSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { startRedis, type TestRedis } from "./harness/redis.js";
import { readPageLog, readRequestLog, readWarcResponses, simwebFlags, startCrawl, verifyLog, writeSeeds, type CrawlRun, type VerifyReport } from "./harness/crawl.js";
import { statusOf, type NodeStatus } from "./harness/chaos.js";
import { setTimeout as sleep } from "node:timers/promises";

const FETCHER_CONCURRENCY = 8;

const dir = mkdtempSync(join(tmpdir(), "sc-disk-full-"));
const disk = join(dir, "disk");
mkdirSync(disk);
let mountError = "";
try {
  execFileSync("mount", ["-t", "tmpfs", "-o", "size=8m", "tmpfs", disk], { stdio: ["ignore", "ignore", "pipe"] });
} catch (err) {
  mountError = `cannot mount a tmpfs (needs root): ${(err as Error).message.split("\n")[0]}`;
  console.warn(`crawl-disk-full: SKIPPED: ${mountError}`);
}

/** Writes zeros into `file` until the file system says ENOSPC; returns the bytes written. */
function fillDisk(file: string): number {
  const fd = openSync(file, "w");
  const chunk = Buffer.alloc(64 * 1024);
  let n = 0;
  try {
    for (;;) n += writeSync(fd, chunk);
  } catch (err) {
    if ((err as { code?: string }).code !== "ENOSPC") throw err;
  } finally {
    closeSync(fd);
  }
  return n;
}

async function waitForStatus(out: string, what: string, ok: (s: NodeStatus) => boolean, timeoutMs = 60_000): Promise<NodeStatus> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const s = await statusOf(out);
    if (s && ok(s)) return s;
    if (Date.now() > until) throw new Error(`timed out waiting for: ${what}; last status ${JSON.stringify(s?.stats ?? null).slice(0, 500)}`);
    await sleep(100);
  }
}

type Pressure = { pressure?: { diskFull?: string } };
const diskFullOf = (s: NodeStatus) => (s.stats as NodeStatus["stats"] & Pressure).pressure?.diskFull;

describe.skipIf(mountError !== "")("a full output disk pauses the node; it resumes when space returns", () => {
  let sim: SimwebProcess;
  let redis: TestRedis;
  let out: string;
  let run: CrawlRun;
  let report: VerifyReport;
  let pauseReason = "";
  let metricsWhilePaused = "";
  let filled = 0;
  /** Server-side request times: the node was paused (and no space was back yet) in [quietFrom, spaceBackAt). */
  let quietFrom = 0;
  let spaceBackAt = 0;
  let stillPausedAtEnd = false;
  let resumedAt = 0;
  const leasedDuringPause: number[] = [];
  let configArgs: string[];

  beforeAll(async () => {
    const cfg = join(dir, "simweb.json");
    writeFileSync(cfg, JSON.stringify({ pageSize: { median: 8000, mean: 9000, min: 3000, max: 30000 }, hostPageCap: 25 }));
    configArgs = ["--preset", "polite", "--seed", "5", "--hosts", "30", "--config", cfg];
    sim = await startSimwebProcess({ extraArgs: configArgs });
    redis = await startRedis();
    const seedsFile = join(dir, "seeds.txt");
    writeSeeds(configArgs, seedsFile);
    out = join(disk, "out");
    const crawl = startCrawl([
      "--seeds", seedsFile, "--out", out, "--redis", redis.url, "--scope", "domains", "--delay", "20", "--max-crawl-delay", "200",
      // This test is about a write failing with ENOSPC; the free-space pause (--min-free-disk) has its own (crawl-disk-ship).
      "--min-free-disk", "0",
      "--fetchers", "1", "--parsers", "1", "--fetcher-concurrency", String(FETCHER_CONCURRENCY), "--fetch-timeout", "5000",
      ...simwebFlags(sim),
    ]);
    const filler = join(disk, "filler");
    try {
      await waitForStatus(out, "40 pages fetched", (s) => s.stats.fetched >= 40);
      filled = fillDisk(filler);
      const paused = await waitForStatus(out, "the node to report a full disk", (s) => diskFullOf(s) !== undefined);
      pauseReason = diskFullOf(paused) ?? "";
      const { statusPort } = JSON.parse(readFileSync(join(out, "status.json"), "utf8")) as { statusPort: number };
      metricsWhilePaused = await (await fetch(`http://127.0.0.1:${statusPort}/metrics`, { signal: AbortSignal.timeout(5000) })).text();
      // Requests already in flight may still end; after that nothing new may start.
      await sleep(1500);
      quietFrom = Date.now();
      for (let i = 0; i < 4; i++) {
        const s = await statusOf(out);
        if (s) leasedDuringPause.push(s.stats.counters.leased ?? 0);
        await sleep(1000);
      }
      // Straight from Redis (the status page is sampled): still paused right before space returns.
      const client = redis.client();
      stillPausedAtEnd = (await client.hget("sc:flow", "disk")) !== null;
      client.disconnect();
      spaceBackAt = Date.now();
      unlinkSync(filler);
      await waitForStatus(out, "the node to resume", (s) => diskFullOf(s) === undefined);
      resumedAt = Date.now();
    } finally {
      rmSync(filler, { force: true });
      run = await crawl.done;
    }
    await sim.stop();
    report = verifyLog(configArgs, sim.logFile, { minGapMs: 20, maxConcurrency: 1, seedsFile, scope: "domains", maxCrawlDelayMs: 200 });
    console.log(`disk-full: filled ${filled} bytes; paused with "${pauseReason.slice(0, 160)}"; resumed ${resumedAt - spaceBackAt} ms after space returned (seen by polling /status); duplicates ${report.coverage?.duplicates.extraFetches}`);
  }, 240_000);

  afterAll(async () => {
    await sim?.stop();
    await redis?.stop();
    if (!mountError) {
      try {
        execFileSync("umount", [disk]);
      } catch {
        execFileSync("umount", ["-l", disk]);
      }
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test("writes failed with ENOSPC and the node said why (log and /status)", () => {
    expect(filled).toBeGreaterThan(0);
    expect(pauseReason).toMatch(/ENOSPC/);
    expect(metricsWhilePaused).toMatch(/^shardcrawl_disk_full_paused\{[^}]*\} 1$/m);
    expect(run.stderr).toMatch(/fetching paused: output disk full \(.*ENOSPC/);
    expect(run.stderr).toMatch(/disk space is back after \d+ s: fetching resumed/);
  });

  test("while paused no request started (node counters and the server's own log)", () => {
    expect(leasedDuringPause.length).toBe(4);
    expect(new Set(leasedDuringPause).size).toBe(1);
    expect(stillPausedAtEnd).toBe(true);
    const started = readRequestLog(sim.logFile).filter((r) => r.ts >= quietFrom && r.ts < spaceBackAt);
    expect(started).toEqual([]);
  });

  test("it resumed and finished: nothing lost, duplicates bounded, politeness held", () => {
    expect(run.code).toBe(0);
    const c = report.coverage!;
    expect(c.missing.examples).toEqual([]);
    expect(c.fetchedExpected).toBe(c.expected);
    expect(c.duplicates.extraFetches).toBeLessThanOrEqual(FETCHER_CONCURRENCY);
    expect(report.violations.gap.examples).toEqual([]);
    expect(report.violations.concurrency.examples).toEqual([]);
  });

  test("the output is whole: every fetched page is in a WARC file that reads back", async () => {
    const { responses, openFiles } = await readWarcResponses(out);
    expect(openFiles).toEqual([]);
    const fetched = readPageLog(out).filter((l) => l.status !== null);
    expect(fetched.length).toBeGreaterThan(40);
    for (const l of fetched) expect(responses.has(l.url), l.url).toBe(true);
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as { stats: { counters: Record<string, number> } };
    expect(summary.stats.counters.diskPauses).toBeGreaterThanOrEqual(1);
  });
});
