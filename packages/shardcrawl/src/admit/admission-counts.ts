// Refusals and sampled timings of the admission filters, gathered per process and drained into the
// node's stats hash (admit:<filter>, admitNs:<filter>, admitTimed:<filter>), where node/metrics.ts
// turns them into shardcrawl_admission_refused_total{filter} and a per-filter time summary.
import type { FilterName } from "./verdict.js";

export interface AdmissionDelta {
  refused: Map<string, number>;
  /** Nanoseconds spent in sampled checks, by filter. */
  ns: Map<string, number>;
  /** Sampled checks, by filter. */
  timed: Map<string, number>;
}

export class AdmissionCounts {
  private delta: AdmissionDelta = { refused: new Map(), ns: new Map(), timed: new Map() };

  refused(filter: FilterName, by = 1): void {
    if (by !== 0) this.delta.refused.set(filter, (this.delta.refused.get(filter) ?? 0) + by);
  }

  timedCheck(filter: FilterName, ns: number): void {
    this.delta.ns.set(filter, (this.delta.ns.get(filter) ?? 0) + ns);
    this.delta.timed.set(filter, (this.delta.timed.get(filter) ?? 0) + 1);
  }

  /** What was counted since the last call. */
  take(): AdmissionDelta {
    const d = this.delta;
    this.delta = { refused: new Map(), ns: new Map(), timed: new Map() };
    return d;
  }

  /** Adds what was counted since the last drain to a stats batch (anything with add(field, by)). */
  drainInto(stats: { add(field: string, by: number): void }): void {
    const d = this.take();
    for (const [f, n] of d.refused) stats.add(`admit:${f}`, n);
    for (const [f, n] of d.ns) stats.add(`admitNs:${f}`, n);
    for (const [f, n] of d.timed) stats.add(`admitTimed:${f}`, n);
  }
}

/** This process's (or thread's) counts: every chain records here unless given its own. */
export const processAdmissionCounts = new AdmissionCounts();
