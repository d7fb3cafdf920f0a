// robots.txt outages and long Crawl-delays on a real simweb, crawled by one real node; judged from
// simweb's own request log:
// - a host whose robots.txt answers 503 (Retry-After 2 s) for its first seconds, one that resets
//   and one that hangs: each waits -- no page request before robots.txt answered 200, robots.txt
//   tries spaced by the back-off -- then all its reachable allowed pages are fetched, none lost;
// - a host whose robots.txt never recovers: the crawl ends within --max-defer-wait of the rest,
//   exit 0, its URLs reported as deferred (summary.json, `inspect host`); the same command against
//   simweb without the outage fetches them, and the two runs together cover everything, 0 duplicates;
// - a 5 s Crawl-delay with --max-crawl-delay 10000 is honoured (every gap >= 5 s); a 20 s one is
//   skipped: no page request, its URLs refused as crawl-delay-too-long;
// - a User-Agent without a contact is refused with a clear message and exit code 78.
import { spawnSync } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { readPageLog, readRequestLog, runCrawl, SHARDCRAWL, simwebFlags, verifyLog, writeSeeds, type CrawlRun, type PageLine, type VerifyReport } from "./harness/crawl.js";

const DELAY_MS = 100;
const BACKOFF_BASE_MS = 1000;
const BACKOFF_MAX_MS = 4000;
const MAX_DEFER_WAIT_MS = 3000;
const MAX_CRAWL_DELAY_MS = 10_000;
const RETRY_AFTER_S = 2;

// World of seed 5, 10 hosts (see the host list in the config below): chosen so every host serves
// a normal robots.txt when no fault is configured.
// Outage windows count from each host's first robots.txt request (simweb robots-faults.ts).
const OUTAGE_503 = { index: 3, name: "www.d1.test", forMs: 14_000 };
const NEVER = { index: 9, name: "www.d4.test" };
const RESET = { index: 0, name: "www.d0.test", forMs: 12_000 };
const HANG = { index: 4, name: "www.d2.test", forMs: 12_000 };
const DELAY_5S = { index: 2, name: "shop.d0.test", seconds: 5 };
const DELAY_20S = { index: 6, name: "shop.d2.test", seconds: 20 };

type Req = ReturnType<typeof readRequestLog>[number];

describe("robots.txt outages and long Crawl-delays", () => {
  let dir: string;
  let out: string;
  let seedsFile: string;
  let first: CrawlRun;
  let second: CrawlRun;
  let firstEnd = 0;
  let log1: Req[];
  let log2: Req[];
  let pages: PageLine[];
  let summary1: { reason: string; deferred?: { hosts: number; urls: number; list: Array<{ host: string; urls: number; tries: number; lastError: string; nextTry: string }> } };
  let summary2: { reason: string; deferred?: unknown };
  let inspectDuring = "";
  let both: VerifyReport;
  const baseConfig = {
    httpsShare: 0, pagesPerHost: { min: 4, alpha: 1.5, max: 10 }, hostPageCap: 10, hangMs: 20_000,
    crawlDelays: [{ host: DELAY_5S.index, seconds: DELAY_5S.seconds }, { host: DELAY_20S.index, seconds: DELAY_20S.seconds }],
  };
  const configArgs = (file: string) => ["--preset", "tiny", "--seed", "5", "--hosts", "10", "--config", file];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sc-robots-outage-"));
    const withOutages = join(dir, "simweb-outages.json");
    writeFileSync(withOutages, JSON.stringify({
      ...baseConfig,
      robotsOutages: [
        { host: OUTAGE_503.index, mode: "503", forMs: OUTAGE_503.forMs, retryAfterSec: RETRY_AFTER_S },
        { host: NEVER.index, mode: "503" },
        { host: RESET.index, mode: "reset", forMs: RESET.forMs },
        { host: HANG.index, mode: "timeout", forMs: HANG.forMs },
      ],
    }));
    const recovered = join(dir, "simweb-recovered.json");
    writeFileSync(recovered, JSON.stringify(baseConfig));
    seedsFile = join(dir, "seeds.txt");
    writeSeeds(configArgs(recovered), seedsFile);
    out = join(dir, "out");
    const crawlArgs = (sim: SimwebProcess) => [
      "--seeds", seedsFile, "--out", out, "--scope", "domains", "--delay", String(DELAY_MS), "--fetchers", "1", "--parsers", "1",
      "--fetch-timeout", "2000", "--max-crawl-delay", String(MAX_CRAWL_DELAY_MS), "--retry-max-attempts", "1",
      ...simwebFlags(sim),
      "--robots-backoff-base", String(BACKOFF_BASE_MS), "--robots-backoff-max", String(BACKOFF_MAX_MS), "--max-defer-wait", String(MAX_DEFER_WAIT_MS),
    ];

    const sim1 = await startSimwebProcess({ extraArgs: configArgs(withOutages) });
    first = await runCrawl(crawlArgs(sim1));
    firstEnd = Date.now();
    summary1 = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as typeof summary1;
    inspectDuring = spawnSync(process.execPath, [SHARDCRAWL, "inspect", "host", NEVER.name, "--out", out], { encoding: "utf8" }).stdout;
    await sim1.stop();
    log1 = readRequestLog(sim1.logFile);

    // The outage is over: the same command continues the waiting host.
    const sim2 = await startSimwebProcess({ extraArgs: configArgs(recovered) });
    second = await runCrawl(crawlArgs(sim2));
    summary2 = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as typeof summary2;
    await sim2.stop();
    log2 = readRequestLog(sim2.logFile);
    pages = readPageLog(out);
    const combined = join(dir, "both.jsonl");
    writeFileSync(combined, readFileSync(sim1.logFile));
    appendFileSync(combined, readFileSync(sim2.logFile));
    both = verifyLog(configArgs(recovered), combined, { minGapMs: DELAY_MS, maxConcurrency: 1, seedsFile, scope: "domains", maxCrawlDelayMs: MAX_CRAWL_DELAY_MS });
  }, 600_000);

  afterAll(() => undefined);

  const ofHost = (log: Req[], host: string) => log.filter((r) => r.host === host);
  const robotsOf = (log: Req[], host: string) => ofHost(log, host).filter((r) => r.path === "/robots.txt");
  const pagesOf = (log: Req[], host: string) => ofHost(log, host).filter((r) => r.path !== "/robots.txt");

  test("both runs end as done with exit 0; the first reports the never-recovering host as deferred", () => {
    expect(first.stderr).not.toMatch(/fatal|failed unexpectedly/);
    expect(first.code).toBe(0);
    expect(summary1.reason).toBe("done");
    const d = summary1.deferred!;
    expect(d).toBeDefined();
    expect(d.list.map((h) => h.host)).toEqual([NEVER.name]);
    expect(d.urls).toBeGreaterThanOrEqual(1);
    expect(d.list[0]!.tries).toBeGreaterThanOrEqual(2);
    expect(d.list[0]!.lastError).toMatch(/503/);
    expect(first.stderr).toMatch(/deferred: \d+ URLs of 1 hosts wait for robots\.txt/);
    expect(second.code).toBe(0);
    expect(summary2.reason).toBe("done");
    expect(summary2.deferred).toBeUndefined();
  });

  test("`inspect host` shows the outage and the next try", () => {
    expect(inspectDuring).toMatch(/robots\.txt OUTAGE since .*failed tries.*robots\.txt answered 503.*next try/);
    expect(inspectDuring).toMatch(/URLs wait queued/);
  });

  test("the never-recovering host held the first crawl no longer than --max-defer-wait after the rest", () => {
    const others = log1.filter((r) => r.host !== NEVER.name);
    const lastOther = Math.max(...others.map((r) => r.end));
    expect(pagesOf(log1, NEVER.name)).toHaveLength(0);
    // The wait, plus the node's own shutdown (processes stop, Redis saves) on a loaded machine.
    expect(firstEnd - lastOther).toBeLessThan(MAX_DEFER_WAIT_MS + 30_000);
    // It was tried again meanwhile, on the back-off.
    expect(robotsOf(log1, NEVER.name).length).toBeGreaterThanOrEqual(2);
  });

  test("no page of a host in an outage is requested before its robots.txt answered 200", () => {
    for (const host of [OUTAGE_503.name, RESET.name, HANG.name, NEVER.name]) {
      for (const log of [log1, log2]) {
        const ok = robotsOf(log, host).filter((r) => r.status === 200).map((r) => r.end);
        const firstOk = ok.length ? Math.min(...ok) : Infinity;
        for (const p of pagesOf(log, host)) expect(p.ts, `${host} ${p.path}`).toBeGreaterThanOrEqual(firstOk);
      }
    }
    // The outages really happened: failed tries first, then a 200.
    expect(robotsOf(log1, OUTAGE_503.name).filter((r) => r.status === 503).length).toBeGreaterThanOrEqual(2);
    expect(robotsOf(log1, OUTAGE_503.name).some((r) => r.status === 200)).toBe(true);
    expect(robotsOf(log1, RESET.name).length).toBeGreaterThanOrEqual(2);
    expect(robotsOf(log1, HANG.name).length).toBeGreaterThanOrEqual(2);
  });

  test("robots.txt tries are spaced by the back-off (and Retry-After), never sooner", () => {
    for (const { name, retryAfterMs } of [{ name: OUTAGE_503.name, retryAfterMs: RETRY_AFTER_S * 1000 }, { name: NEVER.name, retryAfterMs: 0 }, { name: RESET.name, retryAfterMs: 0 }]) {
      const tries = robotsOf(log1, name).sort((a, b) => a.ts - b.ts);
      for (let i = 1; i < tries.length; i++) {
        const backoff = Math.min(BACKOFF_MAX_MS, BACKOFF_BASE_MS * 2 ** (i - 1));
        const want = Math.max(backoff, retryAfterMs, DELAY_MS);
        expect(tries[i]!.ts - tries[i - 1]!.end, `${name} try ${i + 1}`).toBeGreaterThanOrEqual(want);
      }
    }
  });

  test("every reachable allowed page is fetched exactly once over both runs; nothing lost", () => {
    expect(both.violations.gap.count).toBe(0);
    expect(both.violations.concurrency.count).toBe(0);
    expect(both.violations.disallowed.count).toBe(0);
    const c = both.coverage!;
    expect(c.missing.examples).toEqual([]);
    expect(c.missing.count).toBe(0);
    expect(c.duplicates.extraFetches).toBe(0);
    expect(c.fetchedExpected).toBe(c.expected);
    // The waiting host's pages came in the second run.
    expect(pagesOf(log2, NEVER.name).length).toBeGreaterThan(0);
    // No page-log line of a waiting host says it failed for robots.txt.
    expect(pages.filter((p) => p.error === "robots-unavailable")).toEqual([]);
  });

  test("a 5 s Crawl-delay under --max-crawl-delay is honoured: every gap >= 5 s", () => {
    const reqs = [...log1, ...log2].filter((r) => r.host === DELAY_5S.name).sort((a, b) => a.ts - b.ts);
    expect(pagesOf(reqs, DELAY_5S.name).length).toBeGreaterThanOrEqual(2);
    for (let i = 1; i < reqs.length; i++) {
      // After robots.txt the host's Crawl-delay is known; every later start keeps it from the previous end.
      if (reqs[i - 1]!.path === "/robots.txt") continue;
      expect(reqs[i]!.ts - reqs[i - 1]!.end, `${reqs[i]!.path}`).toBeGreaterThanOrEqual(DELAY_5S.seconds * 1000);
    }
  });

  test("a 20 s Crawl-delay above --max-crawl-delay skips the host: no page request, URLs refused as crawl-delay-too-long", () => {
    expect(pagesOf([...log1, ...log2], DELAY_20S.name)).toHaveLength(0);
    const refused = pages.filter((p) => new URL(p.url).hostname === DELAY_20S.name);
    expect(refused.length).toBeGreaterThan(0);
    for (const p of refused) expect(p.error).toBe("crawl-delay-too-long");
  });
});

describe("a User-Agent must carry a contact", () => {
  const run = (args: string[]) => spawnSync(process.execPath, [SHARDCRAWL, "crawl", "--progress", "off", ...args], { encoding: "utf8", timeout: 60_000 });
  const dir = mkdtempSync(join(tmpdir(), "sc-ua-"));
  const seeds = join(dir, "seeds.txt");
  writeFileSync(seeds, "http://www.example.test/\n");

  test("without a URL or e-mail address the node refuses to start (exit 78, clear message)", () => {
    const r = run(["--seeds", seeds, "--out", join(dir, "a"), "--user-agent", "mybot/1.0"]);
    expect(r.status).toBe(78);
    expect(r.stderr).toMatch(/refusing to start: the User-Agent "mybot\/1\.0" gives site owners no way to reach you/);
    expect(r.stderr).toMatch(/--user-agent/);
  });

  test("the project's default User-Agent names the project, not the operator: refused", () => {
    const r = run(["--seeds", seeds, "--out", join(dir, "b")]);
    expect(r.status).toBe(78);
    expect(r.stderr).toMatch(/it is the default/);
  });

  test("the deploy files' placeholder is refused even with --allow-private", () => {
    const r = run(["--seeds", seeds, "--out", join(dir, "c"), "--allow-private", "--user-agent", "shardcrawl/0.1 (+SET-YOUR-CONTACT)"]);
    expect(r.status).toBe(78);
    expect(r.stderr).toMatch(/placeholder/);
  });
});
