// A bounded ring of the node's recent numbers (every few seconds), served at /history so a status
// page opened mid-crawl shows the charts' past at once, and used to take rates over a window.
import type { NodeStats } from "./open-frontier.js";

export interface HistorySample {
  /** Epoch ms. */
  t: number;
  fetched: number;
  parsed: number;
  failed: number;
  queued: number;
  leases: number;
  parseQueue: number;
  /** Cumulative fetcher time blocked by reason (stats blockedMs:<reason>). */
  blockedMs: Record<string, number>;
}

export function historySample(s: NodeStats, t: number): HistorySample {
  const blockedMs: Record<string, number> = {};
  for (const [k, v] of Object.entries(s.counters)) if (k.startsWith("blockedMs:")) blockedMs[k.slice(10)] = v;
  return { t, fetched: s.fetched, parsed: s.parsed, failed: s.failed, queued: s.queued, leases: s.leases, parseQueue: s.parseQueue + s.parseInFlight, blockedMs };
}

export class History {
  private readonly ring: HistorySample[] = [];

  constructor(private readonly max: number) {}

  push(s: HistorySample): void {
    this.ring.push(s);
    if (this.ring.length > this.max) this.ring.shift();
  }

  all(): HistorySample[] {
    return [...this.ring];
  }

  latest(): HistorySample | undefined {
    return this.ring[this.ring.length - 1];
  }

  /** The newest sample at least windowMs older than the latest (or the oldest one). */
  before(windowMs: number): HistorySample | undefined {
    const last = this.latest();
    if (!last) return undefined;
    for (let i = this.ring.length - 2; i >= 0; i--) if (last.t - this.ring[i]!.t >= windowMs) return this.ring[i];
    return this.ring[0];
  }
}
