// robots.txt failure modes of the real web that a crawler must wait out, not act on:
//  - an outage window: a host's robots.txt answers 503 (or 429, hangs until the client gives up,
//    or resets the connection) for `forMs` from its first robots.txt request, then its normal file -- a
//    maintenance window; without `forMs` it never recovers;
//  - a long Crawl-delay: the host's file asks for `seconds` between requests (added to every
//    group, so whichever group a crawler obeys carries it).
// Pages are unaffected: only /robots.txt changes. Chosen hosts are named by index (World order).
import type { HostModel } from "./world.js";

export interface RobotsOutageSpec {
  host: number;
  mode: "503" | "429" | "timeout" | "reset";
  /** Milliseconds from the host's first robots.txt request; absent = the outage never ends. */
  forMs?: number;
  /** Retry-After seconds sent with 503/429 (absent = none). */
  retryAfterSec?: number;
}

export interface CrawlDelaySpec {
  host: number;
  seconds: number;
}

export interface RobotsFaultsConfig {
  robotsOutages: RobotsOutageSpec[];
  crawlDelays: CrawlDelaySpec[];
}

export type RobotsFaultAction =
  | { kind: "status"; status: 503 | 429; headers: Record<string, string> }
  | { kind: "hang" }
  | { kind: "reset" };

export function validateRobotsFaults(c: RobotsFaultsConfig, hosts: number, fail: (msg: string) => never): void {
  if (!Array.isArray(c.robotsOutages) || !Array.isArray(c.crawlDelays)) fail("robotsOutages and crawlDelays must be lists");
  for (const o of c.robotsOutages) {
    if (!(Number.isInteger(o.host) && o.host >= 0 && o.host < hosts)) fail(`robotsOutages: host must be an index in 0..${hosts - 1}`);
    if (!["503", "429", "timeout", "reset"].includes(o.mode)) fail("robotsOutages: mode must be 503, 429, timeout or reset");
    if (o.forMs !== undefined && !(Number.isFinite(o.forMs) && o.forMs >= 0)) fail("robotsOutages: forMs must be >= 0");
    if (o.retryAfterSec !== undefined && !(Number.isInteger(o.retryAfterSec) && o.retryAfterSec >= 0)) fail("robotsOutages: retryAfterSec must be an integer >= 0");
  }
  for (const d of c.crawlDelays) {
    if (!(Number.isInteger(d.host) && d.host >= 0 && d.host < hosts)) fail(`crawlDelays: host must be an index in 0..${hosts - 1}`);
    if (!(Number.isFinite(d.seconds) && d.seconds >= 0 && d.seconds <= 86_400)) fail("crawlDelays: seconds must be in 0..86400");
  }
}

export class RobotsFaults {
  private readonly outages = new Map<number, RobotsOutageSpec>();
  private readonly delays = new Map<number, number>();
  /** Host index -> time of its first robots.txt request (the outage window's start). */
  private readonly firstAsked = new Map<number, number>();

  constructor(c: RobotsFaultsConfig, private readonly startedAt: number = Date.now()) {
    for (const o of c.robotsOutages) this.outages.set(o.host, o);
    for (const d of c.crawlDelays) this.delays.set(d.host, d.seconds);
  }

  /** What /robots.txt does now on this host instead of its normal answer; null = normal. */
  outage(h: HostModel, now: number = Date.now()): RobotsFaultAction | null {
    const o = this.outages.get(h.info.index);
    if (!o) return null;
    // The window opens at the host's first robots.txt request, not at server start, so a crawler
    // that starts late (a loaded machine) still meets the whole outage.
    let since = this.firstAsked.get(h.info.index);
    if (since === undefined) {
      since = Math.max(now, this.startedAt);
      this.firstAsked.set(h.info.index, since);
    }
    if (o.forMs !== undefined && now - since >= o.forMs) return null;
    if (o.mode === "timeout") return { kind: "hang" };
    if (o.mode === "reset") return { kind: "reset" };
    const headers: Record<string, string> = { "content-type": "text/html" };
    if (o.retryAfterSec !== undefined) headers["retry-after"] = String(o.retryAfterSec);
    return { kind: "status", status: o.mode === "429" ? 429 : 503, headers };
  }

  /** The host's robots.txt with its configured Crawl-delay in every group (a file of only that when it had none). */
  withCrawlDelay(h: HostModel, text: string | null): string | null {
    const seconds = this.delays.get(h.info.index);
    if (seconds === undefined) return text;
    if (text === null || text.trim() === "") return `User-agent: *\nCrawl-delay: ${seconds}\n`;
    // After the last User-agent line of each group (consecutive User-agent lines form one group).
    return text.replace(/^(user-agent[ \t]*:[^\r\n]*)(\r?\n)(?![ \t]*user-agent)/gim, `$1$2Crawl-delay: ${seconds}$2`);
  }

  /** Crawl-delay (seconds) configured for the host, if any (for verify and tests). */
  crawlDelayOf(index: number): number | undefined {
    return this.delays.get(index);
  }
}
