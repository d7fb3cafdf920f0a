// Lease lifetime from the slowest legitimate fetch: a configured percentile of recent fetch times
// (a small rolling sample per fetcher process), times a headroom factor, between a floor and a
// cap. Using a high percentile rather than the mean keeps slow but healthy fetches from being
// handed out twice; the fetcher also caps each fetch's total time at its lease's expiry, so a
// fetch never outlives its lease.

export interface LeaseTtlSettings {
  /** 0 < percentile <= 1, e.g. 0.99. */
  percentile: number;
  /** Multiplier on the percentile (default 2). */
  headroom: number;
  floorMs: number;
  capMs: number;
  /** Samples kept (ring buffer). */
  size: number;
  /** Below this many samples the cap is used. */
  minSamples: number;
}

export class LeaseTtl {
  private readonly ring: Float64Array;
  private count = 0;
  private next = 0;

  constructor(private readonly s: LeaseTtlSettings) {
    if (!(s.percentile > 0 && s.percentile <= 1)) throw new RangeError(`lease ttl: percentile must be in (0, 1], got ${s.percentile}`);
    if (!(s.floorMs > 0 && s.capMs >= s.floorMs)) throw new RangeError(`lease ttl: need 0 < floor <= cap, got ${s.floorMs} and ${s.capMs}`);
    this.ring = new Float64Array(Math.max(1, s.size));
  }

  record(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    this.ring[this.next] = ms;
    this.next = (this.next + 1) % this.ring.length;
    if (this.count < this.ring.length) this.count++;
  }

  /** The observed percentile of fetch times (undefined before minSamples). */
  percentileMs(): number | undefined {
    if (this.count < Math.max(1, this.s.minSamples)) return undefined;
    const a = Array.from(this.ring.subarray(0, this.count)).sort((x, y) => x - y);
    return a[Math.min(a.length - 1, Math.ceil(this.s.percentile * a.length) - 1)];
  }

  ttlMs(): number {
    const p = this.percentileMs();
    if (p === undefined) return this.s.capMs;
    return Math.round(Math.min(this.s.capMs, Math.max(this.s.floorMs, p * this.s.headroom)));
  }
}
