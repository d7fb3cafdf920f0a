// Page bodies wait for the parser in segment files under out/spool/ (the Redis parse queue holds
// only a reference). A machine crash can lose what the kernel had not written yet: here the parser
// is frozen so pages pile up in the spool, the whole node is killed -9, and every segment is cut
// in half and has a byte flipped near its start. The resumed crawl must fetch those pages again:
// no URL is lost.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { readPageLog, readRequestLog, runCrawl, simwebFlags, startCrawl, verifyLog, writeSeeds, type CrawlRun, type VerifyReport } from "./harness/crawl.js";
import { statusOf, waitForFetched } from "./harness/chaos.js";
import { setTimeout as sleep } from "node:timers/promises";

const DELAY_MS = 20;

describe("spool files lost in a crash", () => {
  let sim: SimwebProcess;
  let out: string;
  let second: CrawlRun;
  let report: VerifyReport;
  let segments = 0;
  let parseStageAtKill = 0;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-spool-"));
    const cfg = join(dir, "simweb.json");
    writeFileSync(cfg, JSON.stringify({ pageSize: { median: 5000, mean: 6000, min: 2000, max: 20000 }, hostPageCap: 40 }));
    const configArgs = ["--preset", "polite", "--seed", "9", "--hosts", "12", "--config", cfg];
    sim = await startSimwebProcess({ extraArgs: configArgs });
    const seedsFile = join(dir, "seeds.txt");
    writeSeeds(configArgs, seedsFile);
    out = join(dir, "out");
    const args = [
      "--seeds", seedsFile, "--out", out, "--scope", "domains", "--delay", String(DELAY_MS), "--max-crawl-delay", "200",
      "--fetchers", "1", "--parsers", "1", "--fetcher-concurrency", "16", ...simwebFlags(sim),
    ];
    const first = startCrawl(args);
    // Let the crawl get going, then freeze the parser so fetched pages pile up in the spool.
    const status = await waitForFetched(out, 40);
    const parserPid = status?.children.find((c) => c.role === "parser")?.pid;
    expect(parserPid).toBeDefined();
    process.kill(parserPid!, "SIGSTOP");
    const spool = join(out, "spool");
    for (let i = 0; i < 300; i++) {
      const st = (await statusOf(out)) as { stats: { parseQueue: number; parseInFlight: number } } | null;
      parseStageAtKill = st ? st.stats.parseQueue + st.stats.parseInFlight : 0;
      if (parseStageAtKill >= 12) break;
      await sleep(100);
    }
    const redisPid = (JSON.parse(readFileSync(join(out, "redis", "connection.json"), "utf8")) as { pid: number }).pid;
    process.kill(-first.proc.pid!, "SIGKILL");
    process.kill(redisPid, "SIGKILL");
    await first.done;
    await sleep(500);
    // The crash: every segment loses its second half, and the body at its start a byte.
    for (const f of readdirSync(spool)) {
      const path = join(spool, f);
      const b = readFileSync(path);
      if (b.length < 200) continue;
      b[100] = b[100]! ^ 0xff;
      writeFileSync(path, b.subarray(0, b.length >> 1));
      segments++;
    }
    second = await runCrawl(args);
    await sim.stop();
    report = verifyLog(configArgs, sim.logFile, { minGapMs: DELAY_MS, maxConcurrency: 1, seedsFile, scope: "domains", maxCrawlDelayMs: 200 });
  }, 300_000);

  afterAll(async () => {
    await sim?.stop();
  });

  test("pages were waiting in the spool when the node was killed, and the spool was damaged", () => {
    expect(parseStageAtKill).toBeGreaterThanOrEqual(12);
    expect(segments).toBeGreaterThanOrEqual(1);
  });

  test("the resumed crawl fetched the lost pages again and parsed every page it was served", () => {
    expect(second.code).toBe(0);
    expect(second.stderr).toMatch(/fetching it again/);
    const summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as { stats: { counters: Record<string, number> } };
    const lost = summary.stats.counters.spoolLost ?? 0;
    expect(lost).toBeGreaterThanOrEqual(2); // at least the first body and the last of some segment
    expect(lost).toBeLessThanOrEqual(parseStageAtKill + 16); // + fetches in flight at the kill
    // Every page the server answered (robots.txt files aside, also those reached by a redirect)
    // has a page-log line from the parser.
    const parsed = new Set(readPageLog(out).filter((p) => p.status !== null).map((p) => { const u = new URL(p.url); return u.host + u.pathname + u.search; }));
    const served = readRequestLog(sim.logFile).filter((e) => e.status !== 0 && !e.path.endsWith("/robots.txt")).map((e) => e.host + e.path);
    expect(served.filter((s) => !parsed.has(s))).toEqual([]);
    expect(report.coverage!.missing.examples).toEqual([]);
    expect(report.coverage!.fetchedExpected).toBe(report.coverage!.expected);
  });

  test("the spool is empty once the crawl is done", () => {
    expect(readdirSync(join(out, "spool"))).toEqual([]);
  });
});
