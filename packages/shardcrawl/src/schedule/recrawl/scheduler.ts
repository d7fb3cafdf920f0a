// The budgeted re-crawl scheduler. Each cycle it spends a budget (fetches, bytes or credits per
// day, see cost.ts) on the visits with the highest priority = value x freshness gain / cost, where
// freshness gain = P(stale now) x expected fresh time after the visit (poisson.ts). The expected
// fresh time uses the page's planned revisit interval from the Lagrangian optimum (optimum.ts)
// computed with the LEARNED rates, so pages that change far faster than the budget can follow
// get a small gain and are left alone instead of chased.
//
// Slices of every cycle are reserved for what a pure optimiser would never pick: discovery of new
// URLs (no history, so no priority), re-estimation of pages believed static (a wrong "never
// changes" would otherwise never be corrected) and a random validation sample whose predicted vs
// observed changes are reported. A reserve left unused flows back to the main slice.
// Politeness: one host's planned visits in a cycle are spaced by its delay; what does not fit
// waits for the next cycle.
import { type ChangeHistory, type RatePrior, emptyHistory, estimateRate, groupPrior, logNormalGroupPrior, observe, priorAround } from "./estimator.js";
import { type RecrawlObjective, optimalFrequencies } from "./optimum.js";
import { DAY_MS, expectedFreshDays, pStale } from "./poisson.js";
import { mulberry32 } from "../../shared/prng.js";

/** Why a visit was planned; "probe" and "reestimate" share the re-estimation reserve. */
export type VisitReason = "discovery" | "priority" | "reestimate" | "probe" | "validation";

export interface PlannedVisit {
  url: string;
  host: string;
  atMs: number;
  reason: VisitReason;
  /** P(changed since the last visit) predicted by the model (0 for discovery). */
  predictedChange: number;
  cost: number;
  /** A change hint made it due (listing, feed, sitemap): it must not wait behind the host's backlog. */
  urgent?: boolean;
}

export interface SchedulerConfig {
  /** Budget in cost units (visits, bytes or credits) per day. */
  budgetPerDay: number;
  cycleMs: number;
  /** Shares of each cycle's budget reserved for these kinds of visit. */
  reserves: { discovery: number; reestimate: number; validation: number };
  /** A page whose estimated rate is below this (per day) is "believed static". */
  staticRatePerDay: number;
  /** Believed-static pages become re-estimation candidates after this many days unvisited. */
  reestimateAfterDays: number;
  /** How often rates, group priors and planned intervals are recomputed. */
  replanEveryMs: number;
  /** Prior for groups with too little history (changes per day), and the prior's shape. */
  fallbackRatePerDay: number;
  priorShape: number;
  /**
   * Family of the per-group prior: "lognormal" (mean and spread of the group's log-rates) or
   * "gamma" (shape priorShape around the group's geometric mean; over-shrinks pages whose rate is
   * far from their group's, see docs/recrawl.md "Estimator accuracy").
   */
  prior: "lognormal" | "gamma";
  /** Spread (natural log) of the fallback log-normal prior, for groups with too little history. */
  fallbackLogSigma: number;
  /** Minimum spacing between the starts of two planned visits to one host (ms). */
  hostDelayMs: (host: string) => number;
  /** Seed of the validation sample. */
  seed: number;
  /**
   * A planned visit not recorded after this long is planned again (its fetch failed or is still
   * waiting behind politeness); until then the page is not planned twice.
   */
  pendingTimeoutMs: number;
  /** Most budget debt (cost units) that visits made outside the plan (discovery) may run up. */
  maxDebt: number;
  /**
   * "freshness" (default): keep copies fresh, fast pages get fewer visits; "changes": capture as
   * many changes as the budget allows (a visit is worth its P(changed)), visits grow with the
   * rate up to one per cycle per page (optimum.ts changesFrequencyAt).
   */
  objective: RecrawlObjective;
}

export const DEFAULT_SCHEDULER_CONFIG: Omit<SchedulerConfig, "budgetPerDay"> = {
  cycleMs: 15 * 60_000,
  reserves: { discovery: 0.05, reestimate: 0.05, validation: 0.02 },
  staticRatePerDay: 1 / 180,
  reestimateAfterDays: 30,
  replanEveryMs: DAY_MS,
  fallbackRatePerDay: 0.2,
  priorShape: 1.3,
  prior: "lognormal",
  fallbackLogSigma: 2,
  hostDelayMs: () => 1000,
  seed: 1,
  pendingTimeoutMs: 60 * 60_000,
  maxDebt: Infinity,
  objective: "freshness",
};

export interface PageEntry {
  url: string;
  host: string;
  /** Prior group (host by default; a page type works too). */
  group: string;
  value: number;
  cost: number;
  discoveredMs: number;
  lastVisitMs: number | null;
  history: ChangeHistory;
  rate: number;
  plannedIntervalDays: number;
  /** Epoch ms until which a planned visit is awaited (not planned again); 0 = none. */
  pendingUntilMs: number;
  /** A change hint (sitemap lastmod, feed) newer than the last visit: epoch ms, 0 = none. */
  hintMs: number;
}

export interface ValidationReport {
  visits: number;
  predictedChanges: number;
  observedChanges: number;
  /** Mean squared error of the predicted change probability (lower is better). */
  brier: number;
}

/** Changed at (nearly) every visit: the rate estimate is a lower bound. */
function isSaturated(e: PageEntry): boolean {
  const h = e.history;
  return h.observations >= 3 && h.changes >= 0.9 * h.observations;
}

export class RecrawlScheduler {
  readonly config: SchedulerConfig;
  private readonly pages: PageEntry[] = [];
  private readonly byUrl = new Map<string, PageEntry>();
  private readonly priors = new Map<string, RatePrior>();
  private readonly hostNextMs = new Map<string, number>();
  private readonly pendingValidation = new Map<string, number>();
  private readonly validation: ValidationReport = { visits: 0, predictedChanges: 0, observedChanges: 0, brier: 0 };
  private readonly random: () => number;
  private carry = 0;
  private maxCost = 0;
  private readonly reserveCredit = { discovery: 0, reestimate: 0, validation: 0 };
  private lastReplanMs = -Infinity;
  /** Host health in (0, 1] (1 = healthy); a visit's cost is divided by it (cost.ts). */
  private readonly health = new Map<string, number>();

  constructor(config: Partial<SchedulerConfig> & { budgetPerDay: number }) {
    this.config = { ...DEFAULT_SCHEDULER_CONFIG, ...config };
    if (!(this.config.budgetPerDay > 0)) throw new Error("recrawl scheduler: budgetPerDay must be > 0");
    if (!(this.config.cycleMs > 0)) throw new Error("recrawl scheduler: cycleMs must be > 0");
    const r = this.config.reserves;
    if (!(r.discovery >= 0 && r.reestimate >= 0 && r.validation >= 0 && r.discovery + r.reestimate + r.validation < 1)) {
      throw new Error("recrawl scheduler: reserves must be >= 0 and sum to less than 1");
    }
    this.random = mulberry32(this.config.seed);
  }

  /** A URL to keep fresh (discovered now, or known with a copy fetched at `lastVisitMs`). */
  add(url: string, host: string, opts: { value?: number; cost?: number; group?: string; nowMs: number; lastVisitMs?: number; history?: ChangeHistory }): void {
    if (this.byUrl.has(url)) return;
    const e: PageEntry = {
      url, host, group: opts.group ?? host, value: opts.value ?? 1, cost: opts.cost ?? 1,
      discoveredMs: opts.nowMs, lastVisitMs: opts.lastVisitMs ?? null, history: opts.history ?? emptyHistory(),
      rate: this.config.fallbackRatePerDay, plannedIntervalDays: Infinity, pendingUntilMs: 0, hintMs: 0,
    };
    this.pages.push(e);
    this.byUrl.set(url, e);
    this.maxCost = Math.max(this.maxCost, e.cost);
    this.lastReplanMs = -Infinity; // new pages change the plan
  }

  /** Host health in (0, 1]: a struggling host's visits cost more (1 / health), so fewer are planned. */
  setHostHealth(host: string, health: number): void {
    const h = Math.max(0.05, Math.min(1, health));
    if (h === 1) this.health.delete(host);
    else this.health.set(host, h);
  }

  /** A visit's cost in budget units, with its host's health applied. */
  costOf(e: PageEntry): number {
    return e.cost / (this.health.get(e.host) ?? 1);
  }

  /** Updates a page's base cost (e.g. its size changed). */
  setCost(url: string, cost: number): void {
    const e = this.byUrl.get(url);
    if (!e || !(cost > 0)) return;
    e.cost = cost;
    this.maxCost = Math.max(this.maxCost, cost);
  }

  /**
   * Charges a visit made outside the plan (a discovery fetch through the frontier) to the budget:
   * the next cycles plan less until it is paid (the debt is capped at maxDebt).
   */
  charge(cost: number): void {
    if (cost > 0) this.carry = Math.max(this.carry - cost, -this.config.maxDebt);
  }

  /**
   * A change hint for a page (sitemap lastmod, a feed entry): the page says it changed at
   * `changedAtMs`. Newer than our last visit, it makes the page stale with certainty (the
   * Poisson estimate would only say "probably"); older hints are ignored.
   */
  hint(url: string, changedAtMs: number): boolean {
    const e = this.byUrl.get(url);
    if (!e || e.lastVisitMs === null || !(changedAtMs > e.lastVisitMs)) return false;
    e.hintMs = Math.max(e.hintMs, changedAtMs);
    return true;
  }

  /** Drops a page from the schedule (it went away: redirects, 404s, robots.txt now forbids it). */
  remove(url: string): boolean {
    const e = this.byUrl.get(url);
    if (!e) return false;
    this.byUrl.delete(url);
    this.pendingValidation.delete(url);
    const i = this.pages.indexOf(e);
    if (i >= 0) this.pages.splice(i, 1);
    return true;
  }

  get size(): number {
    return this.pages.length;
  }

  entry(url: string): PageEntry | undefined {
    return this.byUrl.get(url);
  }

  private fallbackPrior(): RatePrior {
    const c = this.config;
    return c.prior === "gamma" ? priorAround(c.fallbackRatePerDay, c.priorShape) : { mu: Math.log(c.fallbackRatePerDay), sigma: c.fallbackLogSigma };
  }

  private fitPrior(rates: readonly number[], fallback: RatePrior): RatePrior {
    if (this.config.prior === "gamma") return groupPrior(rates, fallback as ReturnType<typeof priorAround>, this.config.priorShape);
    return logNormalGroupPrior(rates, fallback as { mu: number; sigma: number });
  }

  private priorOf(group: string): RatePrior {
    return this.priors.get(group) ?? this.fallbackPrior();
  }

  /** Re-fits the group priors, re-estimates every rate and recomputes the planned intervals. */
  replan(nowMs: number): void {
    const fallback = this.fallbackPrior();
    const groups = new Map<string, number[]>();
    for (const e of this.pages) {
      if (e.history.observations < 3) continue; // only pages with some evidence shape the prior
      let g = groups.get(e.group);
      if (!g) groups.set(e.group, (g = []));
      g.push(e.rate);
    }
    const all = [...groups.values()].flat();
    const global = this.fitPrior(all, fallback);
    this.priors.clear();
    for (const [g, rates] of groups) this.priors.set(g, this.fitPrior(rates, global));
    for (const e of this.pages) e.rate = estimateRate(e.history, this.priors.get(e.group) ?? global);
    const mainShare = 1 - this.config.reserves.discovery - this.config.reserves.reestimate - this.config.reserves.validation;
    const plan = optimalFrequencies(this.pages.map((e) => ({ rate: e.rate, value: e.value, cost: this.costOf(e) })), this.config.budgetPerDay * mainShare, this.config.objective, DAY_MS / this.config.cycleMs);
    this.pages.forEach((e, i) => {
      const f = plan.frequencies[i] as number;
      e.plannedIntervalDays = f > 0 ? 1 / f : Infinity;
    });
    this.lastReplanMs = nowMs;
  }

  /** Priority of revisiting a page now: value x freshness gain / cost. */
  priority(e: PageEntry, nowMs: number): number {
    if (e.lastVisitMs === null) return 0;
    // A hint newer than the last visit says the copy IS stale: P(stale) = 1.
    const stale = e.hintMs > e.lastVisitMs ? 1 : pStale(e.rate, (nowMs - e.lastVisitMs) / DAY_MS);
    // Capturing changes, a visit is worth the chance it finds one; keeping fresh, that chance
    // times how long the copy then stays fresh.
    if (this.config.objective === "changes") return Number.isFinite(e.plannedIntervalDays) ? (e.value * stale) / this.costOf(e) : 0;
    return (e.value * stale * expectedFreshDays(e.rate, e.plannedIntervalDays)) / this.costOf(e);
  }

  /** The model's mean P(fresh) over visited pages at `nowMs` (value-weighted when asked). */
  estimatedFreshness(nowMs: number, weighted = false): number {
    let sum = 0;
    let w = 0;
    for (const e of this.pages) {
      if (e.lastVisitMs === null) continue;
      const v = weighted ? e.value : 1;
      const fresh = e.hintMs > e.lastVisitMs ? 0 : 1 - pStale(e.rate, Math.max(0, nowMs - e.lastVisitMs) / DAY_MS);
      sum += v * fresh;
      w += v;
    }
    return w === 0 ? 1 : sum / w;
  }

  /** The visits of the cycle starting at `nowMs`, in start order. */
  plan(nowMs: number): PlannedVisit[] {
    if (nowMs - this.lastReplanMs >= this.config.replanEveryMs) this.replan(nowMs);
    const c = this.config;
    const cycleEnd = nowMs + c.cycleMs;
    const budget = (c.budgetPerDay * c.cycleMs) / DAY_MS + this.carry;
    if (budget <= 0) {
      // Paying off visits made outside the plan (charge()): this cycle's income goes to the debt.
      this.carry = budget;
      return [];
    }
    const out: PlannedVisit[] = [];
    const taken = new Set<PageEntry>();

    const costOf = (e: PageEntry) => this.costOf(e);
    const waiting = (e: PageEntry) => e.pendingUntilMs > nowMs;
    const tryTake = (e: PageEntry, reason: VisitReason, slice: { left: number }): boolean => {
      const cost = costOf(e);
      if (taken.has(e) || waiting(e) || cost > slice.left) return false;
      const at = Math.max(nowMs, this.hostNextMs.get(e.host) ?? nowMs);
      if (at >= cycleEnd) return false; // the host is busy for the rest of this cycle
      this.hostNextMs.set(e.host, at + c.hostDelayMs(e.host));
      taken.add(e);
      slice.left -= cost;
      e.pendingUntilMs = at + c.pendingTimeoutMs;
      const predicted = e.lastVisitMs === null ? 0 : pStale(e.rate, (at - e.lastVisitMs) / DAY_MS);
      if (reason === "validation") this.pendingValidation.set(e.url, predicted);
      out.push({ url: e.url, host: e.host, atMs: at, reason, predictedChange: predicted, cost });
      return true;
    };

    // Each reserve earns its share every cycle and keeps up to max(one visit, an hour's share) of
    // credit (a 2% share of a short cycle is less than one visit); the rest flows to main.
    let handedBack = 0;
    const reserve = (kind: "discovery" | "reestimate" | "validation", candidates: readonly PageEntry[], pick: () => PageEntry | undefined, reasonOf: (e: PageEntry) => VisitReason = () => kind): void => {
      const slice = { left: this.reserveCredit[kind] + budget * c.reserves[kind] };
      for (let tries = 0; slice.left > 0 && tries < 4 * candidates.length; tries++) {
        const e = pick();
        if (!e) break;
        if (costOf(e) > slice.left) break;
        tryTake(e, reasonOf(e), slice);
      }
      const cap = Math.max(this.maxCost, (c.budgetPerDay * c.reserves[kind]) / 24);
      this.reserveCredit[kind] = Math.min(slice.left, cap);
      handedBack += slice.left - this.reserveCredit[kind];
    };
    // 1. discovery: never-visited pages, oldest discovery first.
    const fresh = this.pages.filter((e) => e.lastVisitMs === null && !waiting(e)).sort((a, b) => a.discoveredMs - b.discoveredMs);
    let di = 0;
    reserve("discovery", fresh, () => fresh[di++]);
    // 2. re-estimation: first probes of "saturated" pages that changed at (nearly) every visit:
    //    their estimate is only a lower bound, and revisiting at the planned interval would keep
    //    it one, so probe them 0.05-0.5 estimated change intervals after a visit (a change seen
    //    that soon is strong evidence of a fast page, no change is cheap evidence of a slower
    //    one) while the plan still wants them; then believed-static pages not seen for long,
    //    longest unseen first.
    const staleAfter = c.reestimateAfterDays * DAY_MS;
    const statics = this.pages
      .filter((e) => e.lastVisitMs !== null && e.rate < c.staticRatePerDay && nowMs - e.lastVisitMs >= staleAfter)
      .sort((a, b) => (a.lastVisitMs as number) - (b.lastVisitMs as number));
    const probes = this.pages
      .filter((e) => {
        if (e.lastVisitMs === null || !isSaturated(e) || !Number.isFinite(e.plannedIntervalDays)) return false;
        const elapsedRate = ((nowMs - e.lastVisitMs) / DAY_MS) * e.rate; // in mean change intervals
        return elapsedRate >= 0.05 && elapsedRate <= 0.5; // a probe only makes sense soon after a visit
      })
      .sort((a, b) => (b.lastVisitMs as number) - (a.lastVisitMs as number));
    statics.unshift(...probes); // probes first: their window is short, believed-static pages can wait
    let si = 0;
    const probeSet = new Set(probes);
    reserve("reestimate", statics, () => statics[si++], (e) => (probeSet.has(e) ? "probe" : "reestimate"));
    // 3. validation: a uniform random sample of known pages, whatever their score.
    const known = this.pages.filter((e) => e.lastVisitMs !== null && !taken.has(e) && !waiting(e));
    reserve("validation", known, () => known[Math.floor(this.random() * known.length)]);
    // 4. the main slice (plus what the reserves left) by priority.
    const reserved = c.reserves.discovery + c.reserves.reestimate + c.reserves.validation;
    const main = { left: budget * (1 - reserved) + handedBack };
    const scored: Array<[number, PageEntry]> = [];
    for (const e of this.pages) {
      if (e.lastVisitMs === null || taken.has(e) || waiting(e)) continue;
      const p = this.priority(e, nowMs);
      if (p > 0) scored.push([p, e]);
    }
    scored.sort((a, b) => b[0] - a[0]);
    for (const [, e] of scored) {
      if (main.left < 1e-9) break;
      tryTake(e, "priority", main);
    }
    // Fractions of a visit (and what busy hosts left) carry over, at most one cycle's budget.
    this.carry = Math.min(Math.max(0, main.left), (c.budgetPerDay * c.cycleMs) / DAY_MS);
    out.sort((a, b) => a.atMs - b.atMs);
    return out;
  }

  /** Records a visit's outcome; `changed` is by content digest (never by raw bytes or validators alone). */
  record(url: string, atMs: number, changed: boolean): void {
    const e = this.byUrl.get(url);
    if (!e) return;
    if (e.lastVisitMs !== null && atMs > e.lastVisitMs) {
      observe(e.history, (atMs - e.lastVisitMs) / DAY_MS, changed);
      e.rate = estimateRate(e.history, this.priorOf(e.group));
    }
    e.lastVisitMs = atMs;
    e.pendingUntilMs = 0;
    const predicted = this.pendingValidation.get(url);
    if (predicted !== undefined) {
      this.pendingValidation.delete(url);
      const v = this.validation;
      v.visits++;
      v.predictedChanges += predicted;
      v.observedChanges += changed ? 1 : 0;
      v.brier += ((changed ? 1 : 0) - predicted) ** 2;
    }
  }

  validationReport(): ValidationReport {
    const v = this.validation;
    return { ...v, brier: v.visits === 0 ? 0 : v.brier / v.visits };
  }
}
