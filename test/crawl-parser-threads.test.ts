// The parse stage in a piscina pool (--parser-threads 2) instead of the default inline parsing: the
// worker threads hash links themselves and hand back transferred buffers, a different path from the
// inline one that crawl-coverage.test.ts proves. A smaller web, the same proofs: every reachable,
// allowed, in-scope page fetched exactly once, politeness from simweb's own request log, and every
// page-log line's digest matching the WARC response record that warcio reads back.
import { createReadStream, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { createHash } from "node:crypto";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { WARCParser } from "warcio";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { readPageLog, runCrawl, simwebFlags, verifyLog, writeSeeds, type CrawlRun, type PageLine, type VerifyReport } from "./harness/crawl.js";

const DELAY_MS = 20;
const HOSTS = 24;
const MAX_CRAWL_DELAY_MS = 200;

/** RFC 4648 base32, as WARC-Payload-Digest spells a SHA-1. */
function base32(buf: Buffer): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = 0, value = 0, out = "";
  for (const byte of buf) {
    value = (value << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += alphabet[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += alphabet[(value << (5 - bits)) & 31];
  return out;
}

describe("a crawl parsed by a piscina pool (--parser-threads 2)", () => {
  let sim: SimwebProcess;
  let out: string;
  let run: CrawlRun;
  let report: VerifyReport;
  let pages: PageLine[];
  const configArgs: string[] = [];

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-parser-threads-"));
    const cfg = join(dir, "simweb.json");
    writeFileSync(cfg, JSON.stringify({
      pageSize: { median: 6000, mean: 7000, min: 2000, max: 40000 },
      pagesPerHost: { min: 20, alpha: 1.2, max: 60 },
      hostPageCap: 60,
    }));
    configArgs.push("--preset", "polite", "--seed", "23", "--hosts", String(HOSTS), "--config", cfg);
    sim = await startSimwebProcess({ extraArgs: configArgs.slice(0) });
    const seedsFile = join(dir, "seeds.txt");
    writeSeeds(configArgs, seedsFile);
    out = join(dir, "out");
    run = await runCrawl([
      "--seeds", seedsFile, "--out", out, "--scope", "domains", "--delay", String(DELAY_MS),
      "--max-crawl-delay", String(MAX_CRAWL_DELAY_MS), "--fetchers", "1", "--parsers", "1", "--parser-threads", "2",
      ...simwebFlags(sim),
    ]);
    await sim.stop();
    report = verifyLog(configArgs, sim.logFile, { minGapMs: DELAY_MS, maxConcurrency: 1, seedsFile, scope: "domains", maxCrawlDelayMs: MAX_CRAWL_DELAY_MS, politenessKey: "domain" });
    pages = readPageLog(out);
  }, 600_000);

  afterAll(async () => {
    await sim?.stop();
  });

  test("the crawl exits 0", () => {
    expect(run.stderr).not.toMatch(/fatal/);
    expect(run.code).toBe(0);
  });

  test("every reachable, allowed, in-scope page is fetched exactly once", () => {
    const c = report.coverage!;
    expect(c.expected).toBeGreaterThan(200);
    expect(c.missing.examples).toEqual([]);
    expect(c.fetchedExpected).toBe(c.expected);
    expect(c.duplicates.extraFetches).toBe(0);
    expect(c.unexpected.count).toBe(0);
  });

  test("politeness holds in the server's own log", () => {
    expect(report.violations.disallowed.count).toBe(0);
    expect(report.violations.concurrency.count).toBe(0);
    expect(report.violations.gap.examples).toEqual([]);
    expect(report.ok).toBe(true);
  });

  test("every fetched page's digest matches its WARC response record", async () => {
    const warcDir = join(out, "warc");
    const files = readdirSync(warcDir).filter((f) => f.endsWith(".warc.gz"));
    expect(files.length).toBeGreaterThan(0);
    const responses = new Map<string, string>();
    for (const f of files) {
      for await (const record of new WARCParser(createReadStream(join(warcDir, f)))) {
        if (record.warcType !== "response") continue;
        const payload = Buffer.from(await record.readFully(false));
        const digest = `sha1:${base32(createHash("sha1").update(payload).digest())}`;
        expect(record.warcHeader("WARC-Payload-Digest"), record.warcTargetURI ?? "").toBe(digest);
        responses.set(record.warcTargetURI!, digest);
      }
    }
    const fetched = pages.filter((p) => p.status !== null);
    expect(fetched.length).toBeGreaterThanOrEqual(report.coverage!.fetchedExpected);
    for (const p of fetched) expect(responses.get(p.url), p.url).toBe(p.digest);
  });
});
