// Change-rate estimation from "changed since the last visit or not" observations with irregular
// intervals (Cho & Garcia-Molina, "Estimating frequency of change", ACM TOIT 2003). A visit after
// t days that saw a change contributes log(1 - e^(-λt)) to the log-likelihood, one that saw none
// contributes -λt. Their irregular-interval MLE solves
//     Σ_changed t_i / (e^(λ t_i) - 1) = Σ_unchanged t_j ;
// it has no finite answer when every visit saw a change (or none did), which is exactly the case
// for pages with few visits. We therefore take the MAP estimate under a Gamma(shape a, rate b)
// prior fitted per group of similar pages (empirical Bayes: same host or page type), which adds
// (a-1)/λ - b to the score and pulls pages with little history towards their group.
//
// The history is kept as a compact summary instead of every interval (so it fits in ~100 bytes of
// Redis): the total unchanged time, and the changed intervals in log4-spaced buckets holding a
// count and a sum (the bucket mean stands in for its intervals; within a factor-4 bucket the score
// term t/(e^(λt)-1) is smooth, so the error is small).

/** Smallest changed-interval bucket edge: one minute, in days. */
export const BUCKET_BASE_DAYS = 1 / 1440;
/** Buckets [base·4^k, base·4^(k+1)); the last one is open: 4^11 minutes is about 8 years. */
export const BUCKETS = 11;

export interface ChangeHistory {
  /** Visits that compared a new copy with an old one (the first visit is not an observation). */
  observations: number;
  /** Observations that detected a change. */
  changes: number;
  /** Sum of the intervals (days) of observations that saw no change. */
  unchangedDays: number;
  /** Per bucket: how many changed intervals, and their sum (days). */
  changedCount: number[];
  changedDays: number[];
}

export function emptyHistory(): ChangeHistory {
  return { observations: 0, changes: 0, unchangedDays: 0, changedCount: new Array<number>(BUCKETS).fill(0), changedDays: new Array<number>(BUCKETS).fill(0) };
}

export function bucketOf(intervalDays: number): number {
  if (!(intervalDays > BUCKET_BASE_DAYS)) return 0;
  return Math.min(BUCKETS - 1, Math.floor(Math.log(intervalDays / BUCKET_BASE_DAYS) / Math.log(4)));
}

/** Adds one observation: `intervalDays` since the previous visit, and whether the content changed. */
export function observe(h: ChangeHistory, intervalDays: number, changed: boolean): void {
  if (!(intervalDays > 0)) return; // two visits at the same instant say nothing
  h.observations++;
  if (changed) {
    h.changes++;
    const k = bucketOf(intervalDays);
    h.changedCount[k] = (h.changedCount[k] ?? 0) + 1;
    h.changedDays[k] = (h.changedDays[k] ?? 0) + intervalDays;
  } else {
    h.unchangedDays += intervalDays;
  }
}

/** Gamma prior on the rate (changes per day): density ∝ λ^(a-1) e^(-bλ). */
export interface GammaPrior {
  shape: number;
  rate: number;
}

/**
 * A weak prior whose mode is `typicalRate`: shape a (>= 1; larger = stronger pull), b = (a-1)/m.
 * With a = 2 the prior weighs about as much as one observed change over 1/m days.
 */
export function priorAround(typicalRate: number, shape = 2): GammaPrior {
  const m = Math.max(typicalRate, 1e-6);
  return { shape, rate: Math.max(shape - 1, 1e-9) / m };
}

/**
 * Empirical-Bayes prior for a group of similar pages from their current estimates: centred on the
 * geometric mean (rates are spread over orders of magnitude, so the arithmetic mean would be set
 * by the few fastest pages). Falls back to `fallback` with fewer than `minPages` informative pages.
 */
export function groupPrior(rates: readonly number[], fallback: GammaPrior, shape = 2, minPages = 5): GammaPrior {
  let n = 0;
  let sumLog = 0;
  for (const r of rates) {
    if (r > 0 && Number.isFinite(r)) {
      n++;
      sumLog += Math.log(r);
    }
  }
  if (n < minPages) return fallback;
  return priorAround(Math.exp(sumLog / n), shape);
}

/**
 * Log-normal prior on the rate: log λ ~ N(mu, sigma²). Fitted per group from the spread of its
 * pages' log-rates, it pulls a page with little history to its group's typical rate but lets a
 * page whose visits say otherwise go as far as the group itself spreads (rates on one host often
 * span orders of magnitude, where a Gamma prior's fixed shape over-shrinks the outliers).
 */
export interface LogNormalPrior {
  mu: number;
  sigma: number;
}

export type RatePrior = GammaPrior | LogNormalPrior;

function isLogNormal(p: RatePrior): p is LogNormalPrior {
  return "mu" in p;
}

/** Log-normal prior from a group's estimates: mean and spread of their logs (sigma >= minSigma). */
export function logNormalGroupPrior(rates: readonly number[], fallback: LogNormalPrior, minPages = 5, minSigma = 0.5): LogNormalPrior {
  const logs = rates.filter((r) => r > 0 && Number.isFinite(r)).map(Math.log);
  if (logs.length < minPages) return fallback;
  const mu = logs.reduce((a, b) => a + b, 0) / logs.length;
  const variance = logs.reduce((a, b) => a + (b - mu) ** 2, 0) / (logs.length - 1);
  return { mu, sigma: Math.max(minSigma, Math.sqrt(variance)) };
}

const MIN_RATE = 1e-6; // about once in 2,700 years
const MAX_RATE = 1e5; // about once a second

/**
 * Score of the log-posterior, strictly decreasing in λ: d/dλ under a Gamma prior (shape >= 1),
 * λ·d/dλ = d/d(log λ) under a log-normal one (the likelihood part λ·t/(e^(λt)-1) - λ·U decreases
 * in λ too). Either way its root is the MAP estimate.
 */
function score(h: ChangeHistory, prior: RatePrior, lambda: number): number {
  let s = -h.unchangedDays;
  for (let k = 0; k < BUCKETS; k++) {
    const n = h.changedCount[k] ?? 0;
    if (n === 0) continue;
    const t = (h.changedDays[k] ?? 0) / n;
    const x = lambda * t;
    s += x > 700 ? 0 : (n * t) / Math.expm1(x);
  }
  if (isLogNormal(prior)) return lambda * s - (Math.log(lambda) - prior.mu) / (prior.sigma * prior.sigma);
  return s + (prior.shape - 1) / lambda - prior.rate;
}

/** MAP change rate (changes per day) of a history under a prior. */
export function estimateRate(h: ChangeHistory, prior: RatePrior): number {
  let lo = Math.log(MIN_RATE);
  let hi = Math.log(MAX_RATE);
  if (score(h, prior, MIN_RATE) <= 0) return MIN_RATE;
  if (score(h, prior, MAX_RATE) >= 0) return MAX_RATE;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (score(h, prior, Math.exp(mid)) > 0) lo = mid;
    else hi = mid;
  }
  return Math.exp((lo + hi) / 2);
}

/**
 * Cho & Garcia-Molina's improved estimator for n visits at a regular interval I with X detected
 * changes: r = -ln((n - X + 0.5) / (n + 0.5)) / I. Kept as a reference for tests.
 */
export function regularIntervalEstimate(n: number, changes: number, intervalDays: number): number {
  return -Math.log((n - changes + 0.5) / (n + 0.5)) / intervalDays;
}
