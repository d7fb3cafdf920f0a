// Hosts waiting out a robots.txt outage (fetch/robots-outage.ts decides; this module stores):
// P ro:<host> holds the outage, P rdefer lists the waiting hosts by their next try (keys.ts).
// Deferring a host is ONE script (lua/defer_host.lua): the lease that fetched robots.txt ends,
// its URL goes back to the head of its queue uncounted, and the host's next start moves to the
// next try -- so its URLs stay queued and unattempted, never failed.
import type { Redis } from "ioredis";
import type { OutageState } from "../fetch/robots-outage.js";
import type { FrontierKeys } from "./keys.js";
import type { ScriptArg, Scripts } from "./scripts.js";

/** A waiting host as the end-of-crawl report and `inspect host` show it. */
export interface DeferredHost extends OutageState {
  host: string;
  /** URLs queued for the host (all waiting for robots.txt). */
  queued: number;
}

/** Hosts listed in full in a report; the count covers all of them. */
export const DEFERRED_LIST_MAX = 1000;
const WAKE_BATCH = 1000;

export class RobotsOutages {
  constructor(
    private readonly redis: Redis,
    private readonly keys: FrontierKeys,
    private readonly scripts: Scripts,
    private readonly common: (now: number) => ScriptArg[],
  ) {}

  /** The host's current outage, or undefined when it has none (or the record is damaged). */
  async get(host: string): Promise<OutageState | undefined> {
    return parseOutage(await this.redis.hgetall(this.keys.robotsOutage(host)));
  }

  /**
   * Ends lease `leaseId` (the robots.txt request), puts its URL back at the head of its queue and
   * holds the host until `state.nextTryAt`. False when the lease had been reaped meanwhile.
   */
  async defer(leaseId: string, host: string, state: OutageState, now: number = Date.now()): Promise<boolean> {
    const r = await this.scripts.run("defer_host", [
      ...this.common(now), leaseId, host, Math.round(state.nextTryAt), state.origin, Math.round(state.firstFailureAt), state.tries, state.lastError,
    ]);
    return r === "ok";
  }

  /** Records a try without holding the host (it crawls on the last cached copy meanwhile). */
  async recordTry(host: string, state: OutageState): Promise<void> {
    await this.redis.multi()
      .hset(this.keys.robotsOutage(host), {
        o: state.origin, f: Math.round(state.firstFailureAt), t: state.tries, nt: Math.round(state.nextTryAt), l: Math.round(state.lastTryAt), e: state.lastError,
      })
      .zrem(this.keys.robotsDeferred, host)
      .exec();
  }

  /** The outage is over (robots.txt answered, or the host's URLs were failed for good). */
  async clear(host: string): Promise<void> {
    await this.redis.multi().del(this.keys.robotsOutage(host)).zrem(this.keys.robotsDeferred, host).exec();
  }

  /** Hosts waiting now. */
  async count(): Promise<number> {
    return this.redis.zcard(this.keys.robotsDeferred);
  }

  /** The earliest next try of any waiting host (epoch ms), or undefined when none waits. */
  async earliestNextTry(): Promise<number | undefined> {
    const r = await this.redis.zrange(this.keys.robotsDeferred, 0, 0, "WITHSCORES");
    return r.length >= 2 ? Number(r[1]) : undefined;
  }

  /** URLs queued for waiting hosts (read in pipelined batches; for the end-of-crawl check). */
  async queuedUrls(): Promise<number> {
    let total = 0;
    for await (const batch of this.hostBatches()) {
      const p = this.redis.pipeline();
      for (const h of batch) p.hget(this.keys.host(h), "q");
      for (const [, v] of (await p.exec()) ?? []) total += Number(v) || 0;
    }
    return total;
  }

  /** Up to `max` waiting hosts, earliest next try first, with their queued URLs. */
  async list(max = DEFERRED_LIST_MAX): Promise<DeferredHost[]> {
    const hosts = await this.redis.zrange(this.keys.robotsDeferred, 0, Math.max(0, max - 1));
    if (hosts.length === 0) return [];
    const p = this.redis.pipeline();
    for (const h of hosts) p.hgetall(this.keys.robotsOutage(h)).hget(this.keys.host(h), "q");
    const r = (await p.exec()) ?? [];
    const out: DeferredHost[] = [];
    hosts.forEach((host, i) => {
      const state = parseOutage(r[2 * i]?.[1] as Record<string, string> | undefined);
      if (state) out.push({ host, queued: Number(r[2 * i + 1]?.[1]) || 0, ...state });
    });
    return out;
  }

  /** Gives every host waiting out a robots.txt outage its next try now (a new run); returns how many. */
  async wakeAll(now: number = Date.now()): Promise<number> {
    let total = 0;
    // Hosts keep a score after now when skipped (Retry-After) or held by their politeness gap, so
    // a batch may come back again: one pass over the set's size is enough.
    const rounds = Math.ceil((await this.count()) / WAKE_BATCH) + 1;
    for (let i = 0; i < rounds; i++) {
      const r = (await this.scripts.run("wake_deferred", [...this.common(now), WAKE_BATCH])) as unknown[];
      total += Number(r[1]);
      if (Number(r[0]) < WAKE_BATCH || Number(r[1]) === 0) break;
    }
    return total;
  }

  /**
   * Forgets deferrals asked by Retry-After whose time has come (the host is simply due again);
   * robots.txt outages stay until robots.txt answers. Returns how many were forgotten.
   */
  async pruneAsked(now: number = Date.now(), prefix = "retry-after: "): Promise<number> {
    const due = await this.redis.zrangebyscore(this.keys.robotsDeferred, "-inf", Math.round(now), "LIMIT", 0, 1000);
    if (due.length === 0) return 0;
    // One round trip for all: robots.txt outages that are due stay in the set until a fetcher
    // retries them, hundreds of them while 10^5 hosts wait for a lease.
    const p = this.redis.pipeline();
    for (const host of due) p.hget(this.keys.robotsOutage(host), "e");
    const errors = (await p.exec()) ?? [];
    let n = 0;
    for (const [i, host] of due.entries()) {
      const [err, e] = errors[i] ?? [null, null];
      if (err) throw err;
      if (typeof e === "string" && !e.startsWith(prefix)) continue;
      await this.clear(host);
      n++;
    }
    return n;
  }

  private async *hostBatches(): AsyncGenerator<string[]> {
    let cursor = "0";
    do {
      const [next, flat] = await this.redis.zscan(this.keys.robotsDeferred, cursor, "COUNT", 1000);
      cursor = next;
      const hosts: string[] = [];
      for (let i = 0; i < flat.length; i += 2) hosts.push(flat[i]!);
      if (hosts.length) yield hosts;
    } while (cursor !== "0");
  }
}

export function parseOutage(h: Record<string, string> | undefined): OutageState | undefined {
  if (!h || h.o === undefined) return undefined;
  const num = (v: string | undefined) => (v === undefined || !Number.isFinite(Number(v)) ? undefined : Number(v));
  const first = num(h.f);
  const tries = num(h.t);
  const next = num(h.nt);
  if (first === undefined || tries === undefined || next === undefined) return undefined;
  return { origin: h.o, firstFailureAt: first, tries, nextTryAt: next, lastError: h.e ?? "", lastTryAt: num(h.l) ?? first };
}
