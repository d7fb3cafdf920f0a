// Refusals decided at fetch time, when the host's robots.txt is known: robots.txt rules, a
// robots.txt that could not be fetched (disallow all), and a Crawl-delay above --max-crawl-delay.
// Same verdict type as the chain, so the page log, the counters and `inspect url` name them alike.
import type { CompiledRobots, RobotsEntry } from "../fetch/robots.js";
import type { FetchErrorClass } from "../shared/types.js";
import type { Refusal } from "./verdict.js";

/** A host's robots.txt as the fetcher holds it (compiled, with how it was obtained). */
export interface RobotsView {
  compiled: CompiledRobots;
  kind: RobotsEntry["kind"];
  reason?: string;
  errorClass?: FetchErrorClass;
}

/** The robots.txt refusal of this URL, or undefined when robots.txt lets us fetch it. */
export function robotsRefusal(robots: RobotsView, url: string, maxCrawlDelayMs: number): (Refusal & { reason: FetchErrorClass }) | undefined {
  if (robots.kind === "disallow-all") {
    const why = robots.reason ? ` (${robots.reason})` : "";
    return { filter: "robots", reason: robots.errorClass ?? "robots-unavailable", detail: `robots.txt could not be fetched${why}: disallow all` };
  }
  if (robots.compiled.crawlDelayTooLong) {
    // Never crawled faster than the site asked: a Crawl-delay above --max-crawl-delay skips the host.
    const asked = robots.compiled.crawlDelayMs ?? 0;
    return { filter: "crawl-delay", reason: "crawl-delay-too-long", detail: `robots.txt asks Crawl-delay ${asked / 1000} s, above --max-crawl-delay ${maxCrawlDelayMs} ms` };
  }
  if (!robots.compiled.isAllowed(url)) return { filter: "robots", reason: "robots-disallowed", detail: "disallowed by robots.txt" };
  return undefined;
}
