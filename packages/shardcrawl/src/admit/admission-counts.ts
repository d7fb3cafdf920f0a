// Refusals and sampled timings of the admission filters, gathered per process and drained into the
// node's stats hash (admit:<filter> or the refusal's own counter, admitNs:<filter>,
// admitTimed:<filter>), where node/metrics.ts
// turns them into shardcrawl_admission_refused_total{filter} and a per-filter time summary.
import type { FilterName } from "./verdict.js";

export interface AdmissionDelta {
  /** Refusals by stats field (admit:<filter>, excluded:refused, filtered:<reason>). */
  refused: Map<string, number>;
  /** Nanoseconds spent in sampled checks, by filter. */
  ns: Map<string, number>;
  /** Sampled checks, by filter. */
  timed: Map<string, number>;
}

export class AdmissionCounts {
  private delta: AdmissionDelta = { refused: new Map(), ns: new Map(), timed: new Map() };

  /** `counter`: the stats field (a Refusal's own counter, else admit:<filter>). */
  refused(filter: FilterName, by = 1, counter = `admit:${filter}`): void {
    if (by !== 0) this.delta.refused.set(counter, (this.delta.refused.get(counter) ?? 0) + by);
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
    for (const [field, n] of d.refused) stats.add(field, n);
    for (const [f, n] of d.ns) stats.add(`admitNs:${f}`, n);
    for (const [f, n] of d.timed) stats.add(`admitTimed:${f}`, n);
  }
}

/** This process's (or thread's) counts: every chain records here unless given its own. */
export const processAdmissionCounts = new AdmissionCounts();

/** Everything counted since the last drain, as stats deltas (for a caller that writes them itself). */
export function takeAdmissionFields(counts: AdmissionCounts = processAdmissionCounts): Array<[string, number]> {
  const out: Array<[string, number]> = [];
  counts.drainInto({ add: (field, by) => out.push([field, by]) });
  return out;
}
