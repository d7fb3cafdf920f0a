// The continuous re-crawl schedule kept in Redis, so a node can keep far more pages fresh than fit
// in the supervisor's memory. Per page there is ONE record: its record in P rp:<host>, keyed by the
// path's 8-byte hash (history-codec.ts format 3: estimator summary, last visit, validators, next
// due, plan/hint flags, the Huffman-coded path), plus a due entry (host id + record key, 12 bytes)
// in the list of the time slot it is due in (keys: frontier/keys.ts,
// Lua: frontier/lua/recrawl_set_due.lua and recrawl_take_due.lua). Planning a cycle reads only the
// slots that are due; the supervisor keeps no per-page state (only per-host priors and health, and
// the visits of the current cycle), and a restart reads one small hash (P rsched): no rebuild.
//
// Which pages are due: each page is due at last visit + its planned interval, the inverse of the
// optimum frequency (optimum.ts) for its learned rate at the current Lagrange multiplier μ. μ is the
// only global quantity of the optimum; instead of solving it over every page each replan (which
// needs every page in memory), it follows the demand: when the due visits of a cycle cost more
// than the cycle's budget μ rises (longer intervals), when they cost less it falls. Among the due
// pages a cycle spends its budget by priority (value x freshness gain / cost, or under the
// "changes" objective value x P(changed) / cost), with the re-estimation and validation reserves of
// scheduler.ts; what does not fit is due again next cycle. (Under the "changes" objective the
// parameter in the place of μ is the reference x of optimum.ts changesFrequencyAt; same direction.)
import type { Redis } from "ioredis";
import { FrontierKeys, type ScriptArg, Scripts } from "../../frontier/index.js";
import { mulberry32 } from "../../shared/prng.js";
import { type LogNormalPrior, estimateRate } from "./estimator.js";
import { decodeRecord, encodeRecord, pathKey, type UrlHistory } from "./history-codec.js";
import { type RecrawlObjective, objectiveFrequencyAt } from "./optimum.js";
import { DAY_MS, expectedFreshDays, pStale } from "./poisson.js";
import type { PlannedVisit, ValidationReport } from "./scheduler.js";

export interface DueScheduleConfig {
  /** Budget in cost units (visits, bytes or credits) per day. */
  budgetPerDay: number;
  cycleMs: number;
  objective: RecrawlObjective;
  /** Shares of each cycle's budget for re-estimation (believed-static or too-fast pages) and a random validation sample. */
  reserves: { reestimate: number; validation: number };
  /** Pages the optimum gives no visits (too fast to follow, or believed static) come back after this long. */
  reestimateAfterDays: number;
  fallbackRatePerDay: number;
  fallbackLogSigma: number;
  /** Minimum spacing between two planned visits to one host (ms). */
  hostDelayMs: (host: string) => number;
  /**
   * The politeness clock a host shares (its registrable domain when the fetch stage spaces requests
   * per domain): the plan spaces visits per clock, so it does not plan more than the fetchers can do.
   */
  politenessKey: (host: string) => string;
  /** A planned visit not recorded after this long is due again. */
  pendingTimeoutMs: number;
  /** Most debt (cost units) visits made outside the plan may run up. */
  maxDebt: number;
  /** Most due pages read in one cycle (the rest wait in the index for the next). */
  maxCandidates: number;
  /** Most visits a day to one page (politeness towards one URL; it bounds the "changes" objective). */
  maxVisitsPerDay: number;
  /** Plans in a row without a recorded visit after which a page leaves the schedule (it went away). */
  maxMissedPlans: number;
  /**
   * Objective changes: the smallest cost / value of the pages (the reference of optimum.ts
   * changesFrequencyAt); pages below it cannot be slowed below their rate / h⁻¹(ratio).
   */
  changesRefRatio: number;
  /** Value weight of a page from its URL and the tier stored in its record. */
  pageValue: (url: string, tier: number) => number;
  seed: number;
}

export const DEFAULT_DUE_SCHEDULE_CONFIG: Omit<DueScheduleConfig, "budgetPerDay"> = {
  cycleMs: 15 * 60_000,
  objective: "freshness",
  reserves: { reestimate: 0.05, validation: 0.02 },
  reestimateAfterDays: 30,
  fallbackRatePerDay: 0.2,
  fallbackLogSigma: 2,
  hostDelayMs: () => 1000,
  politenessKey: (host) => host,
  pendingTimeoutMs: 60 * 60_000,
  maxDebt: Infinity,
  maxCandidates: 50_000,
  maxVisitsPerDay: 96,
  maxMissedPlans: 3,
  changesRefRatio: 1,
  pageValue: () => 1,
  seed: 1,
};

/** Longest and shortest slot of the due index: a slot never spans more than a cycle (nor less than 1 s: due times are whole seconds). */
const MAX_SLOT_MS = 60_000;
/** Due pages read per script call. */
const TAKE_BATCH = 2000;
/** Pages per set_due script call. */
const SET_BATCH = 256;
/** Per-host priors cached in the supervisor (then the cache starts over: memory flat in hosts too). */
const PRIOR_CACHE = 50_000;
/** Pages with fewer observations do not shape their group's prior. */
const PRIOR_MIN_OBSERVATIONS = 3;
/** Each new rate weighs 1, older ones decay by this factor: the prior follows the last ~1,000 pages of a group. */
const PRIOR_DECAY = 0.999;
/** μ moves by at most this factor per cycle towards balancing demand and budget. */
const MU_STEP = 2;

/** The schedule's layout version in P rsched: records of format 3 keyed by path hash, entries with the key. */
const LAYOUT = "3";
/** Fields or entries converted per round trip. */
const CONVERT_BATCH = 500;

/**
 * Converts a schedule from before format 3 (records keyed by path in P rh:<host>, due entries with
 * the path in P rdue:<slot>): each record moves to P rp:<host> (HSETNX: a record a visit already
 * moved is newer), then each due entry is rewritten with the record key. Runs once, when a node with
 * an older schedule opens it; safe to run again after a crash halfway (an entry converted twice is
 * a duplicate, skipped when popped like any moved page's). Proportional to the pages, once.
 */
export async function convertLegacy(redis: Redis, keys: FrontierKeys): Promise<{ records: number; entries: number }> {
  let records = 0;
  let entries = 0;
  const prefix = keys.legacyRecrawlHistoryPrefix;
  let cursor = "0";
  do {
    const [next, found] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 200);
    cursor = next;
    for (const lk of found) {
      const host = lk.slice(prefix.length);
      let hc = "0";
      do {
        const [n2, flat] = await redis.hscanBuffer(lk, hc, "COUNT", CONVERT_BATCH);
        hc = n2.toString();
        const p = redis.pipeline();
        for (let i = 0; i + 1 < flat.length; i += 2) {
          const path = (flat[i] as Buffer).toString();
          let rec: UrlHistory;
          try {
            rec = decodeRecord(flat[i + 1] as Buffer).history;
          } catch {
            continue; // a damaged record stays behind, as it would have been skipped
          }
          p.hsetnx(keys.recrawlHistory(host), pathKey(path), encodeRecord(rec, path));
          records++;
        }
        await p.exec();
      } while (hc !== "0");
      await redis.unlink(lk);
    }
  } while (cursor !== "0");
  for (;;) {
    const slots = await redis.zrange(keys.legacyRecrawlSlots, 0, 99);
    if (slots.length === 0) break;
    for (const slot of slots) {
      const lk = keys.legacyRecrawlDue(slot);
      for (;;) {
        const items = (await redis.lrangeBuffer(lk, 0, CONVERT_BATCH - 1)) as Buffer[];
        if (items.length === 0) break;
        const converted = items.filter((m) => m.length > 4).map((m) => Buffer.concat([m.subarray(0, 4), pathKey(m.subarray(4).toString())]));
        const p = redis.multi();
        if (converted.length > 0) p.rpush(keys.recrawlDue(Number(slot)), ...converted).zadd(keys.recrawlSlots, Number(slot), slot);
        p.ltrim(lk, items.length, -1);
        await p.exec();
        entries += converted.length;
      }
      await redis.zrem(keys.legacyRecrawlSlots, slot);
    }
  }
  return { records, entries };
}

interface PriorSums {
  n: number;
  s: number;
  ss: number;
  dirty: boolean;
}

/** One page as read back from the index. */
interface Candidate {
  url: string;
  host: string;
  origin: string;
  field: string;
  rec: UrlHistory;
  rate: number;
  value: number;
  cost: number;
  frequency: number;
  stale: number;
  priority: number;
}

export interface DueScheduleState {
  pages: number;
  carry: number;
  mu: number;
  slotMs: number;
}

export interface SetDue {
  host: string;
  origin: string;
  field: string;
  dueMs: number;
  /** -1 keeps the stored value. */
  missed: number;
  /** -1 keeps the stored value. */
  hint: number;
}

function splitUrl(url: string): { host: string; origin: string; field: string } {
  const u = new URL(url);
  return { host: u.host, origin: u.origin, field: u.pathname + u.search };
}

export class RedisRecrawlSchedule {
  readonly config: DueScheduleConfig;
  private readonly scripts: Scripts;
  private readonly keys: FrontierKeys;
  private readonly priors = new Map<string, PriorSums>();
  private readonly health = new Map<string, number>();
  private readonly hostNextMs = new Map<string, number>();
  private readonly pendingValidation = new Map<string, number>();
  private readonly validation: ValidationReport = { visits: 0, predictedChanges: 0, observedChanges: 0, brier: 0 };
  private readonly random: () => number;
  private state: DueScheduleState = { pages: 0, carry: 0, mu: NaN, slotMs: MAX_SLOT_MS };
  private reserveCredit = { reestimate: 0, validation: 0 };
  /** Pages dropped after maxMissedPlans plans without a recorded visit (since start). */
  dropped = 0;
  /** Due pages the last plan read from the index. */
  lastCandidates = 0;

  private constructor(private readonly redis: Redis, prefix: string, config: Partial<DueScheduleConfig> & { budgetPerDay: number }) {
    this.config = { ...DEFAULT_DUE_SCHEDULE_CONFIG, ...config };
    if (!(this.config.budgetPerDay > 0)) throw new Error("recrawl schedule: budgetPerDay must be > 0");
    if (!(this.config.cycleMs > 0)) throw new Error("recrawl schedule: cycleMs must be > 0");
    this.keys = new FrontierKeys(prefix);
    this.scripts = new Scripts(redis);
    this.random = mulberry32(this.config.seed);
  }

  /**
   * Opens the schedule: reads its state (P rsched: slot length, μ, budget carry or debt, page
   * count); nothing proportional to the pages. The slot length is set once, at the first open.
   */
  static async open(redis: Redis, prefix: string, config: Partial<DueScheduleConfig> & { budgetPerDay: number }): Promise<RedisRecrawlSchedule> {
    const s = new RedisRecrawlSchedule(redis, prefix, config);
    const key = s.keys.recrawlState;
    await redis.hsetnx(key, "slot", String(Math.max(1000, Math.min(MAX_SLOT_MS, Math.floor(s.config.cycleMs)))));
    if ((await redis.hget(key, "layout")) !== LAYOUT) {
      await convertLegacy(redis, s.keys);
      await redis.hset(key, "layout", LAYOUT);
    }
    const raw = await redis.hgetall(key);
    s.state = {
      slotMs: Number(raw.slot),
      mu: raw.mu === undefined ? NaN : Number(raw.mu),
      carry: Number(raw.carry ?? 0),
      pages: Number(raw.pages ?? 0),
    };
    return s;
  }

  get snapshotState(): DueScheduleState {
    return { ...this.state };
  }

  /** A stream position or other small value kept with the schedule's state (survives restarts). */
  async getMark(name: string): Promise<string | null> {
    return this.redis.hget(this.keys.recrawlState, `m:${name}`);
  }

  async setMark(name: string, value: string): Promise<void> {
    await this.redis.hset(this.keys.recrawlState, `m:${name}`, value);
  }

  setHostHealth(host: string, health: number): void {
    const h = Math.max(0.05, Math.min(1, health));
    if (h === 1) this.health.delete(host);
    else this.health.set(host, h);
  }

  /** Charges a visit made outside the plan; the debt is persisted with the state. */
  async charge(cost: number): Promise<void> {
    if (!(cost > 0)) return;
    this.state.carry = Math.max(this.state.carry - cost, -this.config.maxDebt);
    await this.redis.hset(this.keys.recrawlState, "carry", String(this.state.carry));
  }

  // ---- priors (per host, decayed sums of log-rates, persisted in P rprior) ----

  private async priorSums(group: string): Promise<PriorSums> {
    let p = this.priors.get(group);
    if (p) return p;
    if (this.priors.size >= PRIOR_CACHE) await this.flushPriors(true);
    const raw = await this.redis.hget(this.keys.recrawlPriors, group);
    const [n, s, ss] = (raw ?? "0,0,0").split(",").map(Number);
    p = { n: n || 0, s: s || 0, ss: ss || 0, dirty: false };
    this.priors.set(group, p);
    return p;
  }

  private static fit(p: PriorSums): LogNormalPrior | undefined {
    if (p.n < 5) return undefined;
    const mu = p.s / p.n;
    const variance = Math.max(0, (p.ss / p.n - mu * mu) * (p.n / (p.n - 1)));
    return { mu, sigma: Math.max(0.5, Math.sqrt(variance)) };
  }

  private async priorOf(host: string): Promise<LogNormalPrior> {
    return RedisRecrawlSchedule.fit(await this.priorSums(host)) ?? RedisRecrawlSchedule.fit(await this.priorSums("*")) ?? { mu: Math.log(this.config.fallbackRatePerDay), sigma: this.config.fallbackLogSigma };
  }

  private async learnPrior(host: string, rate: number): Promise<void> {
    const l = Math.log(rate);
    for (const g of [host, "*"]) {
      const p = await this.priorSums(g);
      p.n = p.n * PRIOR_DECAY + 1;
      p.s = p.s * PRIOR_DECAY + l;
      p.ss = p.ss * PRIOR_DECAY + l * l;
      p.dirty = true;
    }
  }

  private async flushPriors(clear = false): Promise<void> {
    const args: string[] = [];
    for (const [g, p] of this.priors) if (p.dirty) {
      args.push(g, `${p.n},${p.s},${p.ss}`);
      p.dirty = false;
    }
    if (args.length > 0) await this.redis.hset(this.keys.recrawlPriors, ...args);
    if (clear) this.priors.clear();
  }

  // ---- the index ----

  async setDue(items: readonly SetDue[]): Promise<number> {
    let n = 0;
    for (let i = 0; i < items.length; i += SET_BATCH) {
      const args: ScriptArg[] = [this.keys.prefix, this.state.slotMs];
      for (const it of items.slice(i, i + SET_BATCH)) args.push(it.host, it.origin, pathKey(it.field), Math.max(0, Math.round(it.dueMs)), it.missed, it.hint);
      n += Number(await this.scripts.run("recrawl_set_due", args));
    }
    return n;
  }

  /** Due pages (slot started by `nowMs`), at most `max`; each is put back at `safetyMs` until rescheduled. */
  private async takeDue(nowMs: number, max: number, safetyMs: number): Promise<Array<{ host: string; origin: string; field: string; rec: UrlHistory }>> {
    const out: Array<{ host: string; origin: string; field: string; rec: UrlHistory }> = [];
    while (out.length < max) {
      const want = Math.min(TAKE_BATCH, max - out.length);
      const flat = (await this.scripts.runBuffer("recrawl_take_due", [this.keys.prefix, this.state.slotMs, nowMs, want, safetyMs])) as Buffer[];
      for (let i = 1; i + 3 < flat.length; i += 4) {
        try {
          const r = decodeRecord(flat[i + 3] as Buffer);
          if (r.path !== undefined) out.push({ host: (flat[i] as Buffer).toString(), origin: (flat[i + 1] as Buffer).toString(), field: r.path, rec: r.history });
        } catch {
          // A damaged record: it stays put back at the safety time, where it is skipped again.
        }
      }
      // Fewer than asked: nothing more is due, unless the script stopped at its bound on old entries.
      if ((flat.length - 1) / 4 < want && String(flat[0]) !== "1") break;
    }
    return out;
  }

  private frequency(rate: number, value: number, cost: number): number {
    if (!Number.isFinite(this.state.mu)) return 0;
    return Math.min(this.config.maxVisitsPerDay, objectiveFrequencyAt(this.config.objective, { rate, value, cost }, this.state.mu, this.config.changesRefRatio));
  }

  /** When a page visited at `lastVisitMs` is next due, from its planned interval. */
  private nextDue(lastVisitMs: number, frequency: number, nowMs: number): number {
    const c = this.config;
    const interval = frequency > 0 ? DAY_MS / frequency : c.reestimateAfterDays * DAY_MS;
    return Math.max(nowMs + 1000, lastVisitMs + interval);
  }

  /**
   * A recorded visit (from the outcome stream): re-estimates the page's rate, teaches its host's
   * prior and puts the page at its next due time. A first visit (no due time yet) joins the schedule.
   * Returns how many pages were new to the schedule.
   */
  async recorded(outcomes: ReadonlyArray<{ url: string; atMs: number; changed: boolean | null }>, nowMs: number): Promise<number> {
    const updates: SetDue[] = [];
    let added = 0;
    for (const o of outcomes) {
      let parts: { host: string; origin: string; field: string };
      try {
        parts = splitUrl(o.url);
      } catch {
        continue;
      }
      const raw = await this.redis.hgetBuffer(this.keys.recrawlHistory(parts.host), pathKey(parts.field));
      if (!raw) continue;
      let rec: UrlHistory;
      try {
        const r = decodeRecord(raw);
        if (r.path !== parts.field) continue; // another path's record (a key collision)
        rec = r.history;
      } catch {
        continue;
      }
      if (!rec.dueSec) added++;
      const rate = estimateRate(rec.history, await this.priorOf(parts.host));
      if (rec.history.observations >= PRIOR_MIN_OBSERVATIONS) await this.learnPrior(parts.host, rate);
      const predicted = this.pendingValidation.get(o.url);
      if (predicted !== undefined && o.changed !== null) {
        this.pendingValidation.delete(o.url);
        const v = this.validation;
        v.visits++;
        v.predictedChanges += predicted;
        v.observedChanges += o.changed ? 1 : 0;
        v.brier += ((o.changed ? 1 : 0) - predicted) ** 2;
      }
      const value = this.config.pageValue(o.url, rec.tier);
      this.ensureMu(rate, value, rec.cost, this.state.pages + outcomes.length);
      const f = this.frequency(rate, value, rec.cost / (this.health.get(parts.host) ?? 1));
      updates.push({ ...parts, dueMs: this.nextDue(rec.lastVisitMs, f, nowMs), missed: 0, hint: 0 });
    }
    await this.setDue(updates);
    if (added > 0) this.state.pages = await this.redis.hincrby(this.keys.recrawlState, "pages", added);
    return added;
  }

  /**
   * A first μ before any demand was seen: the multiplier at which a page of the fallback rate is
   * visited at the budget's uniform pace over the pages known (then the demand feedback takes over).
   */
  private ensureMu(rate: number, value: number, cost: number, pagesKnown = this.state.pages): void {
    if (Number.isFinite(this.state.mu)) return;
    const pages = Math.max(1, pagesKnown);
    const f = this.config.budgetPerDay / (pages * Math.max(cost, 1e-9));
    const x = Math.max(rate, 1e-6) / f;
    const h = -Math.expm1(-x) - x * Math.exp(-x);
    // Objective changes: the parameter is the reference x itself (optimum.ts changesFrequencyAt).
    this.state.mu = this.config.objective === "changes" ? x : (h * value) / (cost * Math.max(rate, 1e-6));
  }

  /** A change hint (sitemap lastmod, feed entry, listing summary): the page is due now, stale for sure. */
  async hint(urls: readonly string[], nowMs: number): Promise<number> {
    const items: SetDue[] = [];
    for (const url of urls) {
      try {
        items.push({ ...splitUrl(url), dueMs: nowMs, missed: -1, hint: 1 });
      } catch {
        // not a URL: nothing to hint
      }
    }
    return this.setDue(items);
  }

  /** The visits of the cycle starting at `nowMs`, in start order. */
  async plan(nowMs: number): Promise<PlannedVisit[]> {
    const c = this.config;
    const cycleBudget = (c.budgetPerDay * c.cycleMs) / DAY_MS;
    const budget = cycleBudget + this.state.carry;
    if (budget <= 0) {
      this.state.carry = budget;
      await this.redis.hset(this.keys.recrawlState, "carry", String(this.state.carry));
      return [];
    }
    const taken = await this.takeDue(nowMs, c.maxCandidates, nowMs + Math.max(c.pendingTimeoutMs, 2 * this.state.slotMs));
    this.lastCandidates = taken.length;
    const cands: Candidate[] = [];
    const reschedule: SetDue[] = [];
    for (const t of taken) {
      const url = t.origin + t.field;
      if ((t.rec.missedPlans ?? 0) >= c.maxMissedPlans) {
        // Planned maxMissedPlans times without a recorded visit: it went away (redirects, errors, 404).
        reschedule.push({ host: t.host, origin: t.origin, field: t.field, dueMs: 0, missed: 0, hint: 0 });
        this.dropped++;
        continue;
      }
      const rate = estimateRate(t.rec.history, await this.priorOf(t.host));
      const value = c.pageValue(url, t.rec.tier);
      const cost = t.rec.cost / (this.health.get(t.host) ?? 1);
      this.ensureMu(rate, value, cost);
      const frequency = this.frequency(rate, value, cost);
      const stale = t.rec.hinted ? 1 : pStale(rate, Math.max(0, nowMs - t.rec.lastVisitMs) / DAY_MS);
      const gain = c.objective === "changes" ? stale : stale * expectedFreshDays(rate, frequency > 0 ? 1 / frequency : Infinity);
      cands.push({ url, host: t.host, origin: t.origin, field: t.field, rec: t.rec, rate, value, cost, frequency, stale, priority: (value * gain) / cost });
    }
    // Politeness inside the plan: visits sharing a politeness clock are spaced by the delay within the cycle.
    for (const [h, t] of this.hostNextMs) if (t <= nowMs) this.hostNextMs.delete(h);
    const cycleEnd = nowMs + c.cycleMs;
    const out: PlannedVisit[] = [];
    const chosen = new Set<Candidate>();
    const tryTake = (e: Candidate, reason: PlannedVisit["reason"], slice: { left: number }): boolean => {
      if (chosen.has(e) || e.cost > slice.left) return false;
      const clock = c.politenessKey(e.host);
      const at = Math.max(nowMs, this.hostNextMs.get(clock) ?? nowMs);
      if (at >= cycleEnd) return false;
      this.hostNextMs.set(clock, at + c.hostDelayMs(e.host));
      chosen.add(e);
      slice.left -= e.cost;
      const predicted = pStale(e.rate, Math.max(0, at - e.rec.lastVisitMs) / DAY_MS);
      if (reason === "validation" && this.pendingValidation.size < 10_000) this.pendingValidation.set(e.url, predicted);
      out.push({ url: e.url, host: e.host, atMs: at, reason, predictedChange: predicted, cost: e.cost, ...(e.rec.hinted ? { urgent: true } : {}) });
      return true;
    };
    let handedBack = 0;
    const reserve = (kind: "reestimate" | "validation", list: readonly Candidate[], reason: PlannedVisit["reason"]): void => {
      const slice = { left: this.reserveCredit[kind] + budget * c.reserves[kind] };
      for (const e of list) {
        if (slice.left <= 0) break;
        tryTake(e, reason, slice);
      }
      const cap = Math.max(1, (c.budgetPerDay * c.reserves[kind]) / 24);
      this.reserveCredit[kind] = Math.min(slice.left, cap);
      handedBack += slice.left - this.reserveCredit[kind];
    };
    // Re-estimation: pages the optimum gives no visits (too fast to follow, believed static) that
    // are due (they come back reestimateAfterDays after their last visit), longest unseen first.
    reserve("reestimate", cands.filter((e) => e.frequency === 0 && !e.rec.hinted).sort((a, b) => a.rec.lastVisitMs - b.rec.lastVisitMs), "reestimate");
    // Validation: a random sample of the due pages, whatever their score.
    const pool = cands.filter((e) => !chosen.has(e));
    for (let i = pool.length - 1; i > 0; i--) {
      const j = Math.floor(this.random() * (i + 1));
      [pool[i], pool[j]] = [pool[j] as Candidate, pool[i] as Candidate];
    }
    reserve("validation", pool.slice(0, 64), "validation");
    const main = { left: budget * (1 - c.reserves.reestimate - c.reserves.validation) + handedBack };
    const byPriority = cands.filter((e) => !chosen.has(e) && e.priority > 0).sort((a, b) => b.priority - a.priority);
    let demand = 0;
    for (const e of cands) if (e.frequency > 0 || e.rec.hinted) demand += e.cost;
    for (const e of byPriority) {
      if (main.left < 1e-9) break;
      tryTake(e, "priority", main);
    }
    // Reschedule: planned pages wait for their visit's outcome (due again after the pending
    // timeout if it never comes). Pages their plan wanted now that did not fit wait in priority
    // order, one cycle's worth of budget per cycle, so a backlog is not read again every cycle;
    // the rest (no visits planned) come back at their re-estimation time.
    const visitsPerCycle = Math.max(1, cycleBudget / Math.max(1e-9, cands.reduce((a, e) => a + e.cost, 0) / Math.max(1, cands.length)));
    let waitingRank = 0;
    for (const e of [...byPriority, ...cands.filter((x) => x.priority <= 0)]) {
      if (chosen.has(e)) continue;
      const wanted = e.frequency > 0 || e.rec.hinted;
      const due = wanted ? nowMs + c.cycleMs * (1 + Math.floor(waitingRank++ / visitsPerCycle)) : this.nextDue(e.rec.lastVisitMs, 0, nowMs + c.cycleMs);
      reschedule.push({ host: e.host, origin: e.origin, field: e.field, dueMs: due, missed: -1, hint: -1 });
    }
    for (const e of cands) {
      if (chosen.has(e)) reschedule.push({ host: e.host, origin: e.origin, field: e.field, dueMs: nowMs + c.pendingTimeoutMs, missed: (e.rec.missedPlans ?? 0) + 1, hint: -1 });
    }
    await this.setDue(reschedule);
    // μ follows the demand: the due visits that wanted this cycle against what it could pay.
    if (Number.isFinite(this.state.mu) && cands.length > 0 && taken.length < c.maxCandidates) {
      const ratio = Math.max(1 / MU_STEP, Math.min(MU_STEP, demand / Math.max(cycleBudget, 1e-9)));
      this.state.mu *= Math.sqrt(ratio);
    } else if (Number.isFinite(this.state.mu) && taken.length >= c.maxCandidates) {
      this.state.mu *= Math.sqrt(MU_STEP); // more is due than one cycle can even read
    }
    this.state.carry = Math.min(Math.max(0, main.left), cycleBudget);
    const dropped = reschedule.filter((r) => r.dueMs === 0).length;
    const fields: string[] = ["carry", String(this.state.carry)];
    if (Number.isFinite(this.state.mu)) fields.push("mu", String(this.state.mu));
    await this.redis.hset(this.keys.recrawlState, ...fields);
    if (dropped > 0) this.state.pages = await this.redis.hincrby(this.keys.recrawlState, "pages", -dropped);
    await this.flushPriors();
    out.sort((a, b) => a.atMs - b.atMs);
    return out;
  }

  validationReport(): ValidationReport {
    const v = this.validation;
    return { ...v, brier: v.visits === 0 ? 0 : v.brier / v.visits };
  }

  /**
   * The model's mean P(fresh) (value-weighted when asked) over a random sample of the schedule
   * (a few hosts, a few pages each): a whole-schedule mean would read every page.
   */
  async estimatedFreshness(nowMs: number, weighted = false, hosts = 20, perHost = 10): Promise<number> {
    const picks = (await this.redis.hrandfield(this.keys.recrawlHosts, hosts, "WITHVALUES")) as string[];
    let sum = 0;
    let w = 0;
    for (let i = 0; i + 1 < picks.length; i += 2) {
      const hv = picks[i + 1] as string;
      const tab = hv.indexOf("\t");
      const host = hv.slice(0, tab);
      const origin = hv.slice(tab + 1);
      const flat = (await this.redis.hrandfieldBuffer(this.keys.recrawlHistory(host), perHost, "WITHVALUES")) as Buffer[];
      for (let j = 0; j + 1 < flat.length; j += 2) {
        let rec: UrlHistory;
        let path: string;
        try {
          const r = decodeRecord(flat[j + 1] as Buffer);
          rec = r.history;
          path = r.path ?? "";
        } catch {
          continue;
        }
        if (!rec.dueSec) continue;
        const rate = estimateRate(rec.history, await this.priorOf(host));
        const v = weighted ? this.config.pageValue(origin + path, rec.tier) : 1;
        sum += v * (rec.hinted ? 0 : 1 - pStale(rate, Math.max(0, nowMs - rec.lastVisitMs) / DAY_MS));
        w += v;
      }
    }
    return w === 0 ? 1 : sum / w;
  }
}
