// The fetcher's pull loop: lease ready (host, URL) pairs while requests in flight leave room, run
// each through `handle`, and wait when there is nothing to lease. Pull, don't push: when leasing is
// blocked (parse queue full, global cap, upstream pause or quota, disk full) the loop waits until
// it clears, and the wait is measured per reason. Every Redis and disk effect is a dependency, so
// the loop runs in a unit test without a fetcher process.
import type { LeaseBatch, LeaseBlock } from "../frontier/index.js";
import type { Lease } from "../shared/types.js";

/** Most leases asked for in one call (one Lua call scans the ready set for them). */
const MAX_BATCH = 64;

export interface PullLoopDeps {
  /** Requests in flight at most. */
  concurrency: number;
  /** Before every lease call (the free-space check: a fast crawl must not write past it between two checks). */
  beforeLease(): Promise<void>;
  lease(max: number): Promise<LeaseBatch>;
  /** Runs one lease to its end. */
  handle(lease: Lease): Promise<void>;
  /** `handle` rejected (a bug, a Redis failure, a full disk): the URL must go back, not be lost. */
  failed(lease: Lease, err: unknown): Promise<void>;
  /** Time until the next host is due (ms; 0: some are due now; null: none queued). */
  msUntilNextDue(now: number): Promise<number | null>;
  /** Time spent unable to lease, by reason. */
  blocked(reason: LeaseBlock, ms: number): void;
  /** After each lease call: the periodic flush of counters. */
  afterLease(): Promise<void>;
  stopRequested: Promise<unknown>;
  isStopping(): boolean;
  log(msg: string): void;
  sleep(ms: number): Promise<void>;
  now?: () => number;
}

export class PullLoop {
  private readonly inFlight = new Set<Promise<void>>();
  /** Wakes the loop when a fetch completes: its host may be due again soon. */
  private wake: () => void = () => undefined;
  private quotaSaid = false;

  constructor(private readonly d: PullLoopDeps) {}

  /** Requests running now. */
  get running(): number {
    return this.inFlight.size;
  }

  /** Leases and dispatches until a stop is requested; what is in flight keeps running (see drain). */
  async run(): Promise<void> {
    const d = this.d;
    const now = d.now ?? (() => Date.now());
    while (!d.isStopping()) {
      const free = d.concurrency - this.inFlight.size;
      if (free <= 0) {
        await Promise.race([...this.inFlight, d.stopRequested]);
        continue;
      }
      await d.beforeLease();
      const batch = await d.lease(Math.min(free, MAX_BATCH));
      for (const l of batch.leases) this.track(l);
      if (batch.blocked && batch.blocked !== "budget") {
        if (batch.blocked === "quota" && !this.quotaSaid) {
          this.quotaSaid = true;
          d.log(`fetching stopped: ${batch.message ?? "upstream quota exhausted"}`);
        }
        const t0 = now();
        await Promise.race([d.sleep(batch.blocked === "quota" || batch.blocked === "disk-full" ? 500 : 50), this.nextWake(), d.stopRequested]);
        d.blocked(batch.blocked, now() - t0);
        await d.afterLease();
        continue;
      }
      await d.afterLease();
      if (batch.blocked === "budget") {
        // The page budget is used up: nothing to lease until a retry or requeue gives a slot back
        // (the supervisor ends the crawl meanwhile). Without this wait the loop spun every 2 ms.
        await Promise.race([d.sleep(250), this.nextWake(), d.stopRequested]);
        continue;
      }
      if (batch.leases.length === 0) {
        const woken = this.nextWake();
        const wait = await d.msUntilNextDue(now());
        // Due hosts left unleased are other fetchers' (host affinity) until their grace runs out:
        // poll every 25 ms meanwhile rather than every 2.
        await Promise.race([d.sleep(Math.max(wait === 0 ? 25 : 2, Math.min(wait ?? 250, 250))), woken, d.stopRequested]);
      }
    }
  }

  /** Waits for every request in flight (each is bounded by its own total timeout). */
  async drain(): Promise<void> {
    await Promise.all([...this.inFlight]);
  }

  private nextWake(): Promise<void> {
    return new Promise<void>((r) => (this.wake = r));
  }

  private track(lease: Lease): void {
    const p = this.d.handle(lease)
      .catch((err: unknown) => this.d.failed(lease, err))
      .catch(() => undefined)
      .finally(() => {
        this.inFlight.delete(p);
        this.wake();
      });
    this.inFlight.add(p);
  }
}
