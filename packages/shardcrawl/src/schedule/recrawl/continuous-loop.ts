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
} from "./index.js";
import { compileRobots, type RobotsEntry } from "../../fetch/robots.js";
import { cachedRegistrableDomain } from "../../url/scope.js";
import { FrontierKeys, type HostPressure } from "../../frontier/index.js";
import { budgetPerDay, type RecrawlBudgetUnit, type RecrawlNodeConfig } from "./continuous-config.js";
import { chargesKey, feedQueuedKey, feedsKey, hintStreamKey, listingStreamKey } from "./continuous-visits.js";
import { ListingRules } from "./listing-rules.js";

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
/** Unknown URLs queued from one sitemap or feed at most (discovery stays a trickle, not a flood). */
const MAX_DISCOVERY_PER_DOC = 1000;
/** Sitemaps (index children included) fetched per host per sitemap round at most. */
const MAX_SITEMAPS_PER_HOST_ROUND = 20;
/** URLs queued from feeds and sitemaps marked for the fetchers' duplicate check at most (then the marks start over). */
const FEED_QUEUED_MARKS = 20_000;
/** Recently queued discoveries remembered, so a feed read twice does not queue an entry twice. */
const QUEUED_MEMORY = 100_000;
/**
 * Share of the budget the detectors may take together, the rest staying for the pages themselves:
 * half of it for listing reads, half for sitemaps and feeds (all of it without listing rules).
 * Unspent credit is kept for DETECTOR_CREDIT_CYCLES cycles (a sitemap round comes every 16).
 */
const DETECTOR_BUDGET_SHARE = 0.5;
const DETECTOR_CREDIT_CYCLES = 16;
/** Change hints remembered with the time of their evidence (recent ones; cleared when full). */
const HINT_MEMORY = 100_000;

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
  /** Sitemaps named by sitemap index files and queued (bounded per host and round). */
  indexSitemapsQueued: number;
  /** Feeds queued; dated feed entries newer than our copy that marked a page stale. */
  feedsQueued: number;
  feedHints: number;
  /** URLs from feeds and sitemaps we had never fetched, queued at once (charged when fetched). */
  newEntriesQueued: number;
  /** Listing reads, item summaries seen changed on them, and items marked stale because of it. */
  listingReads: number;
  listingChangedItems: number;
  listingHints: number;
  listingsQueued: number;
  /** robots.txt requests charged to the budget. */
  robotsCharged: number;
  /** Pages dropped after MAX_MISSED_PLANS plans without an answer. */
  dropped: number;
  overall: RecrawlMetrics;
  hosts: Array<RecrawlMetrics & { host: string }>;
  /** The model's mean P(fresh) of visited pages, and value-weighted. */
  freshness: number;
  valueFreshness: number;
  validation: ValidationReport;
}

/**
 * What the loop needs from the node's configuration. A structural type, so this folder does not
 * depend on node/ (the node's config satisfies it as it is).
 */
export interface RecrawlHostConfig {
  prefix: string;
  userAgent: string;
  delayMs: number;
  politenessMarginMs: number;
  /** Whether the fetch stage spaces requests per registrable domain (default) or per host. */
  politenessKey?: "host" | "domain";
  leaseTtlMs: number;
  recrawl?: RecrawlNodeConfig;
}

/** What the loop needs from the node's frontier (its host queues, robots cache and flow state). */
export interface RecrawlFrontierPort {
  /** `front`: ahead of the tier's backlog (a hinted page, a new feed entry). */
  addRevisits(visits: ReadonlyArray<{ url: string; host: string }>, tier: number, now?: number, front?: boolean): Promise<number>;
  hostOrigin(host: string): Promise<string | null>;
  hostPressure(topN: number): Promise<HostPressure[]>;
  mightHaveSeen(urls: readonly string[]): Promise<boolean[]>;
  getRobots(origin: string): Promise<RobotsEntry | null>;
}

export class RecrawlLoop {
  private readonly store: RecrawlHistoryStore;
  private readonly tiers: ValueTiers;
  private scheduler!: RedisRecrawlSchedule;
  private readonly rc: RecrawlNodeConfig;
  private lastOutcomeId = "0";
  private lastHintId = "0";
  private lastListingId = "0";
  private readonly listingRules: ListingRules;
  /** URLs queued for discovery from feeds and sitemaps (recent ones; cleared when full). */
  private readonly queuedNew = new Set<string>();
  /**
   * Pages a listing read hinted stale, with the read's fetch time (our clock). A visit fetched
   * before that time but recorded after the hint clears the hint in its record; it is hinted again.
   */
  private readonly hintedAt = new Map<string, number>();
  /** Per host: sitemaps fetched in the current sitemap round. */
  private readonly sitemapRound = new Map<string, number>();
  private readonly feedDue = new Map<string, number>();
  private readonly feedEveryMs: number;
  private queue: PlannedVisit[] = [];
  private nextCycleMs = 0;
  /** Per host: when its sitemaps are next fetched (a new host's at the next cycle). */
  private readonly sitemapDue = new Map<string, number>();
  private readonly sitemapEveryMs: number;
  private readonly hostFetches = new Map<string, number>();
  /** Budget the detectors may still spend (see DETECTOR_BUDGET_SHARE): listing reads, and sitemaps and feeds. */
  private readonly credit = { listings: 0, documents: 0 };
  private running = true;
  private loop: Promise<void> = Promise.resolve();
  private snap: RecrawlSnapshot;

  private constructor(private readonly redis: Redis, private readonly frontier: RecrawlFrontierPort, private readonly config: RecrawlHostConfig, private readonly say: (m: string) => void) {
    this.rc = config.recrawl as RecrawlNodeConfig;
    this.store = new RecrawlHistoryStore(redis, config.prefix, this.rc.outcomeStreamCap);
    this.tiers = new ValueTiers(this.rc.value);
    this.sitemapEveryMs = Math.min(DAY_MS, 16 * this.rc.cycleMs);
    this.feedEveryMs = Math.min(DAY_MS, 8 * this.rc.cycleMs);
    this.listingRules = new ListingRules(this.rc.listings ?? []);
    this.snap = this.emptySnapshot();
  }

  private async openSchedule(): Promise<boolean> {
    const cycleMs = this.rc.cycleMs;
    const existed = (await this.redis.exists(new FrontierKeys(this.config.prefix).recrawlState)) === 1;
    this.scheduler = await RedisRecrawlSchedule.open(this.redis, this.config.prefix, {
      budgetPerDay: budgetPerDay(this.rc).perDay,
      cycleMs,
      objective: this.rc.objective,
      // The fetch stage enforces the real gap (robots Crawl-delay, back-off); the plan only avoids
      // planning more than a host can take in a cycle.
      hostDelayMs: () => this.config.delayMs + this.config.politenessMarginMs,
      politenessKey: this.config.politenessKey === "host" ? (host) => host : cachedRegistrableDomain,
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

  static async start(redis: Redis, frontier: RecrawlFrontierPort, config: RecrawlHostConfig, say: (m: string) => void): Promise<RecrawlLoop> {
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
      indexSitemapsQueued: 0, feedsQueued: 0, feedHints: 0, newEntriesQueued: 0, listingReads: 0, listingChangedItems: 0, listingHints: 0, listingsQueued: 0, robotsCharged: 0,
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
    this.lastOutcomeId = (await this.scheduler.getMark("rv")) ?? (await last(new FrontierKeys(this.config.prefix).recrawlOutcomes));
    this.lastHintId = (await this.scheduler.getMark("rhint")) ?? (await last(hintStreamKey(this.config.prefix)));
    this.lastListingId = (await this.scheduler.getMark("rlisting")) ?? (await last(listingStreamKey(this.config.prefix)));
    if (!existed) await this.indexOldHistories();
    const pages = this.scheduler.snapshotState.pages;
    if (pages > 0) this.say(`continuous mode: ${pages} pages in the re-crawl schedule`);
  }

  /** Puts the histories of an older node (no due-time index yet) into the schedule. */
  private async indexOldHistories(): Promise<void> {
    const now = Date.now();
    const batch: Array<{ url: string; atMs: number; changed: null }> = [];
    const prefix = new FrontierKeys(this.config.prefix).recrawlHistoryPrefix;
    let cursor = "0";
    let n = 0;
    do {
      const [next, keys] = await this.redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
      cursor = next;
      for (const key of keys) {
        const host = key.slice(prefix.length);
        // The history keeps path+query per host; the scheme and port come from the host's origin.
        const origin = await this.frontier.hostOrigin(host);
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
    await this.readListings(now);
    if (now >= this.nextCycleMs) {
      await this.chargeRobots();
      await this.updateHostHealth();
      const plan = await this.scheduler.plan(now);
      for (const v of plan) this.snap.planned[v.reason] = (this.snap.planned[v.reason] ?? 0) + 1;
      this.snap.dropped = this.scheduler.dropped;
      // Visits still waiting from the last cycle stay ahead (the plan is in start order).
      this.queue = [...this.queue, ...plan].sort((a, b) => a.atMs - b.atMs);
      this.nextCycleMs = now + this.rc.cycleMs;
      this.earnDetectorCredit();
      await this.queueListings(now);
      await this.queueFeeds(now);
      await this.queueSitemaps(now);
      await this.refreshMetrics(now);
    }
    let due = 0;
    while (due < this.queue.length && (this.queue[due] as PlannedVisit).atMs <= now) due++;
    if (due > 0) {
      const batch = this.queue.slice(0, due);
      this.queue = this.queue.slice(due);
      const urgent = batch.filter((v) => v.urgent);
      if (urgent.length < batch.length) await this.frontier.addRevisits(batch.filter((v) => !v.urgent), REVISIT_TIER, now);
      if (urgent.length > 0) await this.frontier.addRevisits(urgent, REVISIT_TIER, now, true);
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
      await this.rehint(rows, now);
      await this.scheduler.charge(charged);
      this.lastOutcomeId = (rows[rows.length - 1] as { id: string }).id;
      await this.scheduler.setMark("rv", this.lastOutcomeId);
      if (rows.length < OUTCOME_BATCH) return;
    }
  }

  /** Notes listing hints with the time of the read (see hintedAt). */
  private rememberHints(hints: ReadonlyArray<readonly [string, number]>): void {
    for (const [url, evidenceMs] of hints) {
      if (this.hintedAt.size >= HINT_MEMORY) this.hintedAt.clear();
      this.hintedAt.set(url, Math.max(evidenceMs, this.hintedAt.get(url) ?? 0));
    }
  }

  /**
   * Recorded visits fetched before the evidence of a hint their page had (a parse finished after
   * the listing's): recording cleared the hint, so it is set again. A visit after the evidence
   * answers the hint.
   */
  private async rehint(rows: ReadonlyArray<{ url: string; atMs: number }>, now: number): Promise<void> {
    const again: string[] = [];
    for (const o of rows) {
      const evidence = this.hintedAt.get(o.url);
      if (evidence === undefined) continue;
      if (o.atMs < evidence) again.push(o.url);
      else this.hintedAt.delete(o.url);
    }
    if (again.length > 0) await this.scheduler.hint(again, now);
  }

  /** The cost of one fetch of an HTML page in the budget's unit (sitemaps, feeds, robots.txt, listings). */
  private fetchCost(): number {
    return visitCost({ ...DEFAULT_COST_CONFIG, unit: budgetPerDay(this.rc).unit, creditsByType: this.rc.creditsByType }, { pageType: "html" });
  }

  /**
   * Entries of sitemaps, sitemap indexes and feeds. A date newer than our copy marks the page stale;
   * a same-host URL we never fetched is queued now (discovery: its first visit is charged when it
   * is recorded); an index's child sitemaps are queued (bounded per host and round, charged).
   */
  private async readHints(now: number): Promise<void> {
    const rows = await this.redis.xrange(hintStreamKey(this.config.prefix), `(${this.lastHintId}`, "+", "COUNT", 20);
    const stale: string[] = [];
    let feedStale = 0;
    const discover: Array<{ url: string; host: string; fromFeed: boolean }> = [];
    const children: Array<{ url: string; host: string }> = [];
    for (const [id, fields] of rows) {
      this.lastHintId = id;
      const field = (k: string) => fields[fields.indexOf(k) + 1];
      const kind = fields.includes("k") ? field("k") : "sitemap";
      let docHost: string;
      let pairs: unknown;
      try {
        docHost = new URL(field("s") ?? "").host;
        pairs = JSON.parse(field("h") ?? "[]");
      } catch {
        continue;
      }
      if (!Array.isArray(pairs)) continue;
      let found = 0;
      for (const p of pairs) {
        if (!Array.isArray(p) || typeof p[0] !== "string" || typeof p[1] !== "number") continue;
        const url = p[0];
        let host: string;
        try {
          host = new URL(url).host;
        } catch {
          continue;
        }
        if (host !== docHost) continue; // a sitemap or feed speaks for its own host only
        if (kind === "index") {
          const n = this.sitemapRound.get(host) ?? 0;
          if (n >= MAX_SITEMAPS_PER_HOST_ROUND) continue;
          this.sitemapRound.set(host, n + 1);
          children.push({ url, host });
          continue;
        }
        let copy;
        try {
          copy = await this.store.get(url);
        } catch {
          continue; // a damaged record
        }
        if (copy) {
          if (copy.dueSec && p[1] > 0 && hintSaysStale(p[1], copy)) {
            stale.push(url);
            if (kind === "feed") feedStale++;
          }
          continue;
        }
        if (found >= MAX_DISCOVERY_PER_DOC || this.queuedNew.has(url)) continue;
        // A listing page keeps no history record; it is known when it is in the listing schedule.
        if (this.listingRules.for(url) && (await this.redis.zscore(this.listingsKey(), url)) !== null) continue;
        found++;
        if (this.queuedNew.size >= QUEUED_MEMORY) this.queuedNew.clear();
        this.queuedNew.add(url);
        discover.push({ url, host, fromFeed: kind === "feed" });
      }
    }
    if (stale.length > 0) {
      // Not remembered for rehint(): an entry's date is the site's clock, which may run ahead of ours.
      const applied = await this.scheduler.hint(stale, now);
      this.snap.hintsApplied += applied;
      this.snap.feedHints += Math.min(feedStale, applied);
    }
    // A sitemap's URLs the crawl has already seen are queued or fetched through it. A feed's are
    // queued now even so: a new entry is worth fetching at once, not when discovery reaches it.
    // Each is marked (P rfq) so that of this copy and a discovery copy (waiting now, or queued by
    // a link found later: these URLs do not enter the seen filter) only the first leased is fetched.
    const bulk = discover.filter((d) => !d.fromFeed);
    const seen = bulk.length > 0 ? await this.frontier.mightHaveSeen(bulk.map((d) => d.url)) : [];
    const fresh = [...discover.filter((d) => d.fromFeed), ...bulk.filter((_, i) => !seen[i])].map(({ url, host }) => ({ url, host }));
    if (fresh.length > 0) {
      const marks = feedQueuedKey(this.config.prefix);
      if ((await this.redis.hlen(marks)) + fresh.length > FEED_QUEUED_MARKS) await this.redis.unlink(marks); // bounded: start over
      await this.redis.hset(marks, ...fresh.flatMap((f) => [f.url, "0"]));
      await this.frontier.addRevisits(fresh, REVISIT_TIER, now, true);
      this.snap.newEntriesQueued += fresh.length;
    }
    if (children.length > 0) {
      await this.frontier.addRevisits(children, REVISIT_TIER, now);
      await this.scheduler.charge(children.length * this.fetchCost());
      this.credit.documents -= children.length * this.fetchCost(); // bounded per host and round; may go below zero
      this.snap.indexSitemapsQueued += children.length;
    }
    if (rows.length > 0) await this.scheduler.setMark("rhint", this.lastHintId);
  }

  private listingsKey(): string {
    return new FrontierKeys(this.config.prefix).recrawlListings;
  }

  /**
   * Listing reads (parsers compare each item's summary with the last read): the items whose
   * summary changed are marked stale, which puts them first in the next plan. The listing itself
   * joins the listing schedule (P rlists: URL -> next read), read every revisitMs (default a cycle).
   */
  private async readListings(now: number): Promise<void> {
    const rows = await this.redis.xrange(listingStreamKey(this.config.prefix), `(${this.lastListingId}`, "+", "COUNT", 100);
    const stale: Array<[string, number]> = [];
    for (const [id, fields] of rows) {
      this.lastListingId = id;
      const field = (k: string) => fields[fields.indexOf(k) + 1];
      const url = field("u");
      if (!url) continue;
      this.snap.listingReads++;
      const every = this.listingRules.for(url)?.revisitMs ?? this.rc.cycleMs;
      // NX: a read queued by the listing schedule already set the next time; a first read sets it.
      await this.redis.zadd(this.listingsKey(), "NX", now + every, url);
      let changed: unknown;
      try {
        changed = JSON.parse(field("c") ?? "[]");
      } catch {
        continue;
      }
      if (!Array.isArray(changed)) continue;
      const readAt = Number(field("t") ?? now);
      for (const u of changed) {
        if (typeof u !== "string") continue;
        this.snap.listingChangedItems++;
        // A copy fetched after the listing read already shows what the listing showed.
        let copy;
        try {
          copy = await this.store.get(u);
        } catch {
          continue; // a damaged record
        }
        if (copy && copy.lastVisitMs >= readAt) continue;
        stale.push([u, readAt]);
      }
    }
    if (stale.length > 0) {
      this.rememberHints(stale);
      this.snap.listingHints += await this.scheduler.hint(stale.map(([u]) => u), now);
    }
    if (rows.length > 0) await this.scheduler.setMark("rlisting", this.lastListingId);
  }

  /**
   * A cycle's detector credit (DETECTOR_BUDGET_SHARE), split between listings and documents. None
   * while the budget pays a debt (discovery is charged): detectors reading on would keep the debt
   * up and the pages they hint at would never be fetched.
   */
  private earnDetectorCredit(): void {
    if (this.scheduler.snapshotState.carry < 0) return;
    const share = (DETECTOR_BUDGET_SHARE * budgetPerDay(this.rc).perDay * this.rc.cycleMs) / DAY_MS;
    const listings = this.listingRules.size > 0 ? share / 2 : 0;
    const cap = (perCycle: number) => Math.max(DETECTOR_CREDIT_CYCLES * perCycle, 20 * this.fetchCost());
    this.credit.listings = Math.min(this.credit.listings + listings, cap(listings));
    this.credit.documents = Math.min(this.credit.documents + share - listings, cap(share - listings));
  }

  /** Queues the listings whose read is due, within their credit, charged. */
  private async queueListings(now: number): Promise<void> {
    if (this.listingRules.size === 0) return;
    const cost = this.fetchCost();
    const max = Math.floor(this.credit.listings / cost);
    if (max <= 0) return;
    const due = await this.redis.zrangebyscore(this.listingsKey(), "-inf", now, "LIMIT", 0, max);
    if (due.length === 0) return;
    const visits: Array<{ url: string; host: string }> = [];
    const next: Array<string | number> = [];
    for (const url of due) {
      let host: string;
      try {
        host = new URL(url).host;
      } catch {
        await this.redis.zrem(this.listingsKey(), url);
        continue;
      }
      visits.push({ url, host });
      next.push(now + (this.listingRules.for(url)?.revisitMs ?? this.rc.cycleMs), url);
    }
    if (visits.length === 0) return;
    await this.frontier.addRevisits(visits, REVISIT_TIER, now);
    await this.redis.zadd(this.listingsKey(), ...next);
    await this.scheduler.charge(visits.length * cost);
    this.credit.listings -= visits.length * cost;
    this.snap.listingsQueued += visits.length;
  }

  /** Queues the feeds the hosts we keep fresh announce, every feedEveryMs per host, within their credit, charged. */
  private async queueFeeds(now: number): Promise<void> {
    const visits: Array<{ url: string; host: string }> = [];
    const cost = this.fetchCost();
    for (const host of this.hostFetches.keys()) {
      if ((this.feedDue.get(host) ?? 0) > now) continue;
      const raw = await this.redis.hget(feedsKey(this.config.prefix), host);
      if (!raw) continue;
      let urls: unknown;
      try {
        urls = JSON.parse(raw);
      } catch {
        this.feedDue.set(host, now + this.feedEveryMs);
        continue;
      }
      const feeds = Array.isArray(urls) ? urls.filter((u): u is string => typeof u === "string") : [];
      if (this.credit.documents < feeds.length * cost) break; // the host stays due until there is credit
      this.credit.documents -= feeds.length * cost;
      this.feedDue.set(host, now + this.feedEveryMs);
      for (const url of feeds) visits.push({ url, host });
    }
    if (visits.length === 0) return;
    await this.frontier.addRevisits(visits, REVISIT_TIER, now);
    await this.scheduler.charge(visits.length * cost);
    this.snap.feedsQueued += visits.length;
  }

  /** robots.txt requests the fetchers made since the last cycle are charged to the budget. */
  private async chargeRobots(): Promise<void> {
    const key = chargesKey(this.config.prefix);
    const n = Number((await this.redis.hget(key, "robots")) ?? 0);
    if (!(n > 0)) return;
    await this.redis.hincrby(key, "robots", -n);
    await this.scheduler.charge(n * this.fetchCost());
    this.snap.robotsCharged += n;
  }

  /** Queues the sitemaps robots.txt lists for the hosts we keep fresh whose turn it is, charged to the budget. */
  private async queueSitemaps(now: number): Promise<void> {
    const visits: Array<{ url: string; host: string }> = [];
    const cost = this.fetchCost();
    for (const host of this.hostFetches.keys()) {
      if ((this.sitemapDue.get(host) ?? 0) > now) continue;
      const origin = await this.frontier.hostOrigin(host);
      const entry = origin ? await this.frontier.getRobots(origin) : null;
      const sitemaps: string[] = [];
      for (const url of entry ? compileRobots(entry, this.config.userAgent).sitemaps : []) {
        let h: string;
        try {
          h = new URL(url).host;
        } catch {
          continue;
        }
        if (h === host) sitemaps.push(url); // another host's sitemap is not ours to fetch
      }
      if (this.credit.documents < sitemaps.length * cost) break; // the host stays due until there is credit
      this.credit.documents -= sitemaps.length * cost;
      this.sitemapDue.set(host, now + this.sitemapEveryMs);
      this.sitemapRound.delete(host); // a new round: the index children budget starts over
      for (const url of sitemaps) visits.push({ url, host });
    }
    if (visits.length === 0) return;
    await this.frontier.addRevisits(visits, REVISIT_TIER, now);
    await this.scheduler.charge(visits.length * cost);
    this.snap.sitemapsQueued += visits.length;
  }

  /** Host health = 1 / flow-control pressure, less the host's retry share (cost.ts divides by it). */
  private async updateHostHealth(): Promise<void> {
    const hosts = await this.frontier.hostPressure(100);
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
