// The lines of a robots.txt that apply to one product token (RFC 9309 2.2.1: the groups naming
// it, merged, else the "*" groups), for showing an operator the rules in force: the same parse
// the fetcher matches with (fetch/robots-rules.ts).
import { groupsFor, parseRobotsTxt } from "../../fetch/robots-rules.js";

export interface RobotsGroup {
  /** The user-agent the rules were chosen by: our product token, or "*". */
  matched: string;
  /** allow / disallow / crawl-delay lines as written, in order. */
  rules: string[];
}

export function robotsGroupFor(body: string, token: string): RobotsGroup {
  const { matched, groups } = groupsFor(parseRobotsTxt(body), token);
  return { matched, rules: groups.flatMap((g) => g.lines) };
}
