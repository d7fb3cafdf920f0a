// Spider-trap defences on by default, against simweb's session-id loop (every host is a shop whose
// pages link to /shop/<word>?sid=<16 hex>, each session page to four more, without end): with the
// defaults the sid is removed in normalization, so the loop collapses to one URL per word and the
// crawl fetches exactly the expected set (simweb's ground truth follows the same clean-up). With
// the clean-up turned off, the host page budget still holds each host to its cap.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { readRequestLog, runCrawl, simwebFlags, verifyLog, writeSeeds, type CrawlRun, type VerifyReport } from "./harness/crawl.js";
import { WORDS } from "../packages/simweb/src/vocab.js";

const HOSTS = 8;
const BUDGET = 60;

describe("a session-id loop on every host", () => {
  const dir = mkdtempSync(join(tmpdir(), "sc-traps-"));
  let configArgs: string[];
  let seeds: string;
  let withDefaults: { run: CrawlRun; report: VerifyReport & { coverage?: { trapFetches?: number } }; counters: Record<string, number>; log: string };
  let withoutStrip: { run: CrawlRun; log: string };

  async function crawl(name: string, extra: string[]): Promise<{ run: CrawlRun; log: string; out: string }> {
    const sim: SimwebProcess = await startSimwebProcess({ extraArgs: configArgs });
    try {
      const out = join(dir, name);
      const run = await runCrawl(["--seeds", seeds, "--out", out, "--scope", "domains", "--delay", "5", "--max-crawl-delay", "100",
        "--fetchers", "1", "--parsers", "1", "--parser-threads", "1", ...extra, ...simwebFlags(sim)]);
      await sim.stop();
      return { run, log: sim.logFile, out };
    } finally {
      await sim.stop();
    }
  }

  beforeAll(async () => {
    const cfg = join(dir, "simweb.json");
    writeFileSync(cfg, JSON.stringify({ pageSize: { median: 4000, mean: 5000, min: 2000, max: 20000 }, pagesPerHost: { min: 20, alpha: 1.2, max: 40 }, hostPageCap: 40, behaviours: { "trap-session": 1 } }));
    configArgs = ["--preset", "polite", "--seed", "3", "--hosts", String(HOSTS), "--config", cfg];
    seeds = join(dir, "seeds.txt");
    writeSeeds(configArgs, seeds);
    const a = await crawl("defaults", []);
    const report = verifyLog(configArgs, a.log, { minGapMs: 5, maxConcurrency: 1, seedsFile: seeds, scope: "domains", maxCrawlDelayMs: 100 });
    const counters = (JSON.parse(readFileSync(join(a.out, "summary.json"), "utf8")) as { stats: { counters: Record<string, number> } }).stats.counters;
    withDefaults = { run: a.run, report, counters, log: a.log };
    const b = await crawl("no-strip", ["--strip-params", "none", "--host-page-budget", String(BUDGET), "--max-pages", "2000"]);
    withoutStrip = { run: b.run, log: b.log };
  }, 600_000);


  test("with the defaults the loop collapses: only expected URLs are fetched, at most one per word", () => {
    expect(withDefaults.run.code).toBe(0);
    const c = withDefaults.report.coverage!;
    expect(c.unexpected.examples).toEqual([]);
    expect(c.missing.count).toBe(0);
    expect(c.duplicates.extraFetches).toBe(0);
    expect(c.trapFetches ?? 0).toBe(0);
    expect(withDefaults.counters["trap:params-stripped"] ?? 0).toBeGreaterThan(0);
    const shop = new Map<string, Set<string>>();
    for (const r of readRequestLog(withDefaults.log)) {
      if (!r.path.startsWith("/shop/")) continue;
      expect(r.path).not.toMatch(/sid=/);
      const s = shop.get(r.host) ?? new Set<string>();
      s.add(r.path);
      shop.set(r.host, s);
    }
    expect(shop.size).toBeGreaterThan(0);
    for (const s of shop.values()) expect(s.size).toBeLessThanOrEqual(WORDS.length);
  });

  test("without the clean-up the host page budget holds every host to its cap", () => {
    expect(withoutStrip.run.code).toBe(0);
    const perHost = new Map<string, number>();
    let sessionFetches = 0;
    for (const r of readRequestLog(withoutStrip.log)) {
      if (r.path === "/robots.txt") continue;
      perHost.set(r.host, (perHost.get(r.host) ?? 0) + 1);
      if (/sid=/.test(r.path)) sessionFetches++;
    }
    console.log(`session loop without clean-up: ${sessionFetches} session-URL fetches; per host max ${Math.max(...perHost.values())} (budget ${BUDGET})`);
    expect(sessionFetches).toBeGreaterThan(0); // the loop is real
    for (const n of perHost.values()) expect(n).toBeLessThanOrEqual(BUDGET);
  });
});
