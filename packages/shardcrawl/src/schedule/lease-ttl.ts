// Lease lifetime from the slowest legitimate fetch: a configured percentile of recent fetch times,
// times a headroom factor, between a floor and a cap. Using a high percentile rather than the mean
// keeps slow but healthy fetches from being handed out twice; the fetcher also caps each fetch's
// total time at its lease's expiry, so a fetch never outlives its lease.
// The sample is the node's, not one process's: every fetcher pushes its fetch times to one capped
// Redis list (P fetchtimes) and reads the whole list back, so all fetchers of a node compute the
// same percentile from the same recent fetches (SharedLeaseTtl).

export interface LeaseTtlSettings {
  /** 0 < percentile <= 1, e.g. 0.99. */
  percentile: number;
  /** Multiplier on the percentile (default 2). */
  headroom: number;
  floorMs: number;
  capMs: number;
  /** Samples kept (the newest). */
  size: number;
  /** Below this many samples the cap is used. */
  minSamples: number;
}

function checkSettings(s: LeaseTtlSettings): void {
  if (!(s.percentile > 0 && s.percentile <= 1)) throw new RangeError(`lease ttl: percentile must be in (0, 1], got ${s.percentile}`);
  if (!(s.floorMs > 0 && s.capMs >= s.floorMs)) throw new RangeError(`lease ttl: need 0 < floor <= cap, got ${s.floorMs} and ${s.capMs}`);
  if (!(Number.isInteger(s.size) && s.size >= 1)) throw new RangeError(`lease ttl: size must be a positive integer, got ${s.size}`);
}

/** The observed percentile of `samples` (nearest rank), or undefined below minSamples. */
export function percentileOf(samples: readonly number[], s: Pick<LeaseTtlSettings, "percentile" | "minSamples">): number | undefined {
  if (samples.length < Math.max(1, s.minSamples)) return undefined;
  const a = [...samples].sort((x, y) => x - y);
  return a[Math.min(a.length - 1, Math.ceil(s.percentile * a.length) - 1)];
}

/** Lease TTL for a sample of fetch times (pure): percentile x headroom, clamped to [floor, cap]. */
export function ttlFromSamples(samples: readonly number[], s: LeaseTtlSettings): number {
  const p = percentileOf(samples, s);
  if (p === undefined) return s.capMs;
  return Math.round(Math.min(s.capMs, Math.max(s.floorMs, p * s.headroom)));
}

/** One process's rolling sample (tests and single-process tools). */
export class LeaseTtl {
  private readonly ring: number[] = [];
  private next = 0;

  constructor(private readonly s: LeaseTtlSettings) {
    checkSettings(s);
  }

  record(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    if (this.ring.length < this.s.size) this.ring.push(ms);
    else this.ring[this.next] = ms;
    this.next = (this.next + 1) % this.s.size;
  }

  percentileMs(): number | undefined {
    return percentileOf(this.ring, this.s);
  }

  ttlMs(): number {
    return ttlFromSamples(this.ring, this.s);
  }
}

/** Local samples sent per sync at most (the list keeps only `size` anyway). */
const MAX_PENDING = 4096;

/**
 * The node-wide sample: record() buffers locally; sync() pushes the buffer to the capped Redis
 * list and reads the list back (one round trip each), and ttlMs() answers from the last read.
 * Call sync() about once a second; until the first sync the cap is used.
 */
export class SharedLeaseTtl {
  private pending: number[] = [];
  private sample: number[] = [];
  /** Computed at each sync: ttlMs() runs on every lease call and must not sort the sample each time. */
  private ttl: number;
  private percentile: number | undefined;

  /** `exchange` pushes a batch to the node's sample and returns the sample (Frontier.shareFetchTimes). */
  constructor(private readonly exchange: (batch: number[], size: number) => Promise<number[]>, private readonly s: LeaseTtlSettings) {
    checkSettings(s);
    this.ttl = s.capMs;
  }

  record(ms: number): void {
    if (!Number.isFinite(ms) || ms < 0) return;
    if (this.pending.length >= MAX_PENDING) this.pending.shift();
    this.pending.push(Math.round(ms));
  }

  async sync(): Promise<void> {
    const batch = this.pending;
    this.pending = [];
    this.sample = await this.exchange(batch, this.s.size);
    this.percentile = percentileOf(this.sample, this.s);
    this.ttl = ttlFromSamples(this.sample, this.s);
  }

  /** The percentile of the node's sample at the last sync. */
  percentileMs(): number | undefined {
    return this.percentile;
  }

  ttlMs(): number {
    return this.ttl;
  }
}
