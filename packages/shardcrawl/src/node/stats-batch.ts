// Counters a child adds to the node's Redis stats hash (where every other crawl counter lives, so
// they survive child restarts and resumed crawls), batched: the hot path only bumps a Map, and one
// MULTI per second carries the deltas. A crash loses at most the last second of these counters;
// they feed metrics only, never a crawl decision.
import type { PageLogLine } from "../shared/types.js";

/** Where the deltas go: the frontier's stats counters (NodeFrontier.addCounters). */
export interface CounterSink {
  addCounters(deltas: Iterable<readonly [string, number]>): Promise<void>;
}

export class StatsBatch {
  private pending = new Map<string, number>();
  private readonly timer: NodeJS.Timeout;
  private flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly sink: CounterSink,
    flushMs = 1000,
  ) {
    this.timer = setInterval(() => void this.flush().catch(() => undefined), flushMs);
    this.timer.unref();
  }

  add(field: string, by = 1): void {
    if (by !== 0) this.pending.set(field, (this.pending.get(field) ?? 0) + by);
  }

  /** Writes the deltas gathered so far (one at a time, so none is counted twice or lost). */
  flush(): Promise<void> {
    this.flushing = this.flushing.then(async () => {
      if (this.pending.size === 0) return;
      const batch = this.pending;
      this.pending = new Map();
      await this.sink.addCounters(batch);
    });
    return this.flushing;
  }

  async close(): Promise<void> {
    clearInterval(this.timer);
    await this.flush();
  }
}

/** The outcome of a page-log line for metrics: its error class, else its HTTP status class. */
export function pageOutcome(line: Pick<PageLogLine, "error" | "status">): string {
  if (line.error) return line.error;
  if (line.status === null || !Number.isInteger(line.status) || line.status < 100 || line.status > 599) return "other";
  return `${Math.floor(line.status / 100)}xx`;
}

/** Counts every page-log line by outcome (page:<outcome>, pageBytes:<outcome>) as it is written. */
export function countingPageLog<W extends { append(line: PageLogLine): Promise<void> }>(writer: W, stats: StatsBatch): W {
  const append = writer.append.bind(writer);
  writer.append = async (line: PageLogLine) => {
    await append(line);
    const outcome = pageOutcome(line);
    stats.add(`page:${outcome}`);
    stats.add(`pageBytes:${outcome}`, line.bytes);
  };
  return writer;
}
