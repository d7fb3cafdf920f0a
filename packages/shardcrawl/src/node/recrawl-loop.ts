// Continuous mode, supervisor side (issue 7): the node's RecrawlScheduler. It learns from the
// visit outcomes the fetchers and parsers append to the Redis stream P rv (first visits join the
// schedule and are charged to the budget; revisits update the change-rate estimates), plans each
// cycle within the budget, and queues every planned visit into the frontier when its time comes
// (add_revisits.lua: same host queues, leases and politeness as any URL, no seen filter). Host
// health from the flow-control state makes struggling hosts more expensive. Sitemap lastmod
// entries (stream P rhint, written by parsers) mark pages whose copy is stale.
// On start the schedule is rebuilt from the stored per-URL histories (P rh:<host>).
import type { Redis } from "ioredis";
import {
  DAY_MS, DEFAULT_COST_CONFIG, RecrawlHistoryStore, RecrawlScheduler, ValueTiers, hintSaysStale,
  visitCost, type PlannedVisit, type RecrawlMetrics, type ValidationReport,
} from "../schedule/recrawl/index.js";
import { compileRobots } from "../fetch/robots.js";
import type { NodeConfig } from "./config.js";
import type { NodeFrontier } from "./open-frontier.js";
import { budgetPerDay, type RecrawlBudgetUnit, type RecrawlNodeConfig } from "./recrawl-config.js";
import { hintStreamKey } from "./recrawl-visits.js";

/** The frontier tier revisits are queued at: 0, so they are not stuck behind discovery. */
export const REVISIT_TIER = 0;
/** How often the loop wakes to read outcomes and queue due visits. */
const TICK_MS = 250;
/** Hosts listed in the per-host re-crawl metrics. */
const TOP_HOSTS = 10;
/** Outcomes read per XRANGE call. */
const OUTCOME_BATCH = 1000;
/**
 * A page planned this many times in a row without a recorded outcome (its revisits end in a
 * redirect, an error, a 404 or a robots.txt refusal: only 2xx and 304 are recorded) leaves the
 * schedule, so a page that went away does not take budget forever.
 */
const MAX_MISSED_PLANS = 3;

export interface RecrawlSnapshot {
  unit: RecrawlBudgetUnit;
  budget: number;
  pages: number;
  /** Visits planned and queued since start, by reason. */
  planned: Record<string, number>;
  /** Discovery fetches charged to the budget. */
  discoveryCharged: number;
  hintsApplied: number;
  sitemapsQueued: number;
  /** Pages dropped after MAX_MISSED_PLANS plans without an answer. */
  dropped: number;
  overall: RecrawlMetrics;
  hosts: Array<RecrawlMetrics & { host: string }>;
  /** The model's mean P(fresh) of visited pages, and value-weighted. */
  freshness: number;
  valueFreshness: number;
  validation: ValidationReport;
}

export class RecrawlLoop {
  private readonly store: RecrawlHistoryStore;
  private readonly tiers: ValueTiers;
  readonly scheduler: RecrawlScheduler;
  private readonly rc: RecrawlNodeConfig;
  private lastOutcomeId = "0";
  private lastHintId = "0";
  private queue: PlannedVisit[] = [];
  private nextCycleMs = 0;
  /** Per host: when its sitemaps are next fetched (a new host's at the next cycle). */
  private readonly sitemapDue = new Map<string, number>();
  private readonly sitemapEveryMs: number;
  private readonly hostFetches = new Map<string, number>();
  /** Plans since the page's last recorded outcome (only pages planned and not yet answered). */
  private readonly missed = new Map<string, number>();
  private running = true;
  private loop: Promise<void> = Promise.resolve();
  private snap: RecrawlSnapshot;

  private constructor(private readonly redis: Redis, private readonly frontier: NodeFrontier, private readonly config: NodeConfig, private readonly say: (m: string) => void) {
    this.rc = config.recrawl as RecrawlNodeConfig;
    this.store = new RecrawlHistoryStore(redis, config.prefix, this.rc.outcomeStreamCap);
    this.tiers = new ValueTiers(this.rc.value);
    const cycleMs = this.rc.cycleMs;
    this.scheduler = new RecrawlScheduler({
      budgetPerDay: budgetPerDay(this.rc).perDay,
      cycleMs,
      // The fetch stage enforces the real gap (robots Crawl-delay, back-off); the plan only avoids
      // planning more than a host can take in a cycle.
      hostDelayMs: () => config.delayMs + config.politenessMarginMs,
      // Every 4 hours at the default 15-min cycle (group priors and the plan follow new evidence).
      replanEveryMs: Math.min(DAY_MS, 16 * cycleMs),
      pendingTimeoutMs: Math.max(4 * cycleMs, 2 * config.leaseTtlMs),
      maxDebt: budgetPerDay(this.rc).perDay,
    });
    this.sitemapEveryMs = Math.min(DAY_MS, 16 * cycleMs);
    this.snap = this.emptySnapshot();
  }

  static async start(redis: Redis, frontier: NodeFrontier, config: NodeConfig, say: (m: string) => void): Promise<RecrawlLoop> {
    const loop = new RecrawlLoop(redis, frontier, config, say);
    await loop.restore();
    loop.loop = loop.run();
    return loop;
  }

  snapshot(): RecrawlSnapshot {
    return this.snap;
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }

  private emptySnapshot(): RecrawlSnapshot {
    const zero: RecrawlMetrics = {
      fetches: 0, changes: 0, unchanged: 0, notModified: 0, bytes: 0, fetchesPerChange: Infinity, bytesPerChange: Infinity,
      noChangeShare: 0, notModifiedShare: 0, validators: { honoured: 0, ignored: 0, churningEtag: 0 },
    };
    return {
      unit: this.rc.unit, budget: this.rc.budget, pages: 0, planned: {}, discoveryCharged: 0, hintsApplied: 0, sitemapsQueued: 0, dropped: 0,
      overall: zero, hosts: [], freshness: 1, valueFreshness: 1, validation: this.scheduler.validationReport(),
    };
  }

  private valueOf(url: string): { tier: number; value: number } {
    const tier = this.tiers.tierOf(url);
    return { tier, value: this.tiers.weightOf(tier) };
  }

  /** Rebuilds the schedule from the stored histories, and starts reading the streams after their ends. */
  private async restore(): Promise<void> {
    const now = Date.now();
    const prefix = `${this.config.prefix}rh:`;
    let cursor = "0";
    let n = 0;
    do {
      const [next, keys] = await this.redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
      cursor = next;
      for (const key of keys) {
        const host = key.slice(prefix.length);
        // The history keeps path+query per host; the scheme and port come from the host's origin.
        const origin = await this.redis.hget(this.frontier.frontier.keys.host(host), "o");
        if (!origin) continue;
        for await (const [field, h] of this.store.scanHost(host)) {
          const url = origin + field;
          this.scheduler.add(url, host, { nowMs: now, lastVisitMs: h.lastVisitMs, value: this.valueOf(url).value, cost: h.cost, history: h.history });
          n++;
        }
      }
    } while (cursor !== "0");
    const last = async (key: string) => ((await this.redis.xrevrange(key, "+", "-", "COUNT", 1))[0]?.[0]) ?? "0";
    this.lastOutcomeId = await last(`${this.config.prefix}rv`);
    this.lastHintId = await last(hintStreamKey(this.config.prefix));
    if (n > 0) this.say(`continuous mode: ${n} pages back in the re-crawl schedule`);
  }

  private async run(): Promise<void> {
    while (this.running) {
      try {
        await this.tick(Date.now());
      } catch (err) {
        // Redis hiccup or a bug: say so and keep the node running; the next tick retries.
        this.say(`re-crawl loop: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, TICK_MS));
    }
  }

  private async tick(now: number): Promise<void> {
    await this.readOutcomes(now);
    await this.readHints(now);
    if (now >= this.nextCycleMs) {
      await this.updateHostHealth();
      const plan = this.scheduler.plan(now);
      for (const v of plan) {
        this.snap.planned[v.reason] = (this.snap.planned[v.reason] ?? 0) + 1;
        const m = (this.missed.get(v.url) ?? 0) + 1;
        this.missed.set(v.url, m);
        if (m > MAX_MISSED_PLANS) {
          // Planned again after MAX_MISSED_PLANS unanswered visits: it went away. Drop, not visit.
          this.scheduler.remove(v.url);
          this.missed.delete(v.url);
          this.snap.dropped++;
        }
      }
      // Visits still waiting from the last cycle stay ahead (the plan is in start order).
      this.queue = [...this.queue, ...plan.filter((v) => this.scheduler.entry(v.url))].sort((a, b) => a.atMs - b.atMs);
      this.nextCycleMs = now + this.rc.cycleMs;
      await this.queueSitemaps(now);
      await this.refreshMetrics(now);
    }
    let due = 0;
    while (due < this.queue.length && (this.queue[due] as PlannedVisit).atMs <= now) due++;
    if (due > 0) {
      const batch = this.queue.slice(0, due);
      this.queue = this.queue.slice(due);
      await this.frontier.frontier.addRevisits(batch, REVISIT_TIER, now);
    }
  }

  private async readOutcomes(now: number): Promise<void> {
    for (;;) {
      const rows = await this.store.outcomes(this.lastOutcomeId, OUTCOME_BATCH);
      for (const o of rows) {
        this.lastOutcomeId = o.id;
        let host: string;
        try {
          host = new URL(o.url).host;
        } catch {
          continue;
        }
        this.hostFetches.set(host, (this.hostFetches.get(host) ?? 0) + 1);
        this.missed.delete(o.url);
        if (!this.scheduler.entry(o.url)) {
          // A first visit (discovery through the frontier): it joins the schedule, and its cost
          // is charged to the budget, so discovery and revisits together stay within it.
          this.scheduler.add(o.url, host, { nowMs: now, lastVisitMs: o.atMs, value: this.valueOf(o.url).value, cost: o.cost });
          if (o.changed === null) {
            this.scheduler.charge(o.cost);
            this.snap.discoveryCharged++;
          }
          continue;
        }
        this.scheduler.setCost(o.url, o.cost);
        if (o.changed !== null) this.scheduler.record(o.url, o.atMs, o.changed);
      }
      if (rows.length < OUTCOME_BATCH) return;
    }
  }

  /** Sitemap lastmod hints: a lastmod newer than our copy marks the page stale. */
  private async readHints(now: number): Promise<void> {
    const rows = await this.redis.xrange(hintStreamKey(this.config.prefix), `(${this.lastHintId}`, "+", "COUNT", 20);
    for (const [id, fields] of rows) {
      this.lastHintId = id;
      const i = fields.indexOf("h");
      let pairs: unknown;
      try {
        pairs = JSON.parse(fields[i + 1] ?? "[]");
      } catch {
        continue;
      }
      if (!Array.isArray(pairs)) continue;
      for (const p of pairs) {
        if (!Array.isArray(p) || typeof p[0] !== "string" || typeof p[1] !== "number") continue;
        const url = p[0];
        if (!this.scheduler.entry(url)) continue; // not ours (yet): discovery finds it
        const copy = await this.store.get(url);
        if (copy && hintSaysStale(p[1], copy) && this.scheduler.hint(url, now)) this.snap.hintsApplied++;
      }
    }
  }

  /** Queues the sitemaps robots.txt lists for the hosts we keep fresh whose turn it is, charged to the budget. */
  private async queueSitemaps(now: number): Promise<void> {
    const visits: Array<{ url: string; host: string }> = [];
    for (const host of this.hostFetches.keys()) {
      if ((this.sitemapDue.get(host) ?? 0) > now) continue;
      this.sitemapDue.set(host, now + this.sitemapEveryMs);
      const origin = await this.redis.hget(this.frontier.frontier.keys.host(host), "o");
      if (!origin) continue;
      const entry = await this.frontier.getRobots(origin);
      if (!entry) continue;
      for (const url of compileRobots(entry, this.config.userAgent).sitemaps) {
        let h: string;
        try {
          h = new URL(url).host;
        } catch {
          continue;
        }
        if (h === host) visits.push({ url, host }); // another host's sitemap is not ours to fetch
      }
    }
    if (visits.length === 0) return;
    await this.frontier.frontier.addRevisits(visits, REVISIT_TIER, now);
    const unit = budgetPerDay(this.rc).unit;
    this.scheduler.charge(visits.length * visitCost({ ...DEFAULT_COST_CONFIG, unit, creditsByType: this.rc.creditsByType }, { pageType: "html" }));
    this.snap.sitemapsQueued += visits.length;
  }

  /** Host health = 1 / flow-control pressure, less the host's retry share (cost.ts divides by it). */
  private async updateHostHealth(): Promise<void> {
    const hosts = await this.frontier.frontier.hostPressure(100);
    const seen = new Set<string>();
    for (const h of hosts) {
      seen.add(h.host);
      this.scheduler.setHostHealth(h.host, (1 / Math.max(1, h.pressure)) * (1 - h.retryRatio));
    }
    for (const h of this.hostFetches.keys()) if (!seen.has(h)) this.scheduler.setHostHealth(h, 1);
  }

  private async refreshMetrics(now: number): Promise<void> {
    const top = [...this.hostFetches.entries()].sort((a, b) => b[1] - a[1]).slice(0, TOP_HOSTS);
    const hosts: RecrawlSnapshot["hosts"] = [];
    for (const [host] of top) hosts.push({ host, ...(await this.store.metrics(host)) });
    this.snap = {
      ...this.snap,
      pages: this.scheduler.size,
      overall: await this.store.metrics(),
      hosts,
      freshness: this.scheduler.estimatedFreshness(now),
      valueFreshness: this.scheduler.estimatedFreshness(now, true),
      validation: this.scheduler.validationReport(),
    };
  }
}
