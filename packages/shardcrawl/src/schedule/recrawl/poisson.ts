// Freshness arithmetic under the Poisson change model (Cho & Garcia-Molina 2003). A page with
// change rate λ (changes per day) that we copied `elapsed` days ago is stale with probability
// 1 - e^(-λ·elapsed). All durations here are in days, rates in changes per day.

/** Milliseconds per day: the model works in days, the rest of the crawler in ms. */
export const DAY_MS = 86_400_000;

/** P(the page changed at least once in `elapsedDays`). */
export function pStale(rate: number, elapsedDays: number): number {
  if (!(rate > 0) || !(elapsedDays > 0)) return 0;
  return -Math.expm1(-rate * elapsedDays);
}

/**
 * Expected days a fresh copy stays fresh within the next `intervalDays` (until the next planned
 * visit): (1 - e^(-λI)) / λ; the whole interval for a page that never changes. An infinite interval
 * (a page we do not plan to revisit) gives 1/λ.
 */
export function expectedFreshDays(rate: number, intervalDays: number): number {
  if (!(rate > 0)) return intervalDays;
  if (!Number.isFinite(intervalDays)) return 1 / rate;
  return -Math.expm1(-rate * intervalDays) / rate;
}

/** Freshness bought by visiting now: P(stale now) x expected fresh time after the visit (days). */
export function freshnessGain(rate: number, elapsedDays: number, intervalDays: number): number {
  return pStale(rate, elapsedDays) * expectedFreshDays(rate, intervalDays);
}

/** Time-averaged freshness of a page revisited every `intervalDays`: (1 - e^(-λI)) / (λI). */
export function averageFreshness(rate: number, intervalDays: number): number {
  if (!(rate > 0)) return 1;
  if (!(intervalDays > 0)) return 1;
  if (!Number.isFinite(intervalDays)) return 0;
  const x = rate * intervalDays;
  return -Math.expm1(-x) / x;
}
