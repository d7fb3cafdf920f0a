// What one visit costs, in the unit the budget is counted in. Two billing models are common:
// bandwidth (bytes through a proxy: a small response is cheap, a 304 is nearly free) and credits
// (one per successful fetch, whatever its size; rendering may cost more). A struggling host costs
// more: its health score (1 = healthy, towards 0 = throttling/erroring) divides into the cost, so
// the scheduler moves budget away from it instead of queueing visits the fetch stage cannot make.

export type BudgetUnit = "fetches" | "bytes" | "credits";

export interface CostConfig {
  unit: BudgetUnit;
  /** Credits per visit by page type (e.g. { html: 1, rendered: 5 }); "fetches" counts 1 each. */
  creditsByType: Record<string, number>;
  /** Expected bytes of a full fetch when a page has no size history yet. */
  defaultBytes: number;
  /** Expected bytes of a 304 answer (headers only). */
  notModifiedBytes: number;
  /** Floor of the health score, so a sick host is expensive but not infinitely so. */
  minHealth: number;
}

export const DEFAULT_COST_CONFIG: CostConfig = {
  unit: "fetches",
  creditsByType: { html: 1 },
  defaultBytes: 150_000,
  notModifiedBytes: 400,
  minHealth: 0.05,
};

export interface CostInput {
  pageType: string;
  /** Last full response size, if known. */
  lastBytes?: number;
  /** Share of this host's conditional requests answered 304-or-changed correctly (0..1), if known. */
  validatorsHonoured?: number;
  /** P(the page changed since the last visit), to weigh a 304's cheapness. */
  pStale?: number;
  /** Host health in (0, 1]; 1 = healthy. */
  hostHealth?: number;
}

/** Expected cost of one visit in the configured unit. */
export function visitCost(c: CostConfig, input: CostInput): number {
  const health = Math.max(c.minHealth, Math.min(1, input.hostHealth ?? 1));
  let base: number;
  switch (c.unit) {
    case "fetches":
      base = 1;
      break;
    case "credits":
      base = c.creditsByType[input.pageType] ?? c.creditsByType.html ?? 1;
      break;
    case "bytes": {
      const full = input.lastBytes ?? c.defaultBytes;
      // With honoured validators an unchanged page answers 304: pay full size only when it changed.
      const p304 = (input.validatorsHonoured ?? 0) * (1 - (input.pStale ?? 1));
      base = p304 * c.notModifiedBytes + (1 - p304) * full;
      break;
    }
  }
  return base / health;
}
