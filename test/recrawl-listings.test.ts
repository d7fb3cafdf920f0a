// Cheap change detectors end to end: a real node in continuous mode with listing rules against
// simweb listing hosts on a scaled clock (a simulated hour per real second). Listing pages show
// their items' price and stock, which change on a share of the items' content changes; each
// host has an RSS feed (announced by the listing pages) and a sitemap index (named in robots.txt).
// From simweb's request log and its change model: every item whose summary a listing read showed
// changed was fetched afterwards; feed entries the node had never fetched were fetched after the
// feed read; the sitemap index's children were read; robots.txt requests were charged to the
// budget; and the node stayed polite.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { verifyLog, type VerifyReport } from "./harness/crawl.js";
import { Listings, makeConfig, World, type HostModel, type SimwebConfig } from "../packages/simweb/src/index.js";
import { LISTINGS_WORLD, USER_AGENT, listingRules, runContinuousNode, type ContinuousRun, type RequestLogLine as LogLine } from "../scripts/recrawl-run.mjs";

const BUDGET = 12; // fetches per second: above what politeness allows here, so the budget never holds a hinted visit back
const CYCLE_MS = 1000;
const DELAY_MS = 200;
const RUN_MS = 45_000;
/**
 * A read is judged only when its domain served this many requests after it: the node may stop
 * before acting on the last reads. Counted in requests, not seconds, so load does not change it.
 */
const TURNS_AFTER = 30;

describe("continuous mode with listing pages, feeds and sitemap indexes", () => {
  let run: ContinuousRun;
  let log: LogLine[] = [];
  let metrics = "";
  let report: VerifyReport;
  let stoppedAt = 0;
  const world = new World(makeConfig({ preset: "tiny", seed: LISTINGS_WORLD.seed, hosts: LISTINGS_WORLD.hosts, ...(LISTINGS_WORLD.simConfig as Partial<SimwebConfig>) }));
  const listings = new Listings(world);

  beforeAll(async () => {
    run = await runContinuousNode({
      ...LISTINGS_WORLD, runMs: RUN_MS, files: { "listings.json": listingRules(5000) },
      nodeArgs: [
        "--delay", String(DELAY_MS), "--fetchers", "1", "--parsers", "1",
        "--continuous", "--recrawl-budget", String(BUDGET), "--recrawl-cycle", String(CYCLE_MS), "--listing-rules", "$dir/listings.json",
      ],
    });
    ({ log, metrics, stoppedAt } = run);
    report = verifyLog(run.configArgs, run.logFile, { minGapMs: DELAY_MS, maxConcurrency: 1 });
  }, 240_000);

  afterAll(async () => {
    await run?.redis.stop();
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
      const allowed = (u: string) => { const x = new URL(u); return world.robots.allows(modelOf(x.host), x.pathname + x.search, USER_AGENT); };
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
