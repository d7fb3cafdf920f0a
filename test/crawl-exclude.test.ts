// The site owner's opt-out list end to end: a crawl of a simweb with one domain listed in
// --exclude-file and another excluded mid-crawl with `shardcrawl exclude add`; then kill -9 of the
// whole node and the same command again. Proven from simweb's own request log:
// - no request to the file's domain at all, none to the other domain starting later than 5 s after
//   `exclude add` returned (and none in the second run: the list survived the kill);
// - every page of the other domains is fetched; inspect url answers refused: excluded.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { readPageLog, readRequestLog, runCrawl, SHARDCRAWL, simwebFlags, startCrawl, verifyLog, writeSeeds, type CrawlRun, type VerifyReport } from "./harness/crawl.js";
import { redisPid } from "./harness/chaos.js";

const DELAY_MS = 100;
const domainOf = (host: string) => host.split(".").slice(-2).join(".");

function shardcrawl(args: string[]): { code: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [SHARDCRAWL, ...args], { encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr };
}

describe("the site owner's opt-out list", () => {
  let sim: SimwebProcess;
  let out: string;
  let second: CrawlRun;
  let report: VerifyReport;
  let fileDomain = "";
  let midDomain = "";
  let addReturnedAt = 0;
  let addOutput = "";
  let secondStartedAt = 0;
  let listAfter = "";
  const configArgs: string[] = [];

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-exclude-"));
    const cfg = join(dir, "simweb.json");
    writeFileSync(cfg, JSON.stringify({ pageSize: { median: 4000, mean: 5000, min: 1000, max: 20000 }, pagesPerHost: { min: 30, alpha: 1.2, max: 60 }, hostPageCap: 60 }));
    configArgs.push("--preset", "polite", "--seed", "21", "--hosts", "10", "--config", cfg);
    sim = await startSimwebProcess({ extraArgs: configArgs.slice(0) });
    const seeds = writeSeeds(configArgs, join(dir, "all-seeds.txt"));
    const domains = [...new Set(seeds.map((u) => domainOf(new URL(u).hostname)))];
    expect(domains.length).toBeGreaterThanOrEqual(4);
    fileDomain = domains[0]!;
    midDomain = domains[1]!;
    const seedsFile = join(dir, "seeds.txt");
    writeFileSync(seedsFile, seeds.join("\n") + "\n");
    const keptSeeds = join(dir, "kept-seeds.txt");
    writeFileSync(keptSeeds, seeds.filter((u) => ![fileDomain, midDomain].includes(domainOf(new URL(u).hostname))).join("\n") + "\n");
    const excludeFile = join(dir, "exclude.txt");
    writeFileSync(excludeFile, `# owners who asked\n${fileDomain} asked by mail\n`);
    out = join(dir, "out");
    const args = [
      "--seeds", seedsFile, "--out", out, "--scope", "domains", "--delay", String(DELAY_MS), "--max-crawl-delay", "200",
      "--fetchers", "1", "--parsers", "1", "--exclude-file", excludeFile, ...simwebFlags(sim),
    ];
    const first = startCrawl(args);
    // Exclude the second domain once it is being crawled.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && !readRequestLog(sim.logFile).some((r) => domainOf(r.host) === midDomain && !r.path.startsWith("/robots.txt"))) {
      await new Promise((r) => setTimeout(r, 100));
    }
    const add = shardcrawl(["exclude", "add", midDomain, "--reason", "owner asked to stop", "--out", out]);
    addReturnedAt = Date.now();
    addOutput = add.stdout + add.stderr;
    expect(add.code, addOutput).toBe(0);
    // Let the crawl go on for a while, then kill -9 everything.
    await new Promise((r) => setTimeout(r, 6_000));
    const redis = redisPid(out)!;
    process.kill(-first.proc.pid!, "SIGKILL");
    process.kill(redis, "SIGKILL");
    await first.done;
    await new Promise((r) => setTimeout(r, 500));
    secondStartedAt = Date.now();
    second = await runCrawl(args);
    await sim.stop();
    listAfter = shardcrawl(["exclude", "list", "--out", out]).stdout;
    report = verifyLog(configArgs, sim.logFile, { minGapMs: DELAY_MS, maxConcurrency: 1, seedsFile: keptSeeds, scope: "domains", maxCrawlDelayMs: 200, politenessKey: "domain" });
  }, 300_000);

  afterAll(async () => {
    await sim?.stop();
  });

  test("exclude add removed queued URLs and returned", () => {
    expect(addOutput).toMatch(new RegExp(`excluded ${midDomain.replace(".", "\\.")} \\(host\\); \\d+ queued URLs removed`));
  });

  test("no request to the exclude file's domain; none to the other later than 5 s after exclude add returned", () => {
    const log = readRequestLog(sim.logFile);
    expect(log.filter((r) => domainOf(r.host) === fileDomain)).toEqual([]);
    const mid = log.filter((r) => domainOf(r.host) === midDomain);
    expect(mid.length).toBeGreaterThan(0);
    expect(mid.filter((r) => r.ts > addReturnedAt + 5000)).toEqual([]);
    expect(mid.filter((r) => r.ts >= secondStartedAt)).toEqual([]);
  });

  test("the second run finishes, and every page of the other domains is fetched", () => {
    expect(second.code, second.stderr).toBe(0);
    const c = report.coverage!;
    expect(c.missing.examples).toEqual([]);
    expect(c.fetchedExpected).toBe(c.expected);
    expect(report.violations.gap.examples).toEqual([]);
  });

  test("the list survived kill -9 and restart; inspect url says refused: excluded", () => {
    expect(listAfter).toContain(`${midDomain}\thost\t`);
    expect(listAfter).toContain("owner asked to stop");
    expect(listAfter).toContain(`${fileDomain}\thost\t`);
    const url = readPageLog(out).find((p) => domainOf(new URL(p.url).hostname) === midDomain)!.url;
    const r = shardcrawl(["inspect", "url", url.replace(/\/[^/]*$/, "/never-linked-page"), "--out", out]);
    expect(r.code, r.stdout + r.stderr).toBe(4);
    expect(r.stdout).toMatch(/REFUSED \[excluded\]: excluded by .* \(reason: owner asked to stop\)/);
    const summary = readFileSync(join(out, "summary.json"), "utf8");
    expect(summary.length).toBeGreaterThan(0);
  });
});
