// The lines of a robots.txt that apply to one product token (RFC 9309 2.2.1: the groups naming
// it, merged, else the "*" groups), for showing an operator the rules in force. Matching itself
// is robots-parser's (fetch/robots.ts); it does not expose groups, hence these few lines.

export interface RobotsGroup {
  /** The user-agent the rules were chosen by: our product token, or "*". */
  matched: string;
  /** allow / disallow / crawl-delay lines as written, in order. */
  rules: string[];
}

export function robotsGroupFor(body: string, token: string): RobotsGroup {
  const groups: Array<{ agents: string[]; rules: string[] }> = [];
  let current: { agents: string[]; rules: string[] } | null = null;
  for (const raw of body.replace(/^\uFEFF/, "").split(/\r\n|\r|\n/)) {
    const line = raw.replace(/#.*$/, "").trim();
    const m = /^([A-Za-z-]+)\s*:\s*(.*)$/.exec(line);
    if (!m) continue;
    const key = m[1]!.toLowerCase();
    const value = m[2]!.trim();
    if (key === "user-agent") {
      // Consecutive user-agent lines open one group; one after a rule opens the next.
      if (!current || current.rules.length > 0) groups.push((current = { agents: [], rules: [] }));
      current.agents.push(value.toLowerCase());
    } else if (current && (key === "allow" || key === "disallow" || key === "crawl-delay")) {
      current.rules.push(`${key === "crawl-delay" ? "Crawl-delay" : key === "allow" ? "Allow" : "Disallow"}: ${value}`);
    }
  }
  const t = token.toLowerCase();
  const own = groups.filter((g) => g.agents.includes(t));
  if (own.length) return { matched: t, rules: own.flatMap((g) => g.rules) };
  return { matched: "*", rules: groups.filter((g) => g.agents.includes("*")).flatMap((g) => g.rules) };
}
