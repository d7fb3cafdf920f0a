// One undici Pool per origin (a Client when one connection per origin is allowed, as undici's
// Agent does), kept after its last connection closes. The Agent drops an origin's Pool (and its
// Client) whenever the origin has no connection left and builds new ones for its next request:
// with a new connection per page (a host's delay longer than the keep-alive time, the regime of a
// broad crawl) that is a Pool and a Client built, and one closed, per page. Kept here, a Client
// just opens its next connection. Bounded: past maxOrigins, the origin used longest ago is closed
// (after its queued requests, if any).
import type { Dispatcher, Pool as UndiciPool } from "undici";
import { Client, Pool } from "./undici-parts.js";

type OriginDispatcher = Pool | Client;

/**
 * Origins kept by default: as many as TLS sessions (one per host in rotation) when an idle origin
 * costs a Client (~2 KB of heap); a Pool (~20 KB: its request queue is preallocated) gets a tenth,
 * so either way about 20 MB.
 */
export function defaultMaxOrigins(connectionsPerOrigin: number | null | undefined): number {
  return connectionsPerOrigin === 1 ? 10_000 : 1_000;
}

export class OriginPools {
  /** In order of last use, oldest first. */
  private readonly pools = new Map<string, OriginDispatcher>();

  constructor(
    private readonly options: UndiciPool.Options,
    private readonly maxOrigins = defaultMaxOrigins(options.connections),
  ) {}

  /** Pools (or Clients) built so far: one per origin, unless closed for the bound. */
  created = 0;

  /** Origins with a Pool now. */
  get size(): number {
    return this.pools.size;
  }

  dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
    const origin = String(opts.origin);
    let pool = this.pools.get(origin);
    if (pool === undefined || pool.closed || pool.destroyed) {
      pool = this.options.connections === 1 ? new Client(origin, this.options) : new Pool(origin, this.options);
      this.created++;
    } else {
      this.pools.delete(origin);
    }
    this.pools.set(origin, pool);
    if (this.pools.size > this.maxOrigins) this.closeOldest();
    return pool.dispatch(opts, handler);
  }

  /** Waits for every queued request, then closes every connection. */
  async close(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.close()));
  }

  /** Aborts what is in flight and closes every connection now. */
  async destroy(): Promise<void> {
    const pools = [...this.pools.values()];
    this.pools.clear();
    await Promise.all(pools.map((p) => p.destroy()));
  }

  private closeOldest(): void {
    const oldest = this.pools.entries().next();
    if (oldest.done) return;
    this.pools.delete(oldest.value[0]);
    oldest.value[1].close().catch(() => undefined); // a close that fails leaves nothing to clean up
  }
}
