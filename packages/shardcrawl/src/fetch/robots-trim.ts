// The cached form of a robots.txt: only what decides for OUR product token. The node's Redis holds
// one robots.txt per origin for 24 h (and as the last cached copy for weeks), so a whole file per
// host is most of its memory at 10^5+ hosts, while a fetcher only ever uses the groups that apply
// to its own agent (RFC 9309 2.2.1: the groups naming it, merged, else the "*" groups), the first
// Crawl-delay written for it and the Sitemap lines. The trimmed copy is itself a robots.txt that
// the same parser (robots-rules.ts) reads back to the same rules, so everything that reads the
// cache (the compiled memo, the outage's last copy, sitemap discovery, `inspect`) works unchanged;
// test/fetch/robots-trim.test.ts checks that every decision is identical to the whole file's.
import { isHttpUrl, productToken } from "./robots.js";
import { groupsFor, parseRobotsTxt } from "./robots-rules.js";

/** First line of a trimmed copy; names the product token it was trimmed for. */
const MARK = "# shardcrawl: trimmed for agent ";
const DELAY = /^(?:\d+(?:\.\d*)?|\.\d+)$/;

/**
 * The lines of `body` that decide for `userAgent`: its group's allow/disallow records (as written,
 * so `inspect` shows them as the site wrote them), the Crawl-delay that applies, and the http(s)
 * Sitemap lines. Never longer than the body (a file already minimal is returned as it is).
 */
export function trimRobotsBody(body: string, userAgent: string): string {
  const token = productToken(userAgent);
  const parsed = parseRobotsTxt(body);
  const { matched, groups } = groupsFor(parsed, token);
  const lines = [`${MARK}${token}`];
  const records = groups.flatMap((g) => g.records);
  // The first numeric Crawl-delay written for the matched agent, as crawlDelayFor picks it.
  let delay: string | undefined;
  for (const g of groups) {
    delay ??= g.crawlDelays.find((d) => d.agents.includes(matched) && DELAY.test(d.value))?.value;
  }
  if (records.length > 0 || delay !== undefined) {
    lines.push(`User-agent: ${matched}`);
    // Before the rules: Crawl-delay does not end a run of user-agent lines, so it applies to `matched`.
    if (delay !== undefined) lines.push(`Crawl-delay: ${delay}`);
    lines.push(...records);
  }
  // Sitemap lines belong to no group; compileRobots keeps the distinct http(s) ones.
  for (const s of new Set(parsed.sitemaps)) if (isHttpUrl(s)) lines.push(`Sitemap:${s}`);
  const trimmed = `${lines.join("\n")}\n`;
  return trimmed.length < body.length ? trimmed : body;
}

/**
 * Whether a cached body may be used for `userAgent`: a whole file always; a trimmed copy only for
 * the token it was trimmed for (a restart with another --user-agent fetches the file again).
 */
export function robotsBodyServes(body: string, userAgent: string): boolean {
  if (!body.startsWith(MARK)) return true;
  const end = body.indexOf("\n");
  return body.slice(MARK.length, end === -1 ? undefined : end) === productToken(userAgent);
}
