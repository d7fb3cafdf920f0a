// Compiled robots.txt per origin, so the hot path does not re-parse robots.txt for every URL
// (compiling costs far more than matching a URL). Bounded; an entry is re-checked against the
// node's robots cache (another fetcher may have fetched a newer file) after max(MEMO_TTL_MS, twice
// the host's delay): a host that comes back to this fetcher (host affinity) after a long delay
// still finds its rules compiled. Bounded by entries and by the bytes the compiled rules hold: a
// 500 KiB file compiles to ~0.7 MB, and hosts with such files stay in rotation for hours.
import { compileRobots, type RobotsEntry } from "./robots.js";
import { robotsBodyServes } from "./robots-trim.js";
import type { RobotsView } from "../admit/fetch-time.js";

const MEMO_MAX = 10_000;
/** About a hundred of the largest files RFC 9309 lets a crawler read, or 10,000 of a few KB. */
export const MEMO_MAX_BYTES = 96 * 1024 * 1024;
const MEMO_TTL_MS = 60_000;

interface Memo extends RobotsView {
  fetchedAt: number;
  expires: number;
}

export class RobotsMemo {
  private readonly memo = new Map<string, Memo>();
  private bytes = 0;

  constructor(
    /** The node's robots cache (Redis): the file as last fetched by any fetcher, or null. */
    private readonly load: (origin: string) => Promise<RobotsEntry | null>,
    private readonly userAgent: string,
    private readonly maxCrawlDelayMs: number,
    /** The node's delay between requests to a host (Crawl-delay may raise it per host). */
    private readonly delayMs = 0,
    private readonly now: () => number = Date.now,
    private readonly maxBytes = MEMO_MAX_BYTES,
  ) {}

  /** Origins remembered, and the approximate bytes their compiled rules hold. */
  get stats(): { entries: number; bytes: number } {
    return { entries: this.memo.size, bytes: this.bytes };
  }

  /** Compiles an origin's rules and remembers them. */
  remember(origin: string, entry: RobotsEntry): RobotsView {
    const compiled = compileRobots(entry, this.userAgent, { maxCrawlDelayMs: this.maxCrawlDelayMs });
    this.forget(origin);
    // Oldest first; the newest entry is kept even alone over the budget (it is in use).
    for (const oldest of this.memo.keys()) {
      if (this.memo.size < MEMO_MAX && this.bytes + compiled.bytes <= this.maxBytes) break;
      this.forget(oldest);
    }
    const fresh: Memo = {
      compiled, kind: entry.kind, ...(entry.kind === "disallow-all" && entry.reason ? { reason: entry.reason } : {}),
      ...(entry.kind === "disallow-all" && entry.errorClass ? { errorClass: entry.errorClass } : {}), fetchedAt: entry.fetchedAt, expires: this.now() + this.ttlOf(compiled.crawlDelayMs),
    };
    this.memo.set(origin, fresh);
    this.bytes += compiled.bytes;
    return fresh;
  }

  private forget(origin: string): void {
    const gone = this.memo.get(origin);
    if (gone === undefined) return;
    this.memo.delete(origin);
    this.bytes -= gone.compiled.bytes;
  }

  private ttlOf(crawlDelayMs: number | undefined): number {
    return Math.max(MEMO_TTL_MS, 2 * Math.max(this.delayMs, crawlDelayMs ?? 0));
  }

  /** The origin's rules, or null when the node has no robots.txt for it yet. */
  async get(origin: string): Promise<RobotsView | null> {
    const memo = this.memo.get(origin);
    if (memo && memo.expires > this.now()) return memo;
    const entry = await this.load(origin);
    // A copy trimmed for another agent (a restart with another --user-agent) is fetched again.
    if (!entry || (entry.kind === "rules" && !robotsBodyServes(entry.body, this.userAgent))) return null;
    // The same fetch of the file (another fetcher would have stored a newer fetchedAt): keep the
    // compiled rules rather than compile them again every minute (a large file costs ~40 ms).
    if (memo && memo.fetchedAt === entry.fetchedAt && memo.kind === entry.kind) {
      memo.expires = this.now() + this.ttlOf(memo.compiled.crawlDelayMs);
      // Still in use: to the young end, so eviction takes hosts that left the rotation first.
      this.memo.delete(origin);
      this.memo.set(origin, memo);
      return memo;
    }
    return this.remember(origin, entry);
  }
}
