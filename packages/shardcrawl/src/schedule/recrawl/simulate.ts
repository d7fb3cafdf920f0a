// Evaluation in SIMULATED time: revisit policies run against a ground truth of page changes (in
// the evaluation script: simweb's World, whose version stamps change only with content, never with
// timestamp/ad churn) and the time-averaged freshness of our copies is measured exactly from the
// change instants. Every policy starts from the same copy of every page at t = 0 and spends the
// same budget (visits per day).
import { type RecrawlObjective, optimalFrequencies } from "./optimum.js";
import { DAY_MS } from "./poisson.js";
import { RecrawlScheduler, type SchedulerConfig, type ValidationReport } from "./scheduler.js";

export interface ChangeTruth {
  /** Content version stamp at t (equal stamps = same content). */
  versionAt(url: string, tMs: number): number;
  /** Content change instants in (fromMs, toMs], ascending. */
  changeTimes(url: string, fromMs: number, toMs: number): number[];
  /** True change rate, changes per day (0 = static). */
  ratePerDay(url: string): number;
}

export interface SimPage {
  url: string;
  host: string;
  value: number;
}

export interface FreshnessResult {
  /** Time-averaged share of pages whose copy is current, over the measurement window. */
  freshness: number;
  /** The same, weighted by page value. */
  valueWeighted: number;
  /** Visits made inside the measurement window, per page per day. */
  visitsPerPageDay: number;
  /**
   * Share of the content changes inside the window that a visit captured: a visit that finds the
   * page changed captures one change, the others since the previous visit were missed (when every
   * change matters, e.g. each price).
   */
  capturedShare: number;
  /** The same, weighted by page value. */
  capturedValueShare: number;
}

/** Accumulates, per page, the time its copy was current inside [fromMs, toMs]. */
export class FreshnessMeter {
  private readonly copyAt = new Map<string, number>();
  private readonly freshMs = new Map<string, number>();
  private readonly captured = new Map<string, number>();
  visitsInWindow = 0;
  constructor(private readonly truth: ChangeTruth, readonly fromMs: number, readonly toMs: number) {}

  /** Our copy of `url` was taken at `atMs` (the initial copy included). */
  visit(url: string, atMs: number): void {
    const prev = this.copyAt.get(url);
    if (prev !== undefined && atMs >= this.fromMs && atMs < this.toMs && atMs > prev && this.truth.changeTimes(url, Math.max(prev, this.fromMs), atMs).length > 0) {
      this.captured.set(url, (this.captured.get(url) ?? 0) + 1);
    }
    this.close(url, atMs);
    this.copyAt.set(url, atMs);
    if (atMs >= this.fromMs && atMs < this.toMs) this.visitsInWindow++;
  }

  private close(url: string, untilMs: number): void {
    const from = this.copyAt.get(url);
    if (from === undefined) return;
    const a = Math.max(from, this.fromMs);
    const b = Math.min(untilMs, this.toMs);
    if (b <= a) return;
    const changes = this.truth.changeTimes(url, from, b);
    const staleFrom = changes.length > 0 ? (changes[0] as number) : b;
    const fresh = Math.max(0, Math.min(staleFrom, b) - a);
    this.freshMs.set(url, (this.freshMs.get(url) ?? 0) + fresh);
  }

  result(pages: readonly SimPage[]): FreshnessResult {
    let f = 0;
    let fw = 0;
    let w = 0;
    let changes = 0, caught = 0, changesW = 0, caughtW = 0;
    const span = this.toMs - this.fromMs;
    for (const p of pages) {
      const n = this.truth.changeTimes(p.url, this.fromMs, this.toMs).length;
      const c = Math.min(n, this.captured.get(p.url) ?? 0);
      changes += n;
      caught += c;
      changesW += n * p.value;
      caughtW += c * p.value;
      this.close(p.url, this.toMs);
      this.copyAt.set(p.url, this.toMs); // closed: a second result() adds nothing
      const share = (this.freshMs.get(p.url) ?? 0) / span;
      f += share;
      fw += share * p.value;
      w += p.value;
    }
    return {
      freshness: f / pages.length, valueWeighted: fw / w, visitsPerPageDay: this.visitsInWindow / pages.length / (span / DAY_MS),
      capturedShare: changes === 0 ? 1 : caught / changes, capturedValueShare: changesW === 0 ? 1 : caughtW / changesW,
    };
  }
}

export interface SimWindow {
  /** Warm-up end = start of measurement (ms after t0). */
  warmupMs: number;
  /** Measurement end (ms after t0). */
  endMs: number;
  t0Ms: number;
}

/** Deterministic phase in [0,1) per page, so fixed-rate policies do not visit in lock-step. */
function phaseOf(i: number, salt: number): number {
  let x = Math.imul(i + 1, 0x9e3779b1) ^ Math.imul(salt + 7, 0x85ebca77);
  x = Math.imul(x ^ (x >>> 15), 0x2c1b3c6d);
  return ((x ^ (x >>> 13)) >>> 0) / 4294967296;
}

/** A policy that visits page i every 1/frequencies[i] days (0 = never after the initial copy). */
export function runFixedFrequencies(truth: ChangeTruth, pages: readonly SimPage[], frequencies: ArrayLike<number>, w: SimWindow, salt = 1): FreshnessResult {
  const end = w.t0Ms + w.endMs;
  const meter = new FreshnessMeter(truth, w.t0Ms + w.warmupMs, end);
  pages.forEach((p, i) => {
    meter.visit(p.url, w.t0Ms);
    const f = frequencies[i] as number;
    if (!(f > 0)) return;
    const periodMs = DAY_MS / f;
    for (let t = w.t0Ms + phaseOf(i, salt) * periodMs; t < end; t += periodMs) meter.visit(p.url, Math.floor(t));
  });
  return meter.result(pages);
}

export function uniformFrequencies(pages: readonly SimPage[], budgetPerDay: number): Float64Array {
  return new Float64Array(pages.length).fill(budgetPerDay / pages.length);
}

export function proportionalFrequencies(truth: ChangeTruth, pages: readonly SimPage[], budgetPerDay: number): Float64Array {
  const rates = pages.map((p) => truth.ratePerDay(p.url));
  const sum = rates.reduce((a, b) => a + b, 0);
  return Float64Array.from(rates, (r) => (sum > 0 ? (budgetPerDay * r) / sum : 0));
}

/**
 * The oracle: the Lagrangian optimum of the objective with the TRUE rates (Cho & Garcia-Molina's
 * for freshness); `maxPerDay` caps one page's visits (politeness: at most one per cycle).
 */
export function oracleFrequencies(truth: ChangeTruth, pages: readonly SimPage[], budgetPerDay: number, useValues: boolean, objective: RecrawlObjective = "freshness", maxPerDay = Infinity): Float64Array {
  return optimalFrequencies(pages.map((p) => ({ rate: truth.ratePerDay(p.url), value: useValues ? p.value : 1, cost: 1 })), budgetPerDay, objective, maxPerDay).frequencies;
}

export interface LearnedRunResult extends FreshnessResult {
  validation: ValidationReport;
  /** Per page: true rate, estimated rate, observations, at the end of the run. */
  estimates: Array<{ url: string; trueRate: number; estimate: number; observations: number; changes: number; fisherInfo: number }>;
  visitsByReason: Record<string, number>;
}

/** Our scheduler with rates learned from its own visits ("changed or not" by content version). */
export function runLearned(truth: ChangeTruth, pages: readonly SimPage[], budgetPerDay: number, w: SimWindow, config: Partial<SchedulerConfig> = {}, useValues = true): LearnedRunResult {
  const end = w.t0Ms + w.endMs;
  const meter = new FreshnessMeter(truth, w.t0Ms + w.warmupMs, end);
  const sched = new RecrawlScheduler({ ...config, budgetPerDay });
  const copyVersion = new Map<string, number>();
  // Fisher information about the page's TRUE rate carried by its visits: Σ t² / (e^(λt) - 1) over
  // its observation intervals t (days); 1 / (λ √info) is the Cramér-Rao bound on the standard
  // error of log λ, i.e. how well ANY estimator could know the rate from these visits.
  const lastVisit = new Map<string, number>();
  const info = new Map<string, number>();
  for (const p of pages) {
    lastVisit.set(p.url, w.t0Ms);
    sched.add(p.url, p.host, { value: useValues ? p.value : 1, nowMs: w.t0Ms, lastVisitMs: w.t0Ms });
    meter.visit(p.url, w.t0Ms);
    copyVersion.set(p.url, truth.versionAt(p.url, w.t0Ms));
  }
  const visitsByReason: Record<string, number> = {};
  for (let t = w.t0Ms; t < end; t += sched.config.cycleMs) {
    for (const v of sched.plan(t)) {
      if (v.atMs >= end) continue;
      const version = truth.versionAt(v.url, v.atMs);
      const changed = version !== copyVersion.get(v.url);
      copyVersion.set(v.url, version);
      const lambda = truth.ratePerDay(v.url);
      const dt = (v.atMs - (lastVisit.get(v.url) ?? v.atMs)) / DAY_MS;
      if (dt > 0 && lambda > 0) info.set(v.url, (info.get(v.url) ?? 0) + (lambda * dt > 700 ? 0 : (dt * dt) / Math.expm1(lambda * dt)));
      lastVisit.set(v.url, v.atMs);
      sched.record(v.url, v.atMs, changed);
      meter.visit(v.url, v.atMs);
      visitsByReason[v.reason] = (visitsByReason[v.reason] ?? 0) + 1;
    }
  }
  sched.replan(end);
  const estimates = pages.map((p) => {
    const e = sched.entry(p.url);
    return { url: p.url, trueRate: truth.ratePerDay(p.url), estimate: e?.rate ?? 0, observations: e?.history.observations ?? 0, changes: e?.history.changes ?? 0, fisherInfo: info.get(p.url) ?? 0 };
  });
  return { ...meter.result(pages), validation: sched.validationReport(), estimates, visitsByReason };
}
