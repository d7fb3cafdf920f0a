// Priority tiers for newly discovered URLs: seeds and shallow pages first, deep and
// parameter-heavy URLs last, so that when a frontier must shed work it sheds the least valuable.
// Operators add their own rules in the node config (priorityRules: a list of {pattern, priority},
// pattern a regular expression tested against the normalized URL, priority a tier with 0 = first);
// the first matching rule decides, and URLs no rule matches get the depth/shape heuristic.
import { MAX_TIER } from "../shared/types.js";

export interface PriorityRules {
  /** Link depth at or below which a URL is tier 0. */
  shallowDepth: number;
  /** Query parameters above which a URL drops one tier. */
  maxParams: number;
  /** Path segments above which a URL drops one tier. */
  maxSegments: number;
}

/** One configured rule: URLs matching `pattern` (a regular expression) get tier `priority`. */
export interface PriorityRule {
  pattern: string;
  priority: number;
}

export const DEFAULT_PRIORITY_RULES: PriorityRules = { shallowDepth: 1, maxParams: 2, maxSegments: 6 };

/** Rules per config: enough for real policies, few enough that every link can run them all. */
export const MAX_PRIORITY_RULES = 200;
const MAX_PATTERN_LENGTH = 1000;

/** Problems with configured rules, one message each (empty = fine). */
export function checkPriorityRules(rules: unknown): string[] {
  if (!Array.isArray(rules)) return ["expected a list of {pattern, priority}"];
  if (rules.length > MAX_PRIORITY_RULES) return [`at most ${MAX_PRIORITY_RULES} rules, got ${rules.length}`];
  const errors: string[] = [];
  rules.forEach((r: unknown, i) => {
    const rule = r as Partial<PriorityRule> | null;
    if (typeof rule !== "object" || rule === null || Array.isArray(rule)) {
      errors.push(`rule ${i}: expected {pattern, priority}, got ${JSON.stringify(r)}`);
      return;
    }
    const extra = Object.keys(rule).filter((k) => k !== "pattern" && k !== "priority");
    if (extra.length) errors.push(`rule ${i}: unknown key ${JSON.stringify(extra[0])}`);
    if (typeof rule.pattern !== "string" || rule.pattern.length === 0 || rule.pattern.length > MAX_PATTERN_LENGTH) {
      errors.push(`rule ${i}: pattern must be a regular expression of 1..${MAX_PATTERN_LENGTH} characters`);
    } else {
      try {
        new RegExp(rule.pattern);
      } catch (err) {
        errors.push(`rule ${i}: pattern ${JSON.stringify(rule.pattern)} is not a valid regular expression: ${(err as Error).message}`);
      }
    }
    if (!Number.isInteger(rule.priority) || rule.priority! < 0 || rule.priority! > MAX_TIER) {
      errors.push(`rule ${i}: priority must be an integer tier 0..${MAX_TIER} (0 = first), got ${JSON.stringify(rule.priority)}`);
    }
  });
  return errors;
}

/** Parses a `--priority-rule <tier>:<regex>` flag value. */
export function parsePriorityRuleFlag(v: string): PriorityRule {
  const m = /^(\d+):(.+)$/s.exec(v);
  if (!m) throw new RangeError(`expected <tier>:<regular expression>, got ${JSON.stringify(v)}`);
  return { priority: Number(m[1]), pattern: m[2]! };
}

export function tierFor(url: string, depth: number, rules: PriorityRules = DEFAULT_PRIORITY_RULES): number {
  let tier = depth <= rules.shallowDepth ? 0 : depth <= rules.shallowDepth + 2 ? 1 : 2;
  const q = url.indexOf("?");
  if (q >= 0) {
    let params = 1;
    for (let i = q + 1; i < url.length; i++) if (url.charCodeAt(i) === 38 /* & */) params++;
    if (params > rules.maxParams) tier++;
  }
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  if (pathStart >= 0) {
    let segments = 0;
    const end = q >= 0 ? q : url.length;
    for (let i = pathStart; i < end; i++) if (url.charCodeAt(i) === 47 /* / */) segments++;
    if (segments > rules.maxSegments) tier++;
  }
  return Math.min(MAX_TIER, tier);
}

/** Configured rules first (first match wins), then the heuristic. */
export class UrlPrioritizer {
  private readonly compiled: Array<{ re: RegExp; tier: number }>;

  constructor(rules: readonly PriorityRule[] = [], private readonly heuristic: PriorityRules = DEFAULT_PRIORITY_RULES) {
    const errors = checkPriorityRules(rules);
    if (errors.length) throw new RangeError(`priority rules: ${errors.join("; ")}`);
    this.compiled = rules.map((r) => ({ re: new RegExp(r.pattern), tier: r.priority }));
  }

  tier(url: string, depth: number): number {
    for (const r of this.compiled) if (r.re.test(url)) return r.tier;
    return tierFor(url, depth, this.heuristic);
  }
}
