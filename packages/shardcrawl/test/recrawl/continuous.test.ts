// Continuous mode's pure parts: sitemap lastmod hints, the scheduler's node-facing behaviour
// (pending visits, discovery debt, change hints, host health) and the continuous-mode flags.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import {
  DAY_MS, RecrawlScheduler, emptyHistory, estimateRate, groupPrior, hintSaysStale, isSitemap, logNormalGroupPrior, observe, priorAround, sitemapLastmods,
} from "../../src/schedule/recrawl/index.js";
import { budgetPerDay, recrawlConfigFromFlags, recrawlConfigFromObject } from "../../src/schedule/recrawl/continuous-config.js";
import { parseCrawlFlags } from "../../src/cli/flags.js";

const T0 = Date.UTC(2025, 0, 1);
const MIN = 60_000;

describe("sitemap lastmod hints", () => {
  const xml = `<?xml version="1.0" encoding="UTF-8"?>
<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
  <url><loc>https://a.test/</loc><lastmod>2025-01-02T03:04:05Z</lastmod></url>
  <url>
    <loc> https://a.test/p?x=1&amp;y=2 </loc>
    <lastmod>2025-01-03</lastmod>
  </url>
  <url><loc>https://a.test/no-lastmod</loc></url>
  <url><loc>https://a.test/bad</loc><lastmod>yesterday</lastmod></url>
  <url><loc>https://a.test/tz</loc><lastmod>2025-01-02T05:04:05+02:00</lastmod></url>
</urlset>`;

  it("reads loc and lastmod, unescapes, skips entries without a valid W3C date", () => {
    expect(isSitemap(xml)).toBe(true);
    expect(isSitemap("<html><body>urlset</body></html>")).toBe(false);
    expect(sitemapLastmods(xml)).toEqual([
      { url: "https://a.test/", lastmodMs: Date.UTC(2025, 0, 2, 3, 4, 5) },
      { url: "https://a.test/p?x=1&y=2", lastmodMs: Date.UTC(2025, 0, 3) },
      { url: "https://a.test/tz", lastmodMs: Date.UTC(2025, 0, 2, 3, 4, 5) },
    ]);
    expect(sitemapLastmods(xml, 1)).toHaveLength(1);
  });

  it("a lastmod is a hint only when newer than our copy's Last-Modified (else our fetch time), in whole seconds", () => {
    const lm = Date.UTC(2025, 0, 2);
    expect(hintSaysStale(lm + 1000, { lastModifiedMs: lm, lastVisitMs: lm + DAY_MS })).toBe(true);
    expect(hintSaysStale(lm + 999, { lastModifiedMs: lm, lastVisitMs: 0 })).toBe(false);
    expect(hintSaysStale(lm, { lastVisitMs: lm + MIN })).toBe(false);
    expect(hintSaysStale(lm + 2 * MIN, { lastVisitMs: lm + MIN })).toBe(true);
  });
});

/** A scheduler with `n` pages on `hosts` hosts, all visited at T0, all seen changing about daily. */
function scheduler(n: number, hosts: number, budgetPerDay: number, extra: Partial<ConstructorParameters<typeof RecrawlScheduler>[0]> = {}): RecrawlScheduler {
  const s = new RecrawlScheduler({ budgetPerDay, cycleMs: 15 * MIN, hostDelayMs: () => 1000, reserves: { discovery: 0, reestimate: 0, validation: 0 }, ...extra });
  for (let i = 0; i < n; i++) {
    const url = `https://h${i % hosts}.test/p${i}`;
    s.add(url, `h${i % hosts}.test`, { nowMs: T0, lastVisitMs: T0 });
    const e = s.entry(url)!;
    for (let k = 0; k < 10; k++) observe(e.history, 1, k % 2 === 0);
  }
  return s;
}

describe("estimator prior for a group whose rates span orders of magnitude", () => {
  it("the log-normal group prior recovers rates far from the group's mean where the Gamma one over-shrinks them", () => {
    let seed = 99;
    const rand = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    // 40 pages, true rates log-uniform over 0.01..30 per day, 40 visits each at about 1.5 mean
    // change intervals (the most informative spacing; see scripts/recrawl-identifiability.mjs).
    const pages = Array.from({ length: 40 }, (_, i) => {
      const rate = 0.01 * 3000 ** (i / 39);
      const h = emptyHistory();
      for (let k = 0; k < 40; k++) {
        const t = (1.5 / rate) * (0.5 + rand());
        observe(h, t, rand() < -Math.expm1(-rate * t));
      }
      return { rate, h };
    });
    const flat = { shape: 1, rate: 0 };
    const mle = pages.map((p) => estimateRate(p.h, flat));
    const logn = logNormalGroupPrior(mle, { mu: 0, sigma: 2 });
    const gamma = groupPrior(mle, priorAround(0.2, 1.3), 1.3);
    const within = (prior: Parameters<typeof estimateRate>[1], sel: typeof pages) => sel.filter((p) => Math.abs(estimateRate(p.h, prior) / p.rate - 1) <= 0.25).length / sel.length;
    const outer = [...pages.slice(0, 8), ...pages.slice(-8)]; // the 20% farthest from the group's mean on either side
    expect(within(logn, pages)).toBeGreaterThanOrEqual(0.6);
    expect(within(logn, outer)).toBeGreaterThan(within(gamma, outer));
    expect(logn.sigma).toBeGreaterThan(1.5); // fitted to the spread (ln 3000 / sqrt(12) = 2.3)
  });
});

describe("the scheduler in a node", () => {
  it("does not plan a page again while its visit is pending, and replans it after the timeout", () => {
    const s = scheduler(4, 4, 4 * 96 * 4, { pendingTimeoutMs: 30 * MIN }); // budget for every page every cycle
    const first = s.plan(T0 + DAY_MS);
    expect(first.map((v) => v.url).sort()).toHaveLength(4);
    // Nothing recorded yet: the next cycle plans none of them again...
    expect(s.plan(T0 + DAY_MS + 15 * MIN)).toHaveLength(0);
    // ...one is recorded, the others' visits time out.
    s.record(first[0]!.url, T0 + DAY_MS + 16 * MIN, true);
    const later = s.plan(T0 + DAY_MS + 45 * MIN).map((v) => v.url);
    expect(later).toHaveLength(4);
  });

  it("charges visits made outside the plan: no revisit until the debt is paid, at most maxDebt", () => {
    const perCycle = 4; // 384 a day
    const s = scheduler(50, 50, perCycle * 96, { maxDebt: 10 });
    s.charge(1000); // capped at 10: two and a half cycles
    const t = T0 + DAY_MS;
    expect(s.plan(t)).toHaveLength(0);
    expect(s.plan(t + 15 * MIN)).toHaveLength(0);
    const third = s.plan(t + 30 * MIN);
    expect(third.length).toBeGreaterThan(0);
    expect(third.length).toBeLessThanOrEqual(perCycle - 2);
  });

  it("a sitemap hint newer than the last visit puts a page first; an older one is ignored", () => {
    const s = scheduler(20, 20, 96); // one visit a cycle
    const url = "https://h7.test/p7";
    const e = s.entry(url)!;
    e.history.changes = 0; // believed nearly static: lowest priority of all
    for (let k = 0; k < 30; k++) observe(e.history, 2, false);
    s.replan(T0);
    const t = T0 + DAY_MS / 2;
    expect(s.plan(t).map((v) => v.url)).not.toContain(url);
    expect(s.hint(url, T0 - MIN)).toBe(false);
    const before = s.estimatedFreshness(t + 15 * MIN);
    expect(s.hint(url, T0 + MIN)).toBe(true);
    expect(s.estimatedFreshness(t + 15 * MIN)).toBeLessThan(before);
    expect(s.plan(t + 15 * MIN).map((v) => v.url)).toEqual([url]);
  });

  it("a struggling host costs more, so it gets fewer visits", () => {
    const count = (sick: boolean) => {
      const s = scheduler(40, 2, 96 * 10);
      if (sick) s.setHostHealth("h0.test", 0.1);
      let n = 0;
      for (let c = 0; c < 20; c++) {
        const t = T0 + DAY_MS + c * 15 * MIN;
        for (const v of s.plan(t)) {
          if (v.host === "h0.test") n++;
          s.record(v.url, v.atMs, false);
        }
      }
      return n;
    };
    expect(count(true)).toBeLessThan(count(false) / 2);
  });
});

describe("continuous-mode flags", () => {
  it("parses the budget, unit, cycle and rule files; continuous nodes run until stopped", () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-rc-"));
    writeFileSync(join(dir, "v.json"), JSON.stringify({ rules: [{ pattern: "/product/", tier: 0 }], weights: [4, 1], defaultTier: 1 }));
    writeFileSync(join(dir, "c.json"), JSON.stringify({ strip: ["\\bprice: \\d+"] }));
    const c = parseCrawlFlags(["--out", dir, "--continuous", "--recrawl-budget", "200000", "--recrawl-unit", "bytes/day", "--recrawl-cycle", "60000", "--value-rules", join(dir, "v.json"), "--content-rules", join(dir, "c.json")]);
    expect(c.exitWhenDone).toBe(false);
    expect(c.recrawl).toMatchObject({ budget: 200_000, unit: "bytes/day", cycleMs: 60_000, contentRules: { strip: ["\\bprice: \\d+"] } });
    expect(c.recrawl!.value.rules).toEqual([{ pattern: "/product/", tier: 0 }]);
    expect(budgetPerDay(c.recrawl!)).toEqual({ perDay: 200_000, unit: "bytes" });
    expect(budgetPerDay(recrawlConfigFromFlags({ continuous: true, "recrawl-budget": "2" })!)).toEqual({ perDay: 172_800, unit: "fetches" });
    expect(recrawlConfigFromFlags({ continuous: true })!.objective).toBe("freshness");
    expect(recrawlConfigFromFlags({ continuous: true, "recrawl-objective": "changes" })!.objective).toBe("changes");
    expect(() => recrawlConfigFromFlags({ continuous: true, "recrawl-objective": "events" })).toThrow(/--recrawl-objective: expected freshness or changes/);
    expect(() => recrawlConfigFromFlags({ "recrawl-objective": "changes" })).toThrow(/need --continuous/);
    expect(parseCrawlFlags(["--out", dir]).recrawl).toBeUndefined();
    expect(recrawlConfigFromObject({ budget: 5, unit: "credits/day" })).toMatchObject({ budget: 5, unit: "credits/day" });
  });

  it("rejects bad values with messages that name the flag", () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-rc-"));
    writeFileSync(join(dir, "bad.json"), JSON.stringify({ rules: [{ pattern: "(", tier: 0 }] }));
    writeFileSync(join(dir, "tier.json"), JSON.stringify({ rules: [{ pattern: "x", tier: 9 }] }));
    writeFileSync(join(dir, "notjson.json"), "{");
    const bad = (...a: string[]) => () => parseCrawlFlags(["--out", dir, ...a]);
    expect(bad("--recrawl-budget", "5")).toThrow(/need --continuous/);
    expect(bad("--continuous", "--recrawl-unit", "pages/h")).toThrow(/--recrawl-unit/);
    expect(bad("--continuous", "--recrawl-budget", "0")).toThrow(/--recrawl-budget/);
    expect(bad("--continuous", "--value-rules", join(dir, "bad.json"))).toThrow(/--value-rules.*invalid pattern/);
    expect(bad("--continuous", "--value-rules", join(dir, "tier.json"))).toThrow(/tier 9/);
    expect(bad("--continuous", "--value-rules", join(dir, "missing.json"))).toThrow(/--value-rules: cannot read/);
    expect(bad("--continuous", "--content-rules", join(dir, "notjson.json"))).toThrow(/--content-rules.*not valid JSON/);
    expect(bad("--continuous", "--recrawl-cycle", "10")).toThrow(/--recrawl-cycle: expected >= 100/);
    expect(bad("--continuous", "--recrawl-objective", "events")).toThrow(/--recrawl-objective: expected freshness or changes/);
    expect(() => recrawlConfigFromObject({ budget: 1, speed: 2 })).toThrow(/unknown key "speed"/);
  });

  it("a node config file may carry a recrawl section", async () => {
    const { nodeConfigFromObject } = await import("../../src/cli/config-file.js");
    const c = nodeConfigFromObject({ out: "o", recrawl: { budget: 1000, unit: "credits/day", cycleMs: 60_000 } }, "node.yaml");
    expect(c.recrawl).toMatchObject({ budget: 1000, unit: "credits/day", cycleMs: 60_000 });
    expect(() => nodeConfigFromObject({ out: "o", recrawl: { budget: -1 } }, "node.yaml")).toThrow(/node\.yaml: recrawl\.budget: expected > 0/);
    expect(() => nodeConfigFromObject({ out: "o", recrawl: { speed: 2 } }, "node.yaml")).toThrow(/unknown key "recrawl\.speed"/);
    expect(nodeConfigFromObject({ out: "o", recrawl: { continuous: false, budget: 2 } }, "node.yaml").recrawl).toBeUndefined();
  });
});

describe("removing a page", () => {
  it("a removed page is no longer planned, and the rest still are", () => {
    const s = scheduler(3, 3, 96 * 3);
    expect(s.remove("https://h1.test/p1")).toBe(true);
    expect(s.remove("https://h1.test/p1")).toBe(false);
    expect(s.size).toBe(2);
    expect(s.plan(T0 + DAY_MS).map((v) => v.url).sort()).toEqual(["https://h0.test/p0", "https://h2.test/p2"]);
  });
});

describe("history record: last-visit time", () => {
  it("keeps the sub-second part (1/256 s) so visits seconds apart give the right interval", async () => {
    const { encodeRecord, decodeHistory, casStamp } = await import("../../src/schedule/recrawl/history-codec.js");
    const encodeHistory = (u: Parameters<typeof encodeRecord>[0]) => encodeRecord(u, "/p");
    const rec = (ms: number) => ({ lastVisitMs: ms, etagChurns: false, digest: "0123456789abcdef", tier: 1, cost: 1, history: emptyHistory() });
    for (const ms of [T0, T0 + 1, T0 + 499, T0 + 1234, T0 + 1998, T0 + 1999]) {
      expect(Math.abs(decodeHistory(encodeHistory(rec(ms))).lastVisitMs - ms)).toBeLessThanOrEqual(2);
    }
    expect(casStamp(encodeHistory(rec(T0 + 500)))).not.toBe(casStamp(encodeHistory(rec(T0 + 900))));
  });
});

describe("re-crawl metrics on /metrics", () => {
  it("overall and per-host families, +Inf before the first change, freshness and validation report", async () => {
    const { renderMetrics } = await import("../../src/node/metrics.js");
    const m = (fetches: number, changes: number) => ({
      fetches, changes, unchanged: fetches - changes, notModified: 1, bytes: 1000 * fetches, fetchesPerChange: changes ? fetches / changes : Infinity,
      bytesPerChange: changes ? (1000 * fetches) / changes : Infinity, noChangeShare: (fetches - changes) / fetches, notModifiedShare: 1 / fetches,
      validators: { honoured: 1, ignored: 2, churningEtag: 0 },
    });
    const text = await renderMetrics({
      node: "n0",
      recrawl: {
        unit: "fetches/s", budget: 2, pages: 7, planned: { priority: 5, validation: 1 }, discoveryCharged: 7, hintsApplied: 2, sitemapsQueued: 1, dropped: 0,
        indexSitemapsQueued: 2, feedsQueued: 3, feedHints: 1, newEntriesQueued: 4, listingReads: 5, listingChangedItems: 6, listingHints: 5, listingsQueued: 7, robotsCharged: 8,
        overall: m(12, 4), hosts: [{ host: "a.test", ...m(8, 4) }, { host: "b.test", ...m(4, 0) }], freshness: 0.7, valueFreshness: 0.8,
        validation: { visits: 3, predictedChanges: 1.2, observedChanges: 1, brier: 0.1 },
      },
    });
    expect(text).toMatch(/^shardcrawl_recrawl_fetches_per_change\{node="n0"\} 3$/m);
    expect(text).toMatch(/^shardcrawl_recrawl_fetches_per_change\{node="n0",host="a\.test"\} 2$/m);
    expect(text).toMatch(/^shardcrawl_recrawl_fetches_per_change\{node="n0",host="b\.test"\} \+Inf$/m);
    expect(text).toMatch(/^shardcrawl_recrawl_bytes_per_change\{node="n0"\} 3000$/m);
    expect(text).toMatch(/^shardcrawl_recrawl_not_modified_ratio\{node="n0"\} 0\.083/m);
    expect(text).toMatch(/^shardcrawl_recrawl_estimated_freshness_ratio\{node="n0",weighting="value"\} 0\.8$/m);
    expect(text).toMatch(/^shardcrawl_recrawl_validation_brier\{node="n0"\} 0\.1$/m);
    expect(text).toMatch(/^shardcrawl_recrawl_planned_visits_total\{node="n0",reason="validation"\} 1$/m);
    expect(text).toMatch(/^shardcrawl_recrawl_validator_evidence_total\{node="n0",evidence="ignored"\} 2$/m);
    expect(text).toMatch(/^shardcrawl_recrawl_detector_fetches_total\{node="n0",kind="robots"\} 8$/m);
    expect(text).toMatch(/^shardcrawl_recrawl_detector_fetches_total\{node="n0",kind="index-sitemap"\} 2$/m);
    expect(text).toMatch(/^shardcrawl_recrawl_listing_changed_items_total\{node="n0"\} 6$/m);
    expect(text).toMatch(/^shardcrawl_recrawl_feed_hints_total\{node="n0"\} 1$/m);
  });
});
