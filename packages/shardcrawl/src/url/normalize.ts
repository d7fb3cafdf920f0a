// URL normalization: one canonical string per crawlable resource, so the seen-filter, the frontier and
// the shard key all agree. Parsing is the WHATWG URL parser (Ada in Node 20), which already does the
// heavy lifting: IDN -> punycode, lower-case host, default port removed, dot segments resolved, odd
// IPv4 spellings canonicalized, backslashes, tabs/newlines and leading/trailing C0 controls/spaces
// stripped. On top of it we keep http(s) only, drop the fragment, credentials and an empty query,
// and normalize percent-encoding (upper-case hex, unreserved characters decoded) — WHATWG leaves
// those alone. Session-id and tracking parameters are removed after this step (strip-params.ts).

export const DEFAULT_MAX_URL_LENGTH = 2048;

/** Why a URL was refused. */
export type UrlRejectReason = "invalid" | "scheme" | "too-long";

export type NormalizeResult = { ok: true; url: string } | { ok: false; reason: UrlRejectReason };

export interface NormalizeOptions {
  /** Longest normalized URL accepted, in characters (default 2048). */
  maxLength?: number;
}

// Raw inputs longer than this multiple of the cap are refused before parsing: the output can only be
// a little shorter than the input (whitespace stripped, %XX decoded), and parsing megabyte strings
// found in hostile pages is wasted work.
const RAW_LENGTH_FACTOR = 3;

const CHAR_PERCENT = 0x25;

/**
 * Normalize `href` (resolved against `base` when given) to the crawler's canonical form, or say why
 * not. Never throws; on success the output parses and normalizes to itself.
 */
export function normalizeUrlDetailed(href: string, base?: string | URL, options?: NormalizeOptions): NormalizeResult {
  const maxLength = options?.maxLength ?? DEFAULT_MAX_URL_LENGTH;
  if (typeof href !== "string") return { ok: false, reason: "invalid" };
  if (href.length > maxLength * RAW_LENGTH_FACTOR) return { ok: false, reason: "too-long" };
  let url: URL;
  try {
    url = base === undefined ? new URL(href) : new URL(href, base);
  } catch {
    return { ok: false, reason: "invalid" };
  }
  const protocol = url.protocol;
  if (protocol !== "http:" && protocol !== "https:") return { ok: false, reason: "scheme" };
  try {
    return finish(url, maxLength);
  } catch {
    // Setters below cannot throw for http(s) URLs as far as the spec goes; stay total anyway.
    return { ok: false, reason: "invalid" };
  }
}

/** Normalize `href` (against `base`), or null when it is invalid, not http(s), or too long. Never throws. */
export function normalizeUrl(href: string, base?: string | URL, options?: NormalizeOptions): string | null {
  const result = normalizeUrlDetailed(href, base, options);
  return result.ok ? result.url : null;
}

function finish(url: URL, maxLength: number): NormalizeResult {
  // A crawler must never replay credentials found in someone's link, and without them it is the
  // same resource. Rare, so the (re-serializing) setters are fine here.
  if (url.username !== "" || url.password !== "") {
    url.username = "";
    url.password = "";
  }
  // "example.com." and "example.com" are one site in DNS; keeping both would double the request
  // rate a host sees under two politeness keys.
  let hostname = url.hostname;
  if (hostname.endsWith(".")) {
    hostname = hostname.replace(/\.+$/, "");
    if (hostname === "") return { ok: false, reason: "invalid" };
    url.hostname = hostname;
    if (url.hostname !== hostname) return { ok: false, reason: "invalid" };
  }
  let href = url.href;
  // The serializer percent-encodes '#' everywhere but in front of the fragment, so the first '#'
  // starts the fragment.
  const hash = href.indexOf("#");
  if (hash !== -1) href = href.slice(0, hash);
  // "/a?" and "/a" are one resource to every server we know of: an empty query is dropped.
  if (href.charCodeAt(href.length - 1) === 0x3f /* ? */ && url.search === "") href = href.slice(0, -1);
  // Everything after scheme://host[:port] is path + optional '?query'; credentials are gone, so
  // the authority is exactly url.host.
  const pathStart = url.protocol.length + 2 + url.host.length;
  if (href.indexOf("%", pathStart) !== -1) {
    href = href.slice(0, pathStart) + normalizePercentEncoding(href, pathStart);
  }
  if (href.length > maxLength) return { ok: false, reason: "too-long" };
  return { ok: true, url: href };
}

function hexValue(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  const lower = c | 0x20;
  if (lower >= 0x61 && lower <= 0x66) return lower - 0x61 + 10;
  return -1;
}

function isUnreserved(c: number): boolean {
  // RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~"
  return (
    (c >= 0x61 && c <= 0x7a) ||
    (c >= 0x41 && c <= 0x5a) ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x2d ||
    c === 0x2e ||
    c === 0x5f ||
    c === 0x7e
  );
}

function isHexDigit(c: number): boolean {
  return hexValue(c) !== -1;
}

const HEX_UPPER = "0123456789ABCDEF";

/**
 * Upper-case the hex of every %XX triplet in s[from..] and decode those that encode an unreserved
 * character. Reserved characters (%2F, %3F, %26 ...) are never decoded: they change meaning. A bare
 * '%' (not followed by two hex digits) is left alone, as WHATWG does; a decoding that would glue onto
 * such a bare '%' and form a new triplet is skipped, so the function is idempotent.
 */
export function normalizePercentEncoding(s: string, from = 0): string {
  let out = "";
  let copyFrom = from;
  // Output position state: did the output so far end with a bare '%' (lastBare=1) or a bare '%'
  // followed by one hex digit (lastBare=2)? Decoding a hex-digit character right there would make
  // a triplet that a second pass would decode differently.
  let lastBare = 0;
  const n = s.length;
  let i = from;
  while (i < n) {
    const c = s.charCodeAt(i);
    if (c !== CHAR_PERCENT) {
      if (lastBare === 1 && isHexDigit(c)) lastBare = 2;
      else lastBare = 0;
      i++;
      continue;
    }
    const h1 = i + 1 < n ? hexValue(s.charCodeAt(i + 1)) : -1;
    const h2 = i + 2 < n ? hexValue(s.charCodeAt(i + 2)) : -1;
    if (h1 === -1 || h2 === -1) {
      lastBare = 1;
      i++;
      continue;
    }
    const byte = h1 * 16 + h2;
    let replacement: string;
    if (isUnreserved(byte) && !(lastBare === 1 || (lastBare === 2 && isHexDigit(byte)))) {
      replacement = String.fromCharCode(byte);
      lastBare = 0;
    } else {
      replacement = "%" + HEX_UPPER[h1]! + HEX_UPPER[h2]!;
      lastBare = 0;
    }
    if (replacement !== s.slice(i, i + 3)) {
      out += s.slice(copyFrom, i) + replacement;
      copyFrom = i + 3;
    }
    i += 3;
  }
  if (copyFrom === from) return s.slice(from);
  return out + s.slice(copyFrom);
}

/**
 * The politeness key of a URL: its hostname (lower-case, punycode, IPv6 in brackets), without port.
 * Null when the URL does not parse. A fast path reads the host straight out of a URL that is already
 * in normalized form (the frontier calls this per link); anything unusual goes to the WHATWG parser.
 */
export function hostOf(url: string): string | null {
  const fast = plainHostOf(url);
  if (fast !== null) return fast;
  try {
    const hostname = new URL(url).hostname;
    return hostname === "" ? null : hostname;
  } catch {
    return null;
  }
}

/**
 * Host of "http(s)://host[:port]/..." when the authority is plain lower-case letters, digits, '-' and
 * '.', the last label starts with a letter (so it is no IPv4 spelling the parser would rewrite), no
 * punycode (the parser validates it), and the port is a plain number. Otherwise null.
 */
function plainHostOf(url: string): string | null {
  const start = url.startsWith("https://") ? 8 : url.startsWith("http://") ? 7 : -1;
  if (start === -1) return null;
  let i = start;
  let labelStart = start;
  for (; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 0x2e /* . */) {
      if (i === labelStart) return null; // empty label
      labelStart = i + 1;
    } else if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39) || c === 0x2d)) {
      break;
    }
  }
  const hostEnd = i;
  // Non-empty last label that starts with a letter: not an IPv4 spelling, no trailing dot.
  if (labelStart >= hostEnd) return null;
  const first = url.charCodeAt(labelStart);
  if (!(first >= 0x61 && first <= 0x7a)) return null;
  const host = url.slice(start, hostEnd);
  if (host.includes("xn--")) return null;
  if (i < url.length && url.charCodeAt(i) === 0x3a /* : */) {
    let port = 0;
    let digits = 0;
    for (i++; i < url.length; i++) {
      const c = url.charCodeAt(i);
      if (c < 0x30 || c > 0x39) break;
      port = port * 10 + (c - 0x30);
      if (++digits > 5) return null;
    }
    if (port > 65535) return null;
  }
  if (i === url.length) return host;
  const end = url.charCodeAt(i);
  return end === 0x2f /* / */ || end === 0x3f /* ? */ || end === 0x23 /* # */ ? host : null;
}
