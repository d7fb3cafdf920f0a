// Retries against simweb's flapping hosts (5xx in some time windows): every URL gets at most the
// budgeted attempts, retries really happen, every attempt is in the page log, and retry times are
// spread by full jitter rather than synchronized. Judged from simweb's own request log.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { readPageLog, runCrawl, simwebFlags, writeSeeds, type CrawlRun, type PageLine } from "./harness/crawl.js";
import { flowSimConfig, quantile, readSimLog, writeSimConfig, type SimRequest } from "./flow-support.js";

const ATTEMPTS = 3;

describe("flow: retries", () => {
  let sim: SimwebProcess;
  let run: CrawlRun;
  let reqs: SimRequest[];
  let pages: PageLine[];

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-flow-retry-"));
    const cfg = flowSimConfig({ flapping: 1 }, {
      hostPageCap: 60, pagesPerHost: { min: 60, alpha: 1, max: 60 }, flapping: { windowMs: 400, downShare: 0.5 }, // short windows: many up/down flips even in a crawl of a few seconds
      outDegree: { median: 8, sigma: 0.3, max: 20 },
    });
    const { args, world } = writeSimConfig(join(dir, "sim.json"), cfg, 2, 4);
    // Hosts that flap with 500/502 only: a 503 also means "overloaded" and multiplies the host's
    // delay (AIMD), which would hide the retry jitter behind politeness gaps.
    const plain = world.hosts().filter((h) => world.hostByName(h.name)!.seed % 3 !== 2).map((h) => h.name);
    expect(plain.length).toBeGreaterThanOrEqual(2);
    sim = await startSimwebProcess({ extraArgs: args });
    const seeds = writeSeeds(args, join(dir, "all.txt")).filter((u) => plain.includes(new URL(u).hostname));
    writeFileSync(join(dir, "seeds.txt"), seeds.join("\n") + "\n");
    run = await runCrawl([
      "--seeds", join(dir, "seeds.txt"), "--out", join(dir, "out"), "--scope", "hosts", "--delay", "30", "--host-concurrency", "2",
      "--fetchers", "1", "--parsers", "1", "--retry-max-attempts", String(ATTEMPTS), "--retry-base", "400", ...simwebFlags(sim),
    ]);
    await sim.stop();
    reqs = readSimLog(sim.logFile).filter((r) => !r.path.startsWith("/robots.txt"));
    pages = readPageLog(join(dir, "out"));
  }, 600_000);

  afterAll(async () => {
    await sim?.stop();
  });

  const byUrl = () => {
    const m = new Map<string, SimRequest[]>();
    for (const r of reqs) {
      const k = `${r.host}${r.path}`;
      m.set(k, [...(m.get(k) ?? []), r]);
    }
    return m;
  };

  test("the crawl finishes cleanly", () => {
    expect(run.stderr).not.toMatch(/fatal|exited \(code/);
    expect(run.code).toBe(0);
  });

  test(`no URL gets more than ${ATTEMPTS} attempts, and failed ones were retried`, () => {
    const m = byUrl();
    const counts = [...m.values()].map((v) => v.length);
    expect(Math.max(...counts)).toBeLessThanOrEqual(ATTEMPTS);
    expect(counts.filter((c) => c > 1).length).toBeGreaterThan(5);
    // A URL tried again only after a 5xx, and an exhausted one ends on its last 5xx.
    for (const v of m.values()) for (const r of v.slice(0, -1)) expect(r.status).toBeGreaterThanOrEqual(500);
  });

  test("every attempt is in the page log", () => {
    const fromServer = reqs.filter((r) => r.status !== 0).length;
    const logged = pages.filter((p) => p.status !== null).length;
    expect(logged).toBe(fromServer);
    expect(pages.filter((p) => /retry in \d+ ms/.test(p.error_detail ?? "")).length).toBe(fromServer - byUrl().size);
  });

  test("retry times are spread by jitter, not synchronized", () => {
    const gaps: number[] = [];
    const starts: number[] = [];
    for (const v of byUrl().values()) {
      for (let i = 1; i < v.length; i++) {
        gaps.push(v[i]!.ts - v[i - 1]!.end);
        starts.push(v[i]!.ts);
      }
    }
    expect(gaps.length).toBeGreaterThan(5);
    const mean = gaps.reduce((a, b) => a + b, 0) / gaps.length;
    const sd = Math.sqrt(gaps.reduce((a, b) => a + (b - mean) ** 2, 0) / gaps.length);
    console.log(`retry gaps: n=${gaps.length} mean ${mean.toFixed(0)} ms, sd ${sd.toFixed(0)} ms, p10 ${quantile(gaps, 0.1)} p90 ${quantile(gaps, 0.9)}`);
    // Full jitter: the gaps vary widely (a fixed back-off would give sd near 0).
    expect(sd / mean).toBeGreaterThan(0.3);
    // No burst: no 100 ms slot holds more than a third of all retries.
    const slots = new Map<number, number>();
    for (const s of starts) slots.set(Math.floor(s / 100), (slots.get(Math.floor(s / 100)) ?? 0) + 1);
    expect(Math.max(...slots.values())).toBeLessThanOrEqual(Math.max(2, Math.ceil(starts.length / 3)));
  });
});
