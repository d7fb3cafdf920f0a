// robots.txt parsing as Google's open-source parser (google/robotstxt, the reference most sites
// test their files against) does it, wherever RFC 9309 leaves room. Hand-written because
// robots-parser (which we used for this) disagrees with that reference on lines site owners
// really write, and its parse cannot be corrected from outside without re-parsing every line:
//  - a record without a colon ("user-agent FooBot", "disallow /") is accepted when the line is
//    exactly two words (robots-parser drops it);
//  - keys match by case-insensitive prefix, with the frequent typos Google accepts ("useragent",
//    "user agent", "disalow", "dissallow", "dissalow", "diasllow", "disallaw", "site-map");
//  - a user-agent value names the agent by its leading [A-Za-z_-] characters, so "FOO BAR" and
//    "foo/1.0" both name "foo", "bot123" names "bot" (robots-parser keeps "foo bar");
//  - only allow/disallow lines end a run of user-agent lines: "User-agent: a / Crawl-delay: 5 /
//    User-agent: b / Disallow: /" is ONE group for a and b (robots-parser splits it);
//  - "Allow: /x/index.html" (or index.htm) also allows "/x/" exactly (Google's index.html rule);
//  - a line is read up to 16,663 characters (Google's 8 x 2083 - 1 byte cap), the rest ignored;
//  - a partial UTF-8 byte order mark at the start is skipped like a whole one.
// Where RFC 9309 is explicit we follow it even where Google differs: percent-encoded unreserved
// characters equal the plain ones (2.2.2), so "Allow: /%62%61%7A" matches "/baz".
// Matching (longest pattern wins, allow wins ties, `*` and a final `$`) is in robots.ts.

export interface RobotsRule {
  /** Normalized pattern (percent-encoding as in matchable paths: see normalizePattern). */
  pattern: string;
  allow: boolean;
}

export interface RobotsGroupRules {
  /** Agent names of the group, lower case ("*" for the global group). */
  agents: string[];
  rules: RobotsRule[];
  /**
   * Crawl-delay values of the group as written, in order, each with the agents it was written
   * for: the user-agent lines just before it (Crawl-delay is not Google's, so it does not split a
   * group; "User-agent: * / Crawl-delay: 30 / User-agent: a / Crawl-delay: 2" gives * 30 s, a 2 s).
   */
  crawlDelays: Array<{ value: string; agents: string[] }>;
  /** The group's lines as written (for `inspect host`). */
  lines: string[];
  /**
   * Its allow/disallow records as "<key as written>:<value>", in order: re-parsed they give the
   * same rules (robots-trim.ts writes them into the cached copy), and never a longer line.
   */
  records: string[];
}

export interface ParsedRobotsTxt {
  groups: RobotsGroupRules[];
  sitemaps: string[];
}

/** Google reads a line up to this many bytes (8 x 2083, its longest URL, less the terminator). */
export const MAX_LINE_CHARS = 8 * 2083 - 1;

type Key = "user-agent" | "allow" | "disallow" | "sitemap" | "crawl-delay";

const KEY_PREFIXES: ReadonlyArray<[string, Key]> = [
  ["user-agent", "user-agent"], ["useragent", "user-agent"], ["user agent", "user-agent"],
  ["allow", "allow"],
  ["disallow", "disallow"], ["dissallow", "disallow"], ["dissalow", "disallow"], ["disalow", "disallow"], ["diasllow", "disallow"], ["disallaw", "disallow"],
  ["sitemap", "sitemap"], ["site-map", "sitemap"],
  ["crawl-delay", "crawl-delay"],
];

function keyOf(raw: string): Key | null {
  const k = raw.toLowerCase();
  for (const [prefix, key] of KEY_PREFIXES) if (k.startsWith(prefix)) return key;
  return null;
}

/** Space, tab, vertical tab, form feed: the blanks trimBlanks removes. */
function isBlank(c: number): boolean {
  return c === 32 || c === 9 || c === 11 || c === 12;
}

/**
 * Trims ASCII blanks only (String.trim would also eat a stray U+FEFF, which spoils a line for
 * Google). By char codes, no regex: a 500 KiB file has ~20,000 lines, each trimmed three times.
 */
function trimBlanks(s: string): string {
  let a = 0;
  let b = s.length;
  while (a < b && isBlank(s.charCodeAt(a))) a++;
  while (b > a && isBlank(s.charCodeAt(b - 1))) b--;
  return a === 0 && b === s.length ? s : s.slice(a, b);
}

/** Key and value of one line (comment removed), or null for a blank, junk or unknown line. */
function splitRecord(line: string): [Key, string, string] | null {
  const hash = line.indexOf("#");
  const text = trimBlanks(hash === -1 ? line : line.slice(0, hash));
  if (text === "") return null;
  const colon = text.indexOf(":");
  let rawKey: string;
  let value: string;
  if (colon !== -1) {
    rawKey = trimBlanks(text.slice(0, colon));
    value = trimBlanks(text.slice(colon + 1));
  } else {
    // A forgotten colon: accepted only for exactly two words ("disallow /").
    const words = text.split(/[ \t]+/);
    if (words.length !== 2) return null;
    [rawKey, value] = words as [string, string];
  }
  const key = keyOf(rawKey);
  return key === null ? null : [key, value, rawKey];
}

/** The agent a user-agent value names: "*", or its leading product-token characters, lower case. */
export function agentOfValue(value: string): string {
  if (value.startsWith("*") && (value.length === 1 || /\s/.test(value[1]!))) return "*";
  return (/^[A-Za-z_-]*/.exec(value)?.[0] ?? "").toLowerCase();
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;
/** What a URL parser percent-encodes in a path (WHATWG path percent-encode set): non-ASCII, controls, space, " < > ` { }. */
const URL_ENCODED = /[^\x21-\x7e]|["<>`{}]/gu;
/** A pattern with none of those and no escape is already normalized (the common case). */
const NEEDS_NORMALIZING = /[^\x21-\x7e]|["<>`{}%]/u;

/**
 * A rule's pattern, percent-encoded as the paths it is matched against are (they come from
 * parsed URLs): characters a URL parser encodes become %XX of their UTF-8 bytes, so "ツ" in a
 * file matches a fetched "/%E3%83%84"; escapes upper-cased, and escapes of unreserved characters
 * decoded (RFC 9309 2.2.2), as normalizePercentEncoding does to paths.
 */
export function normalizePattern(value: string): string {
  if (!NEEDS_NORMALIZING.test(value)) return value;
  const encoded = value.replace(URL_ENCODED, (ch) => {
    try {
      return encodeURIComponent(ch);
    } catch {
      return ch; // a lone surrogate: kept (it matches nothing a URL holds)
    }
  });
  if (!encoded.includes("%")) return encoded;
  return encoded.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => {
    const ch = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

export function parseRobotsTxt(body: string): ParsedRobotsTxt {
  // A whole UTF-8 BOM decodes to U+FEFF; a partial one (EF, or EF BB) to one U+FFFD before the first key.
  let text = body;
  if (text.startsWith("\uFEFF")) text = text.slice(1);
  else if (/^\uFFFD[A-Za-z]/.test(text)) text = text.slice(1);
  const groups: RobotsGroupRules[] = [];
  const sitemaps: string[] = [];
  let current: RobotsGroupRules | null = null;
  // A user-agent line after a rule starts a new group; consecutive ones (blank, comment and
  // unknown lines between them included) name one group.
  let sawRule = true;
  // Agents named since the group's last Crawl-delay line (the agents the next one is for).
  let delayAgents: string[] = [];
  for (const raw of text.split(/\r\n|\r|\n/)) {
    const record = splitRecord(raw.length > MAX_LINE_CHARS ? raw.slice(0, MAX_LINE_CHARS) : raw);
    if (record === null) continue;
    const [key, value, rawKey] = record;
    switch (key) {
      case "user-agent":
        if (sawRule || current === null) {
          current = { agents: [], rules: [], crawlDelays: [], lines: [], records: [] };
          groups.push(current);
          sawRule = false;
          delayAgents = [];
        }
        current.agents.push(agentOfValue(value));
        delayAgents.push(agentOfValue(value));
        break;
      case "allow":
      case "disallow":
        sawRule = true;
        if (current === null) break; // a rule outside any group is ignored
        current.lines.push(`${key === "allow" ? "Allow" : "Disallow"}: ${value}${rawKey.toLowerCase() === key ? "" : ` (written "${rawKey}")`}`);
        current.records.push(`${rawKey}:${value}`);
        // An empty pattern matches nothing that decides (Google: priority 0); leave it out.
        if (value === "") break;
        current.rules.push({ pattern: normalizePattern(value), allow: key === "allow" });
        if (key === "allow") {
          // Google: "/x/index.html" (or .htm...) allowed means "/x/" is too.
          const slash = value.lastIndexOf("/");
          if (slash !== -1 && value.startsWith("/index.htm", slash)) {
            current.rules.push({ pattern: normalizePattern(`${value.slice(0, slash + 1)}$`), allow: true });
          }
        }
        break;
      case "crawl-delay":
        if (current !== null) {
          current.crawlDelays.push({ value, agents: delayAgents.length > 0 ? delayAgents : current.agents });
          delayAgents = [];
          current.lines.push(`Crawl-delay: ${value}`);
        }
        break;
      case "sitemap":
        if (value) sitemaps.push(value);
        break;
    }
  }
  return { groups, sitemaps };
}

/**
 * The groups that apply to `token` (a product token, lower case): every group naming it, merged
 * (RFC 9309 2.2.1); else every "*" group, merged; else none.
 */
/** The Crawl-delay (seconds) written for `matched` (groupsFor's) in `groups`: the first number; undefined when none. */
export function crawlDelayFor(groups: readonly RobotsGroupRules[], matched: string): number | undefined {
  for (const g of groups) {
    for (const d of g.crawlDelays) {
      if (!d.agents.includes(matched)) continue;
      if (/^(?:\d+(?:\.\d*)?|\.\d+)$/.test(d.value)) return Number(d.value);
    }
  }
  return undefined;
}

export function groupsFor(parsed: ParsedRobotsTxt, token: string): { matched: string; groups: RobotsGroupRules[] } {
  const t = token.toLowerCase();
  const own = t === "*" || t === "" ? [] : parsed.groups.filter((g) => g.agents.includes(t));
  if (own.length > 0) return { matched: t, groups: own };
  return { matched: "*", groups: parsed.groups.filter((g) => g.agents.includes("*")) };
}
