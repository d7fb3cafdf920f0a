// A fetcher and a parser killed -9 mid-crawl while the supervisor lives: the supervisor restarts
// them and the crawl finishes in the same run, so no node start comes to repair what they left.
// Their unfinished WARC and page-log files (*.open) must be repaired once they are gone: the
// output folder of a finished crawl holds only whole files that standard tools read.
import { mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { readPageLog, readWarcResponses, simwebFlags, startCrawl, verifyLog, writeSeeds, type CrawlRun, type VerifyReport } from "./harness/crawl.js";
import { waitForFetched } from "./harness/chaos.js";

const DELAY_MS = 20;

describe("children killed mid-crawl, the supervisor alive", () => {
  let sim: SimwebProcess;
  let out: string;
  let run: CrawlRun;
  let report: VerifyReport;
  let openAtKill: string[] = [];
  const killed: number[] = [];

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-child-kill-"));
    const cfg = join(dir, "simweb.json");
    writeFileSync(cfg, JSON.stringify({ pageSize: { median: 5000, mean: 6000, min: 2000, max: 20000 }, hostPageCap: 40 }));
    const configArgs = ["--preset", "polite", "--seed", "5", "--hosts", "12", "--config", cfg];
    sim = await startSimwebProcess({ extraArgs: configArgs });
    const seedsFile = join(dir, "seeds.txt");
    writeSeeds(configArgs, seedsFile);
    out = join(dir, "out");
    const crawl = startCrawl([
      "--seeds", seedsFile, "--out", out, "--scope", "domains", "--delay", String(DELAY_MS), "--max-crawl-delay", "200",
      "--fetchers", "1", "--parsers", "1", "--fetcher-concurrency", "8", ...simwebFlags(sim),
    ]);
    const status = await waitForFetched(out, 60);
    openAtKill = [...readdirSync(join(out, "warc")), ...readdirSync(join(out, "pages"))].filter((f) => f.endsWith(".open"));
    for (const role of ["parser", "fetcher"]) {
      const pid = status?.children.find((c) => c.role === role)?.pid;
      if (pid === undefined) continue;
      process.kill(pid, "SIGKILL");
      killed.push(pid);
    }
    run = await crawl.done;
    await sim.stop();
    report = verifyLog(configArgs, sim.logFile, { minGapMs: DELAY_MS, maxConcurrency: 1, seedsFile, scope: "domains", maxCrawlDelayMs: 200 });
  }, 300_000);

  afterAll(async () => {
    await sim?.stop();
  });

  test("both were killed while writing, and the crawl finished in the same run", () => {
    expect(killed).toHaveLength(2);
    expect(openAtKill.some((f) => f.endsWith(".warc.gz.open"))).toBe(true);
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(/parser 0 exited/);
    expect(run.stderr).toMatch(/repaired \d+ files left by parser 0/);
  });

  test("no unfinished file is left, every WARC file reads back, and every parsed page has its response record", async () => {
    const left = [...readdirSync(join(out, "warc")), ...readdirSync(join(out, "pages"))].filter((f) => f.endsWith(".open") || f.endsWith(".tmp"));
    expect(left).toEqual([]);
    const { responses, openFiles } = await readWarcResponses(out);
    expect(openFiles).toEqual([]);
    const missing = readPageLog(out).filter((l) => l.status !== null && !responses.has(l.url)).map((l) => l.url);
    // Pages whose records were cut from the killed parser's tail were parsed again (their acks never happened).
    expect(missing).toEqual([]);
  });

  test("nothing lost and politeness held", () => {
    expect(report.coverage!.missing.examples).toEqual([]);
    expect(report.coverage!.fetchedExpected).toBe(report.coverage!.expected);
    expect(report.violations.gap.examples).toEqual([]);
    expect(report.violations.concurrency.examples).toEqual([]);
  });
});
