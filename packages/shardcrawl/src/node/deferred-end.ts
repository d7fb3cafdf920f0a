// The end of a `crawl` whose only work left is hosts waiting out a robots.txt outage: their URLs
// stay queued (nothing leaves the frontier), so "done" (nothing queued) would never come. The
// crawl waits up to --max-defer-wait for their next tries, then ends as done, listing them as
// `deferred` in the final report and summary.json; the same command later continues them.
import { DEFERRED_LIST_MAX, type DeferredHost, type RobotsOutages } from "../frontier/index.js";
import type { NodeStats } from "./open-frontier.js";

export interface DeferredReport {
  /** Hosts waiting (all of them; `list` holds at most DEFERRED_LIST_MAX). */
  hosts: number;
  /** URLs queued for them. */
  urls: number;
  /** The earliest next try (ISO time). */
  nextTry?: string;
  list: Array<{ host: string; origin: string; urls: number; nextTry: string; since: string; tries: number; lastError: string }>;
}

/** Hosts waiting out a robots.txt outage, and the URLs queued for them. */
export interface RobotsWaiting {
  hosts: number;
  urls: number;
}

/** How old the waiting count shown on /status may be (counting reads every waiting host's queue). */
const WAITING_MAX_AGE_MS = 5_000;
/**
 * How often due Retry-After deferrals are looked for while the crawl is busy: the check reads
 * every due deferral, robots.txt outages included, and it only decides anything once the node is idle.
 */
const PRUNE_BUSY_EVERY_MS = 5_000;

export class DeferredEndWatch {
  /** When the only work left became waiting hosts (reset by any progress). */
  private since: number | undefined;
  private progressMark = -1;
  private counted: RobotsWaiting = { hosts: 0, urls: 0 };
  private countedAt = -Infinity;
  private prunedAt = -Infinity;

  constructor(private readonly outages: RobotsOutages, private readonly maxWaitMs: number) {}

  /** The waiting hosts and their URLs as last counted (by refresh or by the end check). */
  get waiting(): RobotsWaiting {
    return this.counted;
  }

  /**
   * Counts the waiting hosts and their queued URLs again when the last count is older than
   * `maxAgeMs`. A long-lived node is drained when every queued URL is one of theirs (/status).
   */
  async refresh(queued: number, now: number, maxAgeMs = WAITING_MAX_AGE_MS): Promise<RobotsWaiting> {
    if (now - this.countedAt < maxAgeMs) return this.counted;
    const hosts = queued > 0 ? await this.outages.count() : 0;
    const urls = hosts > 0 ? await this.outages.queuedUrls() : 0;
    this.counted = { hosts, urls };
    this.countedAt = now;
    return this.counted;
  }

  /**
   * True when the crawl should end now: nothing leased or being parsed, every queued URL belongs
   * to a waiting host, no host's try is due, and that has lasted maxWaitMs -- or no waiting
   * host's next try comes before the wait would end anyway.
   */
  async shouldEnd(s: NodeStats, now: number): Promise<boolean> {
    const mark = s.fetched + s.failed + s.parsed;
    if (mark !== this.progressMark) {
      this.progressMark = mark;
      this.since = undefined;
    }
    const busy = s.leases > 0 || s.parseQueue > 0 || s.parseInFlight > 0;
    if (!busy || now - this.prunedAt >= PRUNE_BUSY_EVERY_MS) {
      this.prunedAt = now;
      await this.outages.pruneAsked(now);
    }
    if (s.queued === 0 || (await this.outages.count()) === 0) {
      this.since = undefined;
      return false;
    }
    // A robots.txt try in flight is a lease: not drained, but not progress either (keep `since`).
    if (busy) return false;
    // Counted now, not as last counted: URLs queued since for other hosts must keep the crawl going.
    if ((await this.refresh(s.queued, now, 0)).urls < s.queued) {
      this.since = undefined;
      return false;
    }
    this.since ??= now;
    const next = await this.outages.earliestNextTry();
    // A try that is due (e.g. hosts a new run woke) is waited for: a fetcher is about to make it.
    if (next !== undefined && next <= now) return false;
    if (now - this.since >= this.maxWaitMs) return true;
    return next !== undefined && next > this.since + this.maxWaitMs;
  }

  async report(): Promise<DeferredReport | undefined> {
    const hosts: DeferredHost[] = (await this.outages.list()).filter((h) => h.queued > 0);
    if (hosts.length === 0) return undefined;
    const total = await this.outages.count();
    const list = hosts.map((h) => ({
      host: h.host, origin: h.origin, urls: h.queued, nextTry: new Date(h.nextTryAt).toISOString(),
      since: new Date(h.firstFailureAt).toISOString(), tries: h.tries, lastError: h.lastError,
    }));
    const earliest = Math.min(...hosts.map((h) => h.nextTryAt));
    return { hosts: total <= DEFERRED_LIST_MAX ? hosts.length : total, urls: await this.outages.queuedUrls(), nextTry: new Date(earliest).toISOString(), list };
  }
}

export function formatDeferred(d: DeferredReport): string[] {
  return [
    `  deferred: ${d.urls} URLs of ${d.hosts} hosts wait for robots.txt (outage); next try ${d.nextTry ?? "?"}; run the same command again to continue them`,
    ...d.list.slice(0, 10).map((h) => `    ${h.host}: ${h.urls} URLs, ${h.tries} tries since ${h.since}, next ${h.nextTry} (${h.lastError})`),
  ];
}
