// The optimal revisit frequencies of Cho & Garcia-Molina ("Effective page refresh policies for
// Web crawlers", ACM TODS 2003): maximise Σ w_i F(λ_i, f_i) subject to Σ c_i f_i = B, where
// F(λ, f) = (f/λ)(1 - e^(-λ/f)) is the time-averaged freshness of a page visited every 1/f days.
// The Lagrangian condition ∂F/∂f = μ c_i / w_i becomes, with x = λ/f,
//     h(x) = 1 - (1 + x) e^(-x) = μ c λ / w ,
// and h < 1 everywhere, so a page with μ c λ / w >= 1 gets NO visits: the optimum penalises pages
// that change too often. One bisection on μ meets the budget; one per page inverts h.

export interface OptimumPage {
  /** Change rate, changes per day. */
  rate: number;
  /** Value weight (> 0). */
  value: number;
  /** Cost of one visit in budget units (> 0). */
  cost: number;
}

function h(x: number): number {
  return -Math.expm1(-x) - x * Math.exp(-x);
}

/** x with h(x) = y, for y in (0, 1). */
function hInverse(y: number): number {
  let lo = 0;
  let hi = 1;
  while (h(hi) < y && hi < 1e6) hi *= 2;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (h(mid) < y) lo = mid;
    else hi = mid;
  }
  return (lo + hi) / 2;
}

/** Visits per day of one page at multiplier μ (0 for static pages and for too-fast pages). */
export function frequencyAt(p: OptimumPage, mu: number): number {
  if (!(p.rate > 0) || !(p.value > 0)) return 0;
  const y = (mu * p.cost * p.rate) / p.value;
  if (y >= 1) return 0;
  if (y <= 0) return Infinity;
  return p.rate / hInverse(y);
}

/**
 * What a schedule maximises: "freshness" (time-averaged share of fresh copies, the default) or
 * "changes" (changes captured: every price change or edit matters, so a visit is worth the chance
 * it finds a change, and fast pages deserve MORE visits, unlike the freshness optimum).
 */
export type RecrawlObjective = "freshness" | "changes";

/**
 * Visits per day of one page at multiplier μ under the "changes" objective. A page visited every
 * 1/f days captures G(λ, f) = f (1 - e^(-λ/f)) changes a day (a visit sees "changed", not how many
 * times); ∂G/∂f = h(x) with x = λ/f, the same h as for freshness but without freshness's 1/λ, so
 * the condition h(x) = μ c / w does not depend on λ: every page with the same value per cost gets
 * the same x, i.e. visits proportional to its rate (capped by politeness elsewhere), and only pages
 * with μ c / w >= 1 get none.
 */
export function changesFrequencyAt(p: OptimumPage, xRef: number, refRatio = 1): number {
  // Parameterised by x of the pages with cost / value = refRatio, the smallest there is
  // (μ = h(xRef) / refRatio): when the budget is small against the pages' total rate, x is large
  // and μ c / w = 1 - (1 + x)e^(-x) rounds to 1 in floating point, so μ cannot be the variable.
  if (!(p.rate > 0) || !(p.value > 0)) return 0;
  if (!(xRef > 0)) return Infinity;
  const ratio = p.cost / p.value / refRatio;
  if (ratio <= 1) return p.rate / (ratio === 1 ? xRef : hInverse(ratio * h(xRef)));
  const y = ratio * h(xRef);
  if (y >= 1) return 0;
  return p.rate / hInverse(y);
}

/**
 * Visits per day of one page for an objective: at multiplier μ for freshness, at the reference
 * x (changes per visit of a page with value = cost) for changes; both fall as the parameter grows.
 */
export function objectiveFrequencyAt(objective: RecrawlObjective, p: OptimumPage, param: number, refRatio = 1): number {
  return objective === "changes" ? changesFrequencyAt(p, param, refRatio) : frequencyAt(p, param);
}

export interface OptimumPlan {
  /** Visits per day per page, in input order. */
  frequencies: Float64Array;
  /** The Lagrange multiplier that meets the budget (objective changes: the reference x, see changesFrequencyAt). */
  mu: number;
}

/**
 * Frequencies (visits/day) maximising value-weighted time-averaged freshness for a budget of
 * `budgetPerDay` cost units per day. Pages whose frequency would be 0 are not worth visiting.
 */
export function optimalFrequencies(pages: readonly OptimumPage[], budgetPerDay: number, objective: RecrawlObjective = "freshness", maxFrequency = Infinity): OptimumPlan {
  const frequencies = new Float64Array(pages.length);
  if (!(budgetPerDay > 0) || pages.length === 0) return { frequencies, mu: Infinity };
  let refRatio = Infinity;
  for (const p of pages) if (p.value > 0 && p.cost > 0) refRatio = Math.min(refRatio, p.cost / p.value);
  if (!Number.isFinite(refRatio)) refRatio = 1;
  const spend = (mu: number): number => {
    let s = 0;
    for (let i = 0; i < pages.length; i++) {
      const p = pages[i] as OptimumPage;
      s += p.cost * Math.min(maxFrequency, objectiveFrequencyAt(objective, p, mu, refRatio));
    }
    return s;
  };
  // spend(μ) falls from ∞ to 0 as μ grows; bracket in log space, then bisect.
  let lo = -60;
  let hi = 60;
  for (let i = 0; i < 80; i++) {
    const mid = (lo + hi) / 2;
    if (spend(Math.exp(mid)) > budgetPerDay) lo = mid;
    else hi = mid;
  }
  const mu = Math.exp(hi);
  for (let i = 0; i < pages.length; i++) frequencies[i] = Math.min(maxFrequency, objectiveFrequencyAt(objective, pages[i] as OptimumPage, mu, refRatio));
  return { frequencies, mu };
}
