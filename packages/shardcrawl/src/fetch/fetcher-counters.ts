// A fetcher's periodic counters, added to the node's stats hash at most once a second: time spent
// unable to lease, per reason (blockedMs:<reason>), the HTTP client's connections and TLS
// handshakes, its DNS cache counters, and whatever else the caller drains at the same pace.
import { ConnectionStatsReporter } from "./connection-stats.js";
import { DnsStatsReporter } from "./dns-stats.js";
import type { ConnectionCounters } from "./guarded-connector.js";
import type { DnsCounters } from "./dns-cache.js";

/** Counters are added to Redis at most this often. */
const FLUSH_MS = 1_000;

export interface FetcherCountersDeps {
  count(field: string, by: number): Promise<void>;
  connections: Readonly<ConnectionCounters>;
  dns: Readonly<DnsCounters>;
  /** Drained at each flush too (the admission chain's refusals and timings). */
  alsoDrain?(): void;
  now?: () => number;
}

export class FetcherCounters {
  private readonly blockedMs = new Map<string, number>();
  private readonly connections: ConnectionStatsReporter;
  private readonly dns: DnsStatsReporter;
  private readonly now: () => number;
  private lastFlush: number;

  constructor(private readonly d: FetcherCountersDeps) {
    this.connections = new ConnectionStatsReporter(d.connections);
    this.dns = new DnsStatsReporter(d.dns);
    this.now = d.now ?? (() => Date.now());
    this.lastFlush = this.now();
  }

  blocked(reason: string, ms: number): void {
    this.blockedMs.set(reason, (this.blockedMs.get(reason) ?? 0) + ms);
  }

  /** Adds what moved since the last flush; skipped within a second of it unless forced. */
  async flush(force = false): Promise<void> {
    if (!force && this.now() - this.lastFlush < FLUSH_MS) return;
    this.lastFlush = this.now();
    for (const [reason, ms] of this.blockedMs) await this.d.count(`blockedMs:${reason}`, ms);
    this.blockedMs.clear();
    for (const [field, n] of this.connections.take()) await this.d.count(field, n);
    for (const [field, n] of this.dns.take()) await this.d.count(field, n);
    this.d.alsoDrain?.();
  }
}
