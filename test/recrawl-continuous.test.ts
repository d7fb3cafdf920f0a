// Continuous mode end to end: a real node (supervisor, fetcher, parser, Redis) runs with
// --continuous against simweb on a scaled clock (one simulated hour per real second), whose pages
// change as Poisson processes, some hosts answering conditional requests with 304. After ~30 s:
// pages were revisited; revisits of unchanged pages on hosts that keep validators were answered
// 304; the changes the node recorded match simweb's ground truth visit by visit (content-only
// churn, a timestamp or an ad slot, is not a change); the fetch rate stayed within the budget;
// sitemaps were read for lastmod hints; /metrics carries the re-crawl metrics; and simweb's
// request log shows no politeness violation.
import { Redis } from "ioredis";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { verifyLog, type VerifyReport } from "./harness/crawl.js";
import { makeConfig, World } from "../packages/simweb/src/index.js";
import { decodeHistory, pathKey } from "../packages/shardcrawl/src/schedule/recrawl/history-codec.js";
import { runContinuousNode, type ContinuousRun, type RequestLogLine as LogLine } from "../scripts/recrawl-run.mjs";

const BUDGET = 3; // fetches per second
const CYCLE_MS = 1000;
const DELAY_MS = 300;
const RUN_MS = 30_000;
const HOUR = 3_600_000;

// Small world: 4 hosts of <= 8 pages; pages change every 2 simulated hours to 5 simulated days
// (2 s to 2 min of real time at a simulated hour per second); 30% churn a timestamp or an ad slot;
// half the hosts list a sitemap.
const SIM_CONFIG = {
  hostPageCap: 8,
  change: { staticShare: 0.1, minIntervalMs: 2 * HOUR, maxIntervalMs: 120 * HOUR, churnShare: 0.3 },
  robots: { absent: 1, empty: 0, rules: 0, "agent-specific": 0, "crawl-delay": 0, sitemap: 1, large: 0, redirect: 0, "disallow-all": 0, "server-error": 0, unreachable: 0 },
};

describe("continuous mode: revisits within a budget on a changing simweb", () => {
  let run: ContinuousRun;
  let metrics = "";
  let log: LogLine[] = [];
  let report: VerifyReport;
  let stoppedAt = 0;
  const world = new World(makeConfig({ preset: "tiny", seed: 7, hosts: 4, ...SIM_CONFIG }));

  beforeAll(async () => {
    run = await runContinuousNode({
      seed: 7, hosts: 4, simConfig: SIM_CONFIG, runMs: RUN_MS,
      files: { "value.json": { rules: [{ pattern: "^https?://[^/]+/$", tier: 0 }], defaultTier: 1, weights: [4, 1] } },
      nodeArgs: [
        "--delay", String(DELAY_MS), "--fetchers", "1", "--parsers", "1",
        "--continuous", "--recrawl-budget", String(BUDGET), "--recrawl-cycle", String(CYCLE_MS), "--value-rules", "$dir/value.json",
      ],
    });
    ({ log, metrics, stoppedAt } = run);
    report = verifyLog(run.configArgs, run.logFile, { minGapMs: DELAY_MS, maxConcurrency: 1 });
  }, 240_000);

  let client: Redis | undefined;
  const db = (): Redis => (client ??= new Redis(run.redis.url));

  afterAll(async () => {
    client?.disconnect();
    await run?.redis.stop();
  });

  const isPage = (e: LogLine) => e.method === "GET" && e.path !== "/robots.txt" && e.path !== "/sitemap.xml";
  const urlOf = (e: LogLine) => `${e.scheme}://${e.host}${e.path}`;
  /** Each 200/304 page response in log order, with simweb's version of the page then and at the previous visit. */
  function* visits(): Generator<{ e: LogLine; url: string; v: number; prev: number | undefined }> {
    const last = new Map<string, number>();
    for (const e of log.filter(isPage)) {
      if (e.status !== 200 && e.status !== 304) continue;
      const url = urlOf(e);
      const v = world.pageVersionAt(url, e.sim as number);
      const prev = last.get(url);
      last.set(url, v);
      yield { e, url, v, prev };
    }
  }
  const hasValidators = (host: string) => world.model(world.hosts().find((h) => h.name === host)!.index).has.has("validators");

  test("the node ran until stopped and was polite to every host", () => {
    expect(run.code, run.stderr).toBe(130); // stopped by a signal, gracefully
    expect(run.stderr).toMatch(/signal after/);
    expect(report.requests).toBeGreaterThan(40);
    expect(report.violations.gap.count, JSON.stringify(report.violations.gap.examples)).toBe(0);
    expect(report.violations.concurrency.count).toBe(0);
    expect(report.violations.disallowed.count).toBe(0);
    expect(report.ok).toBe(true);
  });

  test("pages are revisited, within the budget", () => {
    const fetches = log.filter((e) => e.path !== "/robots.txt");
    const perUrl = new Map<string, number>();
    for (const e of fetches.filter(isPage)) perUrl.set(urlOf(e), (perUrl.get(urlOf(e)) ?? 0) + 1);
    // The scheduler concentrates revisits where they buy freshness (pages it judges too fast to
    // follow, or nearly static, get few), so count revisits, not the share of pages revisited.
    const revisits = [...perUrl.values()].reduce((a, n) => a + n - 1, 0);
    const revisited = [...perUrl.values()].filter((n) => n >= 2).length;
    expect(revisits).toBeGreaterThanOrEqual(20);
    expect(revisited).toBeGreaterThanOrEqual(5);
    // Discovery fetches are charged to the budget, so over the whole run every fetch fits in it
    // (a cycle's budget is planned at its start, and at most one cycle's more is carried over).
    const spanS = (stoppedAt - (fetches[0] as LogLine).ts) / 1000;
    const slack = 2 * BUDGET * (CYCLE_MS / 1000) + 1;
    expect(fetches.length).toBeLessThanOrEqual(BUDGET * spanS + slack);
    // Revisits alone, in the second half of the run (discovery is long over): within the budget too.
    const half = stoppedAt - RUN_MS / 2;
    const late = fetches.filter((e) => e.ts >= half);
    expect(late.length).toBeLessThanOrEqual(BUDGET * (RUN_MS / 2000) + slack);
    expect(late.length).toBeGreaterThan(0);
  });

  test("conditional revisits get 304 from hosts that keep validators, and never elsewhere", async () => {
    // Pages without churn: their ETag only changes with the content, so every unchanged revisit
    // can be a 304. (A page whose ETag follows churn answers its first If-None-Match with a 200;
    // after that it is asked with If-Modified-Since alone.)
    let unchangedOnValidatorHosts = 0;
    let notModified = 0;
    let notModifiedNoChurn = 0;
    for (const { e, url, v, prev } of visits()) {
      if (e.status === 304) {
        expect(hasValidators(e.host)).toBe(true);
        notModified++;
      }
      if (prev !== undefined && prev === v && hasValidators(e.host) && world.changeRate(url).churn === "none") {
        unchangedOnValidatorHosts++;
        if (e.status === 304) notModifiedNoChurn++;
      }
    }
    expect(notModified).toBeGreaterThan(0);
    expect(unchangedOnValidatorHosts).toBeGreaterThan(0);
    expect(notModifiedNoChurn / unchangedOnValidatorHosts).toBeGreaterThanOrEqual(0.9);
    // The per-host validator evidence: honoured where simweb keeps validators, ignored elsewhere.
    const r = db();
    for (const h of world.hosts()) {
      const ev = await r.hgetall(`sc:rm:${h.name}`);
      if (Number(ev.fetches ?? 0) < 6) continue;
      if (hasValidators(h.name)) expect(Number(ev.v_ignored ?? 0), h.name).toBe(0);
      else {
        expect(Number(ev.v_honoured ?? 0), h.name).toBe(0);
        expect(Number(ev.v_ignored ?? 0), h.name).toBeGreaterThan(0);
      }
    }
  });

  test("detected changes match simweb's ground truth; content-only churn is not a change", async () => {
    const truth = new Map<string, { observations: number; changes: number }>();
    for (const { url, v, prev } of visits()) {
      if (prev === undefined) continue;
      const t = truth.get(url) ?? { observations: 0, changes: 0 };
      t.observations++;
      if (v !== prev) t.changes++;
      truth.set(url, t);
    }
    const r = db();
    let urls = 0, agree = 0, truthChanges = 0, nodeChanges = 0, churnUnchanged = 0;
    const disagree: string[] = [];
    for (const [url, t] of truth) {
      const u = new URL(url);
      const b = await r.hgetBuffer(`sc:rp:${u.host}`, pathKey(u.pathname + u.search));
      if (!b) continue;
      const h = decodeHistory(b).history;
      urls++;
      truthChanges += t.changes;
      nodeChanges += h.changes;
      if (h.changes === t.changes && h.observations === t.observations) agree++;
      else disagree.push(`${url}: truth ${t.changes}/${t.observations}, node ${h.changes}/${h.observations}; ${log.filter((e) => isPage(e) && urlOf(e) === url).map((e) => `${e.status}@${e.ts % 100000}:${world.pageVersionAt(url, e.sim as number) % 100000}`).join(" ")}`);
      if (world.changeRate(url).churn !== "none") churnUnchanged += h.observations - h.changes;
    }
    // (The scheduler concentrates revisits, so few pages may carry all the observations.)
    const observations = [...truth.values()].reduce((a, t) => a + t.observations, 0);
    expect(urls).toBeGreaterThanOrEqual(5);
    expect(observations).toBeGreaterThanOrEqual(20);
    expect(truthChanges).toBeGreaterThan(5);
    // Visit by visit, with a little room for a change that fell between simweb's log stamp and its render.
    expect(agree / urls, disagree.join("\n")).toBeGreaterThanOrEqual(0.9);
    expect(Math.abs(nodeChanges - truthChanges)).toBeLessThanOrEqual(Math.max(2, 0.1 * truthChanges));
    expect(churnUnchanged).toBeGreaterThan(0); // churning pages were seen unchanged, not changed
  });

  test("sitemaps are read for lastmod hints, and /metrics carries the re-crawl metrics", () => {
    const sitemapHosts = world.hosts().filter((h) => h.robots === "sitemap").map((h) => h.name);
    expect(sitemapHosts.length).toBeGreaterThan(0);
    for (const host of sitemapHosts) expect(log.some((e) => e.host === host && e.path === "/sitemap.xml" && e.status === 200)).toBe(true);
    const value = (name: string, labels = 'node="node0"') => {
      const m = new RegExp(`^${name}\\{${labels}\\} (\\S+)$`, "m").exec(metrics);
      return m ? Number(m[1]) : NaN;
    };
    const fpc = value("shardcrawl_recrawl_fetches_per_change");
    expect(fpc).toBeGreaterThan(1);
    expect(Number.isFinite(fpc)).toBe(true);
    expect(value("shardcrawl_recrawl_not_modified_ratio")).toBeGreaterThan(0);
    expect(value("shardcrawl_recrawl_no_change_ratio")).toBeGreaterThan(0);
    expect(value("shardcrawl_recrawl_bytes_per_change")).toBeGreaterThan(0);
    const fresh = value("shardcrawl_recrawl_estimated_freshness_ratio", 'node="node0",weighting="none"');
    expect(fresh).toBeGreaterThan(0);
    expect(fresh).toBeLessThanOrEqual(1);
    expect(metrics).toMatch(/^shardcrawl_recrawl_fetches_per_change\{node="node0",host="www\.d\d\.test"\} /m);
    expect(metrics).toMatch(/^shardcrawl_recrawl_validation_visits\{node="node0"\} \d+/m);
    expect(value("shardcrawl_recrawl_pages")).toBeGreaterThan(10);
    expect(metrics).toMatch(/^shardcrawl_recrawl_planned_visits_total\{node="node0",reason="priority"\} [1-9]/m);
    // Hints: a sitemap (with lastmod: hosts with validators) fetched while a listed page had
    // changed since our last fetch of it, and the page not fetched again within a second after,
    // is an opportunity the node must take (the hint is read within a tick).
    let opportunities = 0;
    for (const h of world.hosts().filter((x) => x.robots === "sitemap" && hasValidators(x.name))) {
      const m = world.model(h.index);
      const home = world.page(m, 0);
      const origin = `${h.scheme}://${h.name}`;
      const links = world.links(home).filter((l) => !l.nofollow && l.url.startsWith(`${origin}/`) && !["trap", "bomb", "broken"].includes(l.kind));
      const listed = new Set([home.url, ...links.map((l) => l.url)]);
      const fetches = log.filter((e) => e.host === h.name && (e.status === 200 || e.status === 304));
      // (sitemaps read in the last seconds may not be in the metrics we scraped yet)
      for (const sm of fetches.filter((e) => e.path === "/sitemap.xml" && e.ts < stoppedAt - 3000)) {
        for (const url of listed) {
          const before = fetches.filter((e) => urlOf(e) === url && e.ts < sm.ts).pop();
          const soonAfter = fetches.some((e) => urlOf(e) === url && e.ts >= sm.ts && e.ts < sm.ts + 1000);
          if (before && !soonAfter && world.pageVersionAt(url, sm.sim as number) !== world.pageVersionAt(url, before.sim as number)) opportunities++;
        }
      }
    }
    if (opportunities > 0) expect(value("shardcrawl_recrawl_hints_total")).toBeGreaterThan(0);
  });
});
