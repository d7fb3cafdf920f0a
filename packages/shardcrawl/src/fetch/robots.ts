// robots.txt per RFC 9309: fetching (status handling, redirects, size cap) and compiling a file
// into an isAllowed() check for our user agent.
//
// Parsing is robots-rules.ts (as Google's reference parser reads files, where RFC 9309 leaves
// room); matching is here: Google's longest-match algorithm, `*` and `$`, allow wins ties,
// groups for the same agent merged. Also:
//  - percent-encoded unreserved characters (%62%61%7A = "baz") compare equal to the plain
//    character (RFC 9309 2.2.2): decoded in both the rules and the path before matching;
//  - /robots.txt itself is always allowed (RFC 9309 2.2.2);
//  - Crawl-delay is not in the RFC; we accept non-negative numbers only, never shorten them, and
//    report one above the maximum (crawlDelayTooLong: the host is skipped).
import { decodeContent } from "../shared/content-decoding.js";
import type { FetchErrorClass } from "../shared/types.js";
import type { FetchInit, FetchOutcome } from "./http-client.js";
import { crawlDelayFor, groupsFor, parseRobotsTxt, type RobotsRule } from "./robots-rules.js";
import { parseRetryAfter } from "./retry-after.js";

/** RFC 9309 2.5: crawlers must parse at least 500 KiB; we read exactly that much. */
export const ROBOTS_MAX_BYTES = 500 * 1024;
/** RFC 9309 2.4: do not use a cached robots.txt for more than 24 hours. */
export const ROBOTS_TTL_MS = 24 * 60 * 60 * 1000;
export const ROBOTS_MAX_REDIRECTS = 5;
/** Crawl-delay honoured by default (--max-crawl-delay); a site asking for more is skipped. */
export const DEFAULT_MAX_CRAWL_DELAY_MS = 300_000;

export type RobotsEntry =
  | { kind: "rules"; body: string; fetchedAt: number }
  | { kind: "allow-all"; fetchedAt: number }
  | { kind: "disallow-all"; retryAfterMs: number; fetchedAt: number; reason?: string; errorClass?: FetchErrorClass };

/** Longest `reason` kept in a disallow-all entry (it is cached in Redis and copied into page-log lines). */
const REASON_MAX_CHARS = 300;

export interface RobotsFetchResult {
  entry: RobotsEntry;
  /** How long to cache `entry`: 24 h for rules/allow-all, retryAfterMs for disallow-all. */
  ttlMs: number;
  /** Final HTTP status, when a response arrived. */
  status?: number;
  /** Why the file was unreachable (disallow-all), when it was. */
  errorClass?: FetchErrorClass;
  detail?: string;
  /** Redirects followed. */
  redirects: number;
  finalUrl: string;
}

export interface RobotsFetchOptions {
  /** Retry delay after a 5xx/429 without Retry-After, or a network failure. Default 10 min. */
  unavailableRetryMs?: number;
  /** Bounds applied to Retry-After. Defaults 1 min .. 24 h. */
  minRetryMs?: number;
  maxRetryMs?: number;
  /** Time cap for each robots.txt request (default: the client's totalMs). */
  totalMs?: number;
  /**
   * Wait between the end of a redirect response and the request to its target: each hop is a
   * request to a host, and politeness holds for robots.txt too (default 0).
   */
  redirectDelayMs?: number;
  now?: () => number;
}

/** The part of the HTTP client robots fetching needs. */
export interface RobotsHttp {
  fetch(url: string | URL, init?: FetchInit): Promise<FetchOutcome>;
}

/**
 * Fetches origin/robots.txt and turns the outcome into a cache entry (RFC 9309 2.3.1):
 * 2xx -> rules; 4xx -> allow-all; 5xx, 429, network errors, timeouts, more than 5 redirects
 * -> disallow-all until retryAfterMs. Redirects are followed here, to any host.
 */
export async function fetchRobots(
  client: RobotsHttp,
  origin: string,
  userAgent: string,
  opts: RobotsFetchOptions = {},
): Promise<RobotsFetchResult> {
  const now = opts.now ?? Date.now;
  const retryDefault = opts.unavailableRetryMs ?? 10 * 60_000;
  const minRetry = opts.minRetryMs ?? 60_000;
  const maxRetry = opts.maxRetryMs ?? ROBOTS_TTL_MS;
  let url = new URL("/robots.txt", origin);

  const unreachable = (redirects: number, errorClass: FetchErrorClass, detail: string, status?: number, retryAfterMs = retryDefault): RobotsFetchResult => {
    const result: RobotsFetchResult = {
      // Why, so every page refused meanwhile can say (e.g. "dns: ENOTFOUND ..." or "tls: CERT_HAS_EXPIRED ...").
      entry: { kind: "disallow-all", retryAfterMs, fetchedAt: now(), reason: `${errorClass}: ${detail}`.slice(0, REASON_MAX_CHARS) },
      ttlMs: retryAfterMs,
      errorClass,
      detail,
      redirects,
      finalUrl: url.href,
    };
    if (status !== undefined) result.status = status;
    return result;
  };

  for (let redirects = 0; ; redirects++) {
    const res = await client.fetch(url, {
      headers: [
        ["user-agent", userAgent],
        ["accept", "text/plain,*/*;q=0.5"],
      ],
      maxBodyBytes: ROBOTS_MAX_BYTES,
      ...(opts.totalMs !== undefined ? { totalMs: opts.totalMs } : {}),
    });
    if (!res.ok) return unreachable(redirects, res.errorClass, res.detail);
    const { status } = res;

    if (status >= 300 && status < 400) {
      if (res.location === undefined) return unreachable(redirects, "redirect-invalid", `${status} without a usable Location`, status);
      if (redirects >= ROBOTS_MAX_REDIRECTS) {
        return unreachable(redirects, "redirect-limit", `more than ${ROBOTS_MAX_REDIRECTS} redirects`, status);
      }
      const next = new URL(res.location);
      if (next.protocol !== "http:" && next.protocol !== "https:") {
        return unreachable(redirects, "redirect-invalid", `redirect to ${next.protocol}`, status);
      }
      url = next;
      if (opts.redirectDelayMs) await new Promise((r) => setTimeout(r, opts.redirectDelayMs));
      continue;
    }
    if (status === 429 || status >= 500) {
      // Server errors mean "unavailable": assume complete disallow. 429 is treated the same
      // (a request to slow down, not permission to crawl).
      const retryAfterMs = clamp(parseRetryAfter(header(res.headers, "retry-after"), now(), maxRetry) ?? retryDefault, minRetry, maxRetry);
      return unreachable(redirects, "robots-unavailable", `robots.txt answered ${status}`, status, retryAfterMs);
    }
    if (status >= 400) {
      return { entry: { kind: "allow-all", fetchedAt: now() }, ttlMs: ROBOTS_TTL_MS, status, redirects, finalUrl: url.href };
    }
    if (status < 200 || status >= 300) return unreachable(redirects, "robots-unavailable", `unexpected status ${status}`, status);
    if (res.truncated === "time") {
      // A half-read file could lack the very rule that forbids a path; retry later instead.
      return unreachable(redirects, res.errorClass ?? "body-timeout", res.detail ?? "body timed out", status);
    }
    let text: string;
    try {
      text = robotsText(res.body, header(res.headers, "content-encoding"), res.truncated === "length");
    } catch (err) {
      return unreachable(redirects, "decode-error", err instanceof Error ? err.message : String(err), status);
    }
    return { entry: { kind: "rules", body: text, fetchedAt: now() }, ttlMs: ROBOTS_TTL_MS, status, redirects, finalUrl: url.href };
  }
}

export interface CompiledRobots {
  /** Whether our agent may fetch `url` (a URL on the origin the rules came from). */
  isAllowed(url: string | URL): boolean;
  /** Crawl-delay for our group, in ms, as the file asks (never shortened); undefined when none. */
  crawlDelayMs?: number;
  /** The file asks for a Crawl-delay above maxCrawlDelayMs: the host is skipped, not crawled faster than asked. */
  crawlDelayTooLong?: boolean;
  /** Absolute http(s) sitemap URLs listed in the file. */
  sitemaps: string[];
  /** Approximate bytes the compiled rules hold (a memo of compiled files budgets by it). */
  bytes: number;
}

export interface CompileRobotsOptions {
  /** Largest Crawl-delay we honour (default 300 s); above it crawlDelayTooLong is set (the host is skipped). */
  maxCrawlDelayMs?: number;
}

/** Builds the matcher for `userAgent`'s group (its product token, case-insensitive, else `*`). */
export function compileRobots(entry: RobotsEntry, userAgent: string, opts: CompileRobotsOptions = {}): CompiledRobots {
  if (entry.kind === "allow-all") return { isAllowed: () => true, sitemaps: [], bytes: 64 };
  if (entry.kind === "disallow-all") return { isAllowed: (url) => pathOf(url) === "/robots.txt", sitemaps: [], bytes: 64 };

  const token = productToken(userAgent);
  const parsed = parseRobotsTxt(entry.body);
  const { groups, matched } = groupsFor(parsed, token);
  const matcher = new RuleMatcher(groups.flatMap((g) => g.rules));
  const compiled: CompiledRobots = {
    isAllowed(url) {
      const path = pathOf(url);
      if (path === null) return false;
      if (path === "/robots.txt") return true;
      return matcher.isAllowed(normalizePercentEncoding(path));
    },
    // Copied out of the file's text: a slice of it would keep the whole file alive.
    sitemaps: [...new Set(parsed.sitemaps.filter(isHttpUrl))].map(detached),
    bytes: matcher.bytes,
  };
  const delay = crawlDelayFor(groups, matched);
  if (typeof delay === "number" && Number.isFinite(delay) && delay >= 0) {
    compiled.crawlDelayMs = Math.round(delay * 1000);
    if (compiled.crawlDelayMs > (opts.maxCrawlDelayMs ?? DEFAULT_MAX_CRAWL_DELAY_MS)) compiled.crawlDelayTooLong = true;
  }
  return compiled;
}

/** A group with at least this many rules gets a prefix index, built at its first check (fewer: a scan is cheap). */
const INDEX_MIN_RULES = 32;

/**
 * Our group's rules, matched without per-rule allocations, and for a large file through an index
 * by literal prefix (the part before the first `*` or a final `$`): a rule can only match a path
 * that starts with that prefix, so a URL is checked against the few rules whose prefix it starts
 * with instead of every rule (RFC 9309 allows 500 KiB: ~20,000 rules, ~0.4 ms per URL by a scan).
 * Google's matching: the longest matching pattern decides, allow wins a tie.
 *
 * Compiled files stay in every fetcher's memo for as long as their host is in rotation, so the
 * rules are kept flat: every pattern in one string with offsets, the index as typed arrays. An
 * object and a string per rule (and a bucket per prefix) cost ~200 bytes a rule: ~4 MB for one
 * 500 KiB file, and a few hundred such hosts filled a fetcher's heap.
 */
export class RuleMatcher {
  /** Every pattern, one after the other: rule i is text[starts[i], starts[i + 1]). */
  private readonly text: string;
  private readonly starts: Int32Array;
  private readonly allows: Uint8Array;
  /** Index (large groups only): rule numbers ordered by literal prefix, each rule's prefix length. */
  private byPrefix: Int32Array | null = null;
  private prefixLengths: Int32Array | null = null;
  /** The distinct prefix lengths, ascending. */
  private lengths: Int32Array | null = null;

  constructor(rules: readonly RobotsRule[]) {
    this.starts = new Int32Array(rules.length + 1);
    this.allows = new Uint8Array(rules.length);
    let at = 0;
    rules.forEach((rule, i) => {
      this.starts[i] = at;
      at += rule.pattern.length;
      this.allows[i] = rule.allow ? 1 : 0;
    });
    this.starts[rules.length] = at;
    // join() builds one flat string: no rule keeps a slice of the file's text alive.
    this.text = rules.map((r) => r.pattern).join("");
  }

  /** Rules held. */
  get size(): number {
    return this.allows.length;
  }

  /** Approximate bytes held (patterns, offsets, and the index a large group gets at its first check). */
  get bytes(): number {
    const n = this.allows.length;
    return 64 + this.text.length + n * 5 + (n >= INDEX_MIN_RULES ? n * 8 : 0);
  }

  /** `path` is a path+query normalized by normalizePercentEncoding. */
  isAllowed(path: string): boolean {
    const n = this.allows.length;
    if (this.byPrefix === null && n >= INDEX_MIN_RULES) this.buildIndex();
    let best = -1;
    if (this.byPrefix === null) {
      for (let i = 0; i < n; i++) best = this.better(i, best, path);
    } else {
      const order = this.byPrefix;
      for (const length of this.lengths!) {
        if (length > path.length) break;
        // The rules whose literal prefix is exactly path[0, length): one run of the order.
        for (let k = this.firstAtLeast(path, length); k < n; k++) {
          const rule = order[k]!;
          if (this.comparePrefix(rule, path, length) !== 0) break;
          best = this.better(rule, best, path);
        }
      }
    }
    return best === -1 || this.allows[best] === 1;
  }

  /** The rule that decides, of `best` so far (-1: none) and rule `i`: the longest matching pattern; on a tie, allow. */
  private better(i: number, best: number, path: string): number {
    if (best !== -1) {
      const len = this.starts[i + 1]! - this.starts[i]!;
      const bestLen = this.starts[best + 1]! - this.starts[best]!;
      if (len < bestLen || (len === bestLen && (this.allows[best] === 1 || this.allows[i] === 0))) return best;
    }
    return matches(this.text, this.starts[i]!, this.starts[i + 1]!, path) ? i : best;
  }

  /** Position in byPrefix of the first rule whose literal prefix is >= path[0, length). */
  private firstAtLeast(path: string, length: number): number {
    const order = this.byPrefix!;
    let lo = 0;
    let hi = order.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.comparePrefix(order[mid]!, path, length) < 0) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Rule `i`'s literal prefix against path[0, length), as strings compare (by UTF-16 code unit). */
  private comparePrefix(i: number, path: string, length: number): number {
    const from = this.starts[i]!;
    const plen = this.prefixLengths![i]!;
    const common = Math.min(plen, length);
    for (let k = 0; k < common; k++) {
      const d = this.text.charCodeAt(from + k) - path.charCodeAt(k);
      if (d !== 0) return d;
    }
    return plen - length;
  }

  private buildIndex(): void {
    const n = this.allows.length;
    const prefixLengths = new Int32Array(n);
    const lengths = new Set<number>();
    const prefixes: string[] = [];
    for (let i = 0; i < n; i++) {
      const from = this.starts[i]!;
      prefixLengths[i] = literalPrefixLength(this.text, from, this.starts[i + 1]!);
      lengths.add(prefixLengths[i]!);
      prefixes.push(this.text.slice(from, from + prefixLengths[i]!));
    }
    const order = Int32Array.from(prefixes.keys()).sort((x, y) => (prefixes[x]! < prefixes[y]! ? -1 : prefixes[x]! > prefixes[y]! ? 1 : x - y));
    this.prefixLengths = prefixLengths;
    this.byPrefix = order;
    this.lengths = Int32Array.from([...lengths].sort((x, y) => x - y));
  }
}

/** Length of the characters a matching path must start with: up to the first `*`, without a final `$`. */
function literalPrefixLength(text: string, from: number, to: number): number {
  let end = from;
  while (end < to && text.charCodeAt(end) !== STAR) end++;
  if (end === to && to > from && text.charCodeAt(to - 1) === DOLLAR) end--;
  return end - from;
}

const STAR = 42;
const DOLLAR = 36;
let lengthsScratch = new Int32Array(256);

/**
 * Google's robots.txt matching (robots.cc) of the pattern text[from, to): `*` matches any run
 * of characters, a final `$` anchors the end. Keeps every prefix length of `path` matched so far.
 */
function matches(text: string, from: number, to: number, path: string): boolean {
  if (lengthsScratch.length < path.length + 1) lengthsScratch = new Int32Array(path.length + 1);
  const lengths = lengthsScratch;
  let count = 1;
  lengths[0] = 0;
  for (let p = from; p < to; p++) {
    const ch = text.charCodeAt(p);
    if (ch === DOLLAR && p + 1 === to) return lengths[count - 1] === path.length;
    if (ch === STAR) {
      count = path.length - lengths[0]! + 1;
      for (let i = 1; i < count; i++) lengths[i] = lengths[i - 1]! + 1;
    } else {
      let kept = 0;
      for (let i = 0; i < count; i++) {
        const at = lengths[i]!;
        if (at < path.length && path.charCodeAt(at) === ch) lengths[kept++] = at + 1;
      }
      if (kept === 0) return false;
      count = kept;
    }
  }
  return true;
}

/** A copy of `s` that shares no storage with the string it was cut from. */
function detached(s: string): string {
  return (" " + s).slice(1);
}

/** "shardcrawl/0.1 (+https://...)" -> "shardcrawl" (RFC 9309 2.2.1: letters, "_" and "-"). */
export function productToken(userAgent: string): string {
  return /^[A-Za-z_-]+/.exec(userAgent.trim())?.[0].toLowerCase() ?? "*";
}

function pathOf(url: string | URL): string | null {
  try {
    const u = typeof url === "string" ? new URL(url) : url;
    return `${u.pathname}${u.search}`;
  } catch {
    return null;
  }
}

/** Whether a Sitemap value is an absolute http(s) URL (others are ignored). */
export function isHttpUrl(value: string): boolean {
  try {
    const u = new URL(value);
    return u.protocol === "http:" || u.protocol === "https:";
  } catch {
    return false;
  }
}

const UNRESERVED = /[A-Za-z0-9\-._~]/;

/** RFC 9309 2.2.2: %XX of an unreserved character means the character itself; other escapes upper-cased. */
export function normalizePercentEncoding(path: string): string {
  if (!path.includes("%")) return path;
  return path.replace(/%([0-9A-Fa-f]{2})/g, (_m, hex: string) => {
    const ch = String.fromCharCode(Number.parseInt(hex, 16));
    return UNRESERVED.test(ch) ? ch : `%${hex.toUpperCase()}`;
  });
}

/** Strips a BOM and normalizes the percent-encoding of allow/disallow values. */
/** Exported for tests (the rules text robots-parser is given). */
export function normalizeRules(body: string): string {
  const text = body.startsWith("\uFEFF") ? body.slice(1) : body;
  // Nothing to normalize without a "%" (most files; a large one has ~20,000 lines to visit).
  if (!text.includes("%")) return text;
  return text.replace(/^([ \t]*(?:allow|disallow)[ \t]*:)(.*)$/gim, (_m, key: string, value: string) => key + normalizePercentEncoding(value));
}

function header(headers: ReadonlyArray<[string, string]>, name: string): string | undefined {
  return headers.find(([k]) => k.toLowerCase() === name)?.[1];
}

function clamp(value: number, min: number, max: number): number {
  return Math.min(Math.max(value, min), max);
}

/**
 * The robots.txt text: content-encoding removed (the client keeps bytes as received), at most
 * ROBOTS_MAX_BYTES decoded, and when the file was cut, the cut last line dropped so a partial
 * rule ("Disallow: /pri" of "/private") is never applied.
 */
function robotsText(body: Buffer, contentEncoding: string | undefined, wireCut: boolean): string {
  const decoded = decodeContent(body, contentEncoding === undefined ? [] : [contentEncoding], { maxBytes: ROBOTS_MAX_BYTES, overCap: "truncate" });
  if (!decoded.ok) throw new Error(`cannot decode robots.txt: ${decoded.detail}`);
  let text = new TextDecoder("utf-8").decode(decoded.body);
  if (wireCut || decoded.cut) {
    const lastBreak = Math.max(text.lastIndexOf("\n"), text.lastIndexOf("\r"));
    text = lastBreak === -1 ? "" : text.slice(0, lastBreak + 1);
  }
  return text;
}
