// Cheap change detectors end to end: a real node in continuous mode with listing rules against
// simweb listing hosts on a scaled clock (a simulated hour per real second). Listing pages show
// their items' price and stock, which change on a share of the items' content changes; each
// host has an RSS feed (announced by the listing pages) and a sitemap index (named in robots.txt).
// From simweb's request log and its change model: every item whose summary a listing read showed
// changed was fetched afterwards; feed entries the node had never fetched were fetched after the
// feed read; the sitemap index's children were read; robots.txt requests were charged to the
// budget; and the node stayed polite.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startRedis, type TestRedis } from "./harness/redis.js";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { simwebFlags, startCrawl, verifyLog, writeSeeds, type CrawlRun, type VerifyReport } from "./harness/crawl.js";
import { Listings, makeConfig, World, type HostModel } from "../packages/simweb/src/index.js";
import { DEFAULT_USER_AGENT } from "../packages/shardcrawl/src/node/config-schema.js";

const SCALE = 3600;
const BUDGET = 12; // fetches per second: above what politeness allows here, so the budget never holds a hinted visit back
const CYCLE_MS = 1000;
const DELAY_MS = 200;
const RUN_MS = 45_000;
/**
 * A read is judged only when its domain served this many requests after it: the node may stop
 * before acting on the last reads. Counted in requests, not seconds, so load does not change it.
 */
const TURNS_AFTER = 30;
const HOUR = 3_600_000;

/** Waits until the node has fetched its first page; returns its status port. */
async function firstFetch(out: string, proc: { exitCode: number | null }): Promise<number> {
  for (let i = 0; i < 1200 && proc.exitCode === null; i++) {
    await new Promise((r) => setTimeout(r, 100));
    let port: number;
    try {
      port = (JSON.parse(readFileSync(join(out, "status.json"), "utf8")) as { statusPort: number }).statusPort;
    } catch {
      continue;
    }
    const m = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text()).catch(() => "");
    if (/^shardcrawl_pages_fetched_total\{[^}]*\} [1-9]/m.test(m)) return port;
  }
  throw new Error("the node fetched nothing within 120 s");
}

interface LogLine { ts: number; host: string; scheme: string; method: string; path: string; status: number; sim?: number }

describe("continuous mode with listing pages, feeds and sitemap indexes", () => {
  let dir: string;
  let sim: SimwebProcess;
  let redis: TestRedis;
  let run: CrawlRun;
  let metrics = "";
  let log: LogLine[] = [];
  let report: VerifyReport;
  let world: World;
  let listings: Listings;
  let stoppedAt = 0;
  const configArgs: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sc-listings-"));
    const simConfig = {
      hostPageCap: 41,
      pagesPerHost: { min: 40, alpha: 1.0, max: 150 },
      change: { staticShare: 0.1, minIntervalMs: 2 * HOUR, maxIntervalMs: 120 * HOUR, churnShare: 0 },
      robots: { absent: 0, empty: 0, rules: 0, "agent-specific": 0, "crawl-delay": 0, sitemap: 1, large: 0, redirect: 0, "disallow-all": 0, "server-error": 0, unreachable: 0 },
      listings: { hostShare: 1, itemsPerListing: 10, visibleShare: 0.7, lagMs: 0, feedEntries: 20, feedScan: 2000 },
    };
    const cfg = join(dir, "simweb.json");
    writeFileSync(cfg, JSON.stringify(simConfig));
    configArgs.push("--preset", "tiny", "--seed", "11", "--hosts", "3", "--config", cfg);
    world = new World(makeConfig({ preset: "tiny", seed: 11, hosts: 3, ...simConfig }));
    listings = new Listings(world);
    sim = await startSimwebProcess({ preset: "tiny", seed: 11, hosts: 3, extraArgs: ["--config", cfg, "--time-scale", String(SCALE)] });
    redis = await startRedis();
    const seeds = join(dir, "seeds.txt");
    writeSeeds(configArgs, seeds);
    const rules = join(dir, "listings.json");
    writeFileSync(rules, JSON.stringify({
      listings: [{ pattern: "/list/\\d+$", item: '<a href="(?<link>[^"]+)">[^<]*</a> <span class="summary">(?<summary>[^<]*)</span>', revisitMs: 5000 }],
    }));
    const out = join(dir, "out");
    const crawl = startCrawl([
      "--seeds", seeds, "--out", out, "--redis", redis.url, "--delay", String(DELAY_MS), "--fetchers", "1", "--parsers", "1",
      "--continuous", "--recrawl-budget", String(BUDGET), "--recrawl-cycle", String(CYCLE_MS), "--listing-rules", rules,
      ...simwebFlags(sim),
    ]);
    // The run is timed from the first fetch: on a loaded machine a node can take many seconds to start.
    const statusPort = await firstFetch(out, crawl.proc);
    await new Promise((r) => setTimeout(r, RUN_MS));
    metrics = await (await fetch(`http://127.0.0.1:${statusPort}/metrics`)).text();
    stoppedAt = Date.now();
    crawl.proc.kill("SIGTERM");
    run = await crawl.done;
    await sim.stop();
    log = readFileSync(sim.logFile, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l) as LogLine);
    report = verifyLog(configArgs, sim.logFile, { minGapMs: DELAY_MS, maxConcurrency: 1 });
  }, 240_000);

  afterAll(async () => {
    await sim?.stop();
    await redis?.stop();
  });

  const urlOf = (e: LogLine) => `${e.scheme}://${e.host}${e.path}`;
  const modelOf = (host: string): HostModel => world.model(world.hosts().find((h) => h.name === host)!.index);
  const metric = (name: string, labels: string) => Number(new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, "m").exec(metrics)?.[1] ?? NaN);
  /** Each URL's fetches answered with a 200 or 304, in log order. */
  function fetchesByUrl(): Map<string, LogLine[]> {
    const m = new Map<string, LogLine[]>();
    for (const e of log) {
      if (e.method !== "GET" || (e.status !== 200 && e.status !== 304)) continue;
      const list = m.get(urlOf(e)) ?? [];
      list.push(e);
      m.set(urlOf(e), list);
    }
    return m;
  }
  /** Times (real ms) each URL was fetched with a 200 or 304. */
  const fetchTimes = () => new Map([...fetchesByUrl()].map(([url, list]) => [url, list.map((e) => e.ts)]));
  const domainOf = (host: string) => host.split(".").slice(-2).join(".");
  /** The requests (robots.txt aside) the domain of `r` served after it. */
  const requestsAfter = (r: LogLine) => log.filter((e) => e.ts > r.ts && domainOf(e.host) === domainOf(r.host) && e.path !== "/robots.txt");

  test("the node ran until stopped and was polite", () => {
    expect(run.code, run.stderr).toBe(130);
    expect(report.violations.gap.count, JSON.stringify(report.violations.gap.examples)).toBe(0);
    expect(report.violations.concurrency.count).toBe(0);
    expect(report.violations.disallowed.count).toBe(0);
  });

  test("listing pages are read again and again; every item a listing showed changed was fetched after that read", () => {
    const fetches = fetchesByUrl();
    const reads = log.filter((e) => /^\/list\/\d+$/.test(e.path) && e.status === 200);
    const byListing = new Map<string, LogLine[]>();
    for (const e of reads) byListing.set(urlOf(e), [...(byListing.get(urlOf(e)) ?? []), e]);
    expect(byListing.size).toBeGreaterThanOrEqual(6);
    expect(Math.max(...[...byListing.values()].map((l) => l.length))).toBeGreaterThanOrEqual(3);
    let shown = 0;
    const missed: string[] = [];
    for (const [, list] of byListing) {
      for (let i = 1; i < list.length; i++) {
        const [a, b] = [list[i - 1] as LogLine, list[i] as LogLine];
        if (requestsAfter(b).length < TURNS_AFTER) continue;
        const h = modelOf(b.host);
        const k = Number(/\d+$/.exec(b.path)![0]);
        for (const p of listings.items(h, k)) {
          const shownVersion = listings.summaryVersionAt(p, b.sim!);
          if (listings.summaryVersionAt(p, a.sim!) === shownVersion) continue;
          const visits = fetches.get(p.url) ?? [];
          // Only an item we held a copy of before the first read is ours to refresh early.
          if (!visits.some((f) => f.ts < a.ts)) continue;
          shown++;
          // Caught: fetched after the read, or already fetched after the change the read showed.
          if (!visits.some((f) => f.ts > b.ts || listings.summaryVersionAt(p, f.sim!) === shownVersion)) missed.push(`${p.url} (listing read at ${b.ts})`);
        }
      }
    }
    console.log(`listing reads ${reads.length}, item changes shown on a listing ${shown}, not fetched afterwards ${missed.length}`);
    expect(shown).toBeGreaterThanOrEqual(3);
    expect(missed).toEqual([]);
    expect(metric("shardcrawl_recrawl_listing_hints_total", 'node="node0"')).toBeGreaterThan(0);
    expect(metric("shardcrawl_recrawl_listing_reads_total", 'node="node0"')).toBeGreaterThan(0);
  });

  test("feeds are found from the listing pages and read; entries the node had never fetched are fetched next, ahead of discovery", () => {
    const fetched = fetchTimes();
    const feedReads = log.filter((e) => e.path === "/feed.xml" && e.status === 200);
    expect(feedReads.length).toBeGreaterThan(0);
    let fresh = 0;
    let judged = 0;
    const late: string[] = [];
    for (const r of feedReads) {
      // An entry robots.txt disallows is never fetched, rightly.
      const allowed = (u: string) => { const x = new URL(u); return world.robots.allows(modelOf(x.host), x.pathname + x.search, DEFAULT_USER_AGENT); };
      const news = listings.feedAt(modelOf(r.host), r.sim!).map(({ p }) => p.url).filter((u) => allowed(u) && !(fetched.get(u) ?? []).some((t) => t <= r.ts));
      fresh += news.length;
      // Politeness spaces the fetches of a (registrable) domain: give the entries their turns plus
      // room for the other first-tier visits (revisits, listings), then every one must be done.
      const later = requestsAfter(r);
      const turns = news.length + TURNS_AFTER;
      if (later.length < turns) continue;
      const by = (later[turns - 1] as LogLine).ts;
      judged += news.length;
      for (const u of news) if (!(fetched.get(u) ?? []).some((t) => t > r.ts && t <= by)) late.push(u);
    }
    console.log(`feed reads ${feedReads.length}, entries new to the node ${fresh}, judged ${judged}, not fetched in their turn ${late.length}`);
    expect(fresh).toBeGreaterThan(0);
    expect(late).toEqual([]);
    expect(metric("shardcrawl_recrawl_detector_fetches_total", 'node="node0",kind="feed"')).toBeGreaterThan(0);
  });

  test("the sitemap index named in robots.txt is read and its children followed", () => {
    const paths = new Set(log.filter((e) => e.status === 200).map((e) => e.path));
    expect(paths.has("/sitemap-index.xml")).toBe(true);
    expect(paths.has("/sitemap-lists.xml")).toBe(true);
    expect(metric("shardcrawl_recrawl_detector_fetches_total", 'node="node0",kind="index-sitemap"')).toBeGreaterThan(0);
  });

  test("robots.txt requests are charged to the budget", () => {
    const robots = log.filter((e) => e.path === "/robots.txt" && e.ts < stoppedAt - 2 * CYCLE_MS).length;
    expect(robots).toBeGreaterThan(0);
    const charged = metric("shardcrawl_recrawl_detector_fetches_total", 'node="node0",kind="robots"');
    expect(charged).toBeGreaterThanOrEqual(robots);
  });
});
