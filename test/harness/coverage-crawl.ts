// The coverage crawl as a suite: one node crawls a simweb web with --scope domains, and the crawl is
// proven from simweb's own request log and our output (every reachable, robots-allowed, in-scope
// page fetched exactly once; no disallowed path requested; politeness gaps and concurrency held;
// every fetched page's WARC response record read back by warcio with a payload digest that matches
// its bytes and its page-log line). crawl-coverage.test.ts runs it on the default inline parsing,
// crawl-parser-threads.test.ts on the piscina pool.
import { createReadStream, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { WARCParser } from "warcio";
import { sha1Base32 } from "../../packages/shardcrawl/src/store/digest.js";
import { startSimwebProcess, type SimwebProcess } from "./simweb.js";
import { readPageLog, runCrawl, simwebFlags, verifyLog, writeSeeds, type CrawlRun, type PageLine, type VerifyReport } from "./crawl.js";

const DELAY_MS = 20;
// Crawl-delay up to 5 s on some simweb hosts would make these 10-minute tests; the cap is an operator
// knob: hosts asking for more are skipped (crawl-delay-too-long), never crawled faster.
const MAX_CRAWL_DELAY_MS = 200;

export interface CoverageCrawlSpec {
  /** Names the temporary folder. */
  name: string;
  seed: number;
  hosts: number;
  /** simweb's pages per host (a Pareto law) and its per-host cap. */
  pagesPerHost: { min: number; alpha: number; max: number };
  /** Crawl flags beyond the common ones (e.g. the parser threads). */
  crawlArgs: string[];
  /** Fewest pages the web must expect to fetch, so a web that shrank cannot pass by default. */
  minExpected: number;
  timeoutMs: number;
}

/** Registers the coverage crawl's tests in a describe block titled `title`. */
export function coverageCrawlSuite(title: string, spec: CoverageCrawlSpec): void {
  describe(title, () => {
    let sim: SimwebProcess | undefined;
    let out: string;
    let run: CrawlRun;
    let report: VerifyReport;
    let pages: PageLine[];

    beforeAll(async () => {
      const dir = mkdtempSync(join(tmpdir(), `sc-${spec.name}-`));
      // Small pages keep the CI run short; the size mix is simweb's concern, proven in its own tests.
      const cfg = join(dir, "simweb.json");
      writeFileSync(cfg, JSON.stringify({
        pageSize: { median: 6000, mean: 7000, min: 2000, max: 40000 },
        pagesPerHost: spec.pagesPerHost,
        hostPageCap: spec.pagesPerHost.max,
      }));
      const configArgs = ["--preset", "polite", "--seed", String(spec.seed), "--hosts", String(spec.hosts), "--config", cfg];
      sim = await startSimwebProcess({ extraArgs: configArgs.slice(0) });
      const seedsFile = join(dir, "seeds.txt");
      writeSeeds(configArgs, seedsFile);
      out = join(dir, "out");
      run = await runCrawl([
        "--seeds", seedsFile, "--out", out, "--scope", "domains", "--delay", String(DELAY_MS),
        "--max-crawl-delay", String(MAX_CRAWL_DELAY_MS), "--fetchers", "1", "--parsers", "1",
        ...spec.crawlArgs, ...simwebFlags(sim),
      ]);
      await sim.stop();
      // The crawl runs with the default --politeness-key domain: the gaps hold across each domain's hosts.
      report = verifyLog(configArgs, sim.logFile, { minGapMs: DELAY_MS, maxConcurrency: 1, seedsFile, scope: "domains", maxCrawlDelayMs: MAX_CRAWL_DELAY_MS, politenessKey: "domain" });
      pages = readPageLog(out);
    }, spec.timeoutMs);

    afterAll(async () => {
      await sim?.stop();
    });

    test("the crawl exits 0", () => {
      expect(run.stderr).not.toMatch(/fatal/);
      expect(run.code).toBe(0);
    });

    test("every reachable, allowed, in-scope page is fetched exactly once", () => {
      const c = report.coverage!;
      expect(c.expected).toBeGreaterThanOrEqual(spec.minExpected);
      expect(c.missing.examples).toEqual([]);
      expect(c.missing.count).toBe(0);
      expect(c.fetchedExpected).toBe(c.expected);
      expect(c.duplicates.extraFetches).toBe(0);
      expect(c.unexpected.count).toBe(0);
    });

    test("no disallowed path is requested and politeness holds in the server's own log", () => {
      expect(report.violations.disallowed.count).toBe(0);
      expect(report.violations.concurrency.count).toBe(0);
      expect(report.violations.gap.examples).toEqual([]);
      expect(report.ok).toBe(true);
    });

    test("every fetched page has a page-log line with its WARC location", () => {
      const fetched = pages.filter((p) => p.status !== null);
      expect(fetched.length).toBeGreaterThanOrEqual(report.coverage!.fetchedExpected);
      for (const p of fetched) expect(p.warc, p.url).toBeDefined();
    });

    test("WARC files read back with warcio; every payload digest matches its bytes and its page-log line", async () => {
      const warcDir = join(out, "warc");
      const files = readdirSync(warcDir).filter((f) => f.endsWith(".warc.gz"));
      expect(files.length).toBeGreaterThan(0);
      expect(readdirSync(warcDir).filter((f) => f.endsWith(".open"))).toEqual([]);
      const responses = new Map<string, string>();
      let records = 0;
      for (const f of files) {
        for await (const record of new WARCParser(createReadStream(join(warcDir, f)))) {
          records++;
          if (record.warcType !== "response") continue;
          // base32 itself is checked against RFC 4648's vectors in test/store/warc-record.test.ts.
          const digest = sha1Base32(Buffer.from(await record.readFully(false)));
          expect(record.warcHeader("WARC-Payload-Digest"), record.warcTargetURI ?? "").toBe(digest);
          responses.set(record.warcTargetURI!, digest);
        }
      }
      // warcinfo and request records besides the responses.
      expect(records).toBeGreaterThan(responses.size);
      for (const p of pages.filter((x) => x.status !== null)) expect(responses.get(p.url), p.url).toBe(p.digest);
    });
  });
}
