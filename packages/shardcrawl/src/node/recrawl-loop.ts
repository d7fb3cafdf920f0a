// Continuous mode, supervisor side: the node's RecrawlScheduler. It learns from the
// visit outcomes the fetchers and parsers append to the Redis stream P rv (first visits join the
// schedule and are charged to the budget; revisits update the change-rate estimates), plans each
// cycle within the budget, and queues every planned visit into the frontier when its time comes
// (add_revisits.lua: same host queues, leases and politeness as any URL, no seen filter). Host
// health from the flow-control state makes struggling hosts more expensive. Sitemap lastmod
// entries (stream P rhint, written by parsers) mark pages whose copy is stale.
// The schedule itself lives in Redis (RedisRecrawlSchedule: each page's record and a due-time
// index), so the supervisor's memory does not grow with the pages and a restart continues where
// the last run stopped (the stream positions and the budget debt are kept with it). A node whose
// histories predate the Redis schedule has them indexed once, at its first start.
import type { Redis } from "ioredis";
import {
  DAY_MS, DEFAULT_COST_CONFIG, RecrawlHistoryStore, RedisRecrawlSchedule, ValueTiers, hintSaysStale,
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
/** Outcomes applied to the schedule per script round. */
const RECORD_BATCH = 256;

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
  private scheduler!: RedisRecrawlSchedule;
  private readonly rc: RecrawlNodeConfig;
  private lastOutcomeId = "0";
  private lastHintId = "0";
  private queue: PlannedVisit[] = [];
  private nextCycleMs = 0;
  /** Per host: when its sitemaps are next fetched (a new host's at the next cycle). */
  private readonly sitemapDue = new Map<string, number>();
  private readonly sitemapEveryMs: number;
  private readonly hostFetches = new Map<string, number>();
  private running = true;
  private loop: Promise<void> = Promise.resolve();
  private snap: RecrawlSnapshot;

  private constructor(private readonly redis: Redis, private readonly frontier: NodeFrontier, private readonly config: NodeConfig, private readonly say: (m: string) => void) {
    this.rc = config.recrawl as RecrawlNodeConfig;
    this.store = new RecrawlHistoryStore(redis, config.prefix, this.rc.outcomeStreamCap);
    this.tiers = new ValueTiers(this.rc.value);
    this.sitemapEveryMs = Math.min(DAY_MS, 16 * this.rc.cycleMs);
    this.snap = this.emptySnapshot();
  }

  private async openSchedule(): Promise<boolean> {
    const cycleMs = this.rc.cycleMs;
    const existed = (await this.redis.exists(`${this.config.prefix}rsched`)) === 1;
    this.scheduler = await RedisRecrawlSchedule.open(this.redis, this.config.prefix, {
      budgetPerDay: budgetPerDay(this.rc).perDay,
      cycleMs,
      objective: this.rc.objective,
      // The fetch stage enforces the real gap (robots Crawl-delay, back-off); the plan only avoids
      // planning more than a host can take in a cycle.
      hostDelayMs: () => this.config.delayMs + this.config.politenessMarginMs,
      pendingTimeoutMs: Math.max(4 * cycleMs, 2 * this.config.leaseTtlMs),
      maxDebt: budgetPerDay(this.rc).perDay,
      maxMissedPlans: MAX_MISSED_PLANS,
      // A page at most once a cycle (the changes objective would otherwise chase the fastest).
      maxVisitsPerDay: DAY_MS / cycleMs,
      changesRefRatio: 1 / Math.max(1, ...this.rc.value.weights),
      pageValue: (url) => this.valueOf(url).value,
    });
    return existed;
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
      overall: zero, hosts: [], freshness: 1, valueFreshness: 1, validation: { visits: 0, predictedChanges: 0, observedChanges: 0, brier: 0 },
    };
  }

  private valueOf(url: string): { tier: number; value: number } {
    const tier = this.tiers.tierOf(url);
    return { tier, value: this.tiers.weightOf(tier) };
  }

  /**
   * Opens the schedule in Redis and the stream positions it kept. Only a node whose histories were
   * written before the schedule lived in Redis (no P rsched yet) has them indexed, once.
   */
  private async restore(): Promise<void> {
    const existed = await this.openSchedule();
    const last = async (key: string) => ((await this.redis.xrevrange(key, "+", "-", "COUNT", 1))[0]?.[0]) ?? "0";
    this.lastOutcomeId = (await this.scheduler.getMark("rv")) ?? (await last(`${this.config.prefix}rv`));
    this.lastHintId = (await this.scheduler.getMark("rhint")) ?? (await last(hintStreamKey(this.config.prefix)));
    if (!existed) await this.indexOldHistories();
    const pages = this.scheduler.snapshotState.pages;
    if (pages > 0) this.say(`continuous mode: ${pages} pages in the re-crawl schedule`);
  }

  /** Puts the histories of an older node (no due-time index yet) into the schedule. */
  private async indexOldHistories(): Promise<void> {
    const now = Date.now();
    const batch: Array<{ url: string; atMs: number; changed: null }> = [];
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
          if (h.dueSec) continue;
          batch.push({ url: origin + field, atMs: h.lastVisitMs, changed: null });
          n++;
          if (batch.length >= RECORD_BATCH) await this.scheduler.recorded(batch.splice(0), now);
        }
      }
    } while (cursor !== "0");
    await this.scheduler.recorded(batch, now);
    if (n > 0) this.say(`continuous mode: ${n} stored histories indexed in the re-crawl schedule`);
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
      const plan = await this.scheduler.plan(now);
      for (const v of plan) this.snap.planned[v.reason] = (this.snap.planned[v.reason] ?? 0) + 1;
      this.snap.dropped = this.scheduler.dropped;
      // Visits still waiting from the last cycle stay ahead (the plan is in start order).
      this.queue = [...this.queue, ...plan].sort((a, b) => a.atMs - b.atMs);
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
      if (rows.length === 0) return;
      let charged = 0;
      for (const o of rows) {
        let host: string;
        try {
          host = new URL(o.url).host;
        } catch {
          continue;
        }
        this.hostFetches.set(host, (this.hostFetches.get(host) ?? 0) + 1);
        if (o.changed === null) {
          // A first visit (discovery through the frontier): it joins the schedule, and its cost
          // is charged to the budget, so discovery and revisits together stay within it.
          charged += o.cost;
          this.snap.discoveryCharged++;
        }
      }
      for (let i = 0; i < rows.length; i += RECORD_BATCH) await this.scheduler.recorded(rows.slice(i, i + RECORD_BATCH), now);
      await this.scheduler.charge(charged);
      this.lastOutcomeId = (rows[rows.length - 1] as { id: string }).id;
      await this.scheduler.setMark("rv", this.lastOutcomeId);
      if (rows.length < OUTCOME_BATCH) return;
    }
  }

  /** Sitemap lastmod hints: a lastmod newer than our copy marks the page stale. */
  private async readHints(now: number): Promise<void> {
    const rows = await this.redis.xrange(hintStreamKey(this.config.prefix), `(${this.lastHintId}`, "+", "COUNT", 20);
    const stale: string[] = [];
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
        let copy;
        try {
          copy = await this.store.get(url);
        } catch {
          continue; // not a URL, or a damaged record
        }
        // Not ours (yet: discovery finds it) or out of the schedule: no hint.
        if (copy?.dueSec && hintSaysStale(p[1], copy)) stale.push(url);
      }
    }
    if (stale.length > 0) this.snap.hintsApplied += await this.scheduler.hint(stale, now);
    if (rows.length > 0) await this.scheduler.setMark("rhint", this.lastHintId);
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
    await this.scheduler.charge(visits.length * visitCost({ ...DEFAULT_COST_CONFIG, unit, creditsByType: this.rc.creditsByType }, { pageType: "html" }));
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
      pages: this.scheduler.snapshotState.pages,
      overall: await this.store.metrics(),
      hosts,
      freshness: await this.scheduler.estimatedFreshness(now),
      valueFreshness: await this.scheduler.estimatedFreshness(now, true),
      validation: this.scheduler.validationReport(),
    };
  }
}
