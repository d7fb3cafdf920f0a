// Resolving the common relative links (and taking the common absolute ones) without the URL parser. A page's links are mostly
// "/path/page.html" or "page.html?x=1" made of characters the WHATWG parser copies as they are and
// the normalizer leaves alone (and %XX escapes it keeps as they are); for those, the normalized
// link is the normalized base's origin or directory followed by the href, which a string
// concatenation gives for a fraction of the new URL() + normalization cost (about a fifth of the
// extraction on link-heavy pages). A fragment is cut off, as the normalizer does. Anything else
// (a scheme, "//", other escapes, '\\', whitespace, dot segments, non-ASCII, quotes ...) returns
// null and goes through normalizeUrl. test/parse/relative-url.test.ts checks the two agree.

/** The normalized base split for resolving: "scheme://host[:port]", its directory and its path. */
export interface BaseParts {
  /** "http://host:port" (no path). */
  origin: string;
  /** Origin + the base path up to and including its last '/'. */
  directory: string;
  /** Origin + the base path (no query). */
  path: string;
}

/** Parts of a normalized http(s) URL (normalizeUrl's output), or null if it does not look like one. */
export function baseParts(normalizedBase: string): BaseParts | null {
  const scheme = normalizedBase.indexOf("://");
  if (scheme === -1) return null;
  const pathStart = normalizedBase.indexOf("/", scheme + 3);
  if (pathStart === -1) return null;
  const query = normalizedBase.indexOf("?", pathStart);
  const pathEnd = query === -1 ? normalizedBase.length : query;
  const lastSlash = normalizedBase.lastIndexOf("/", pathEnd - 1);
  return {
    origin: normalizedBase.slice(0, pathStart),
    directory: normalizedBase.slice(0, lastSlash + 1),
    path: normalizedBase.slice(0, pathEnd),
  };
}

/**
 * Characters copied unchanged by the WHATWG parser in a path and a query of an http(s) URL and left
 * alone by the normalizer: ALPHA DIGIT - . _ ~ ! $ & ( ) * + , ; = : @ / ? (the '?' handled apart).
 */
const PLAIN = new Uint8Array(128);
for (const c of "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-._~!$&()*+,;=:@/?") PLAIN[c.charCodeAt(0)] = 1;

const SLASH = 0x2f;
const DOT = 0x2e;
const QUESTION = 0x3f;
const COLON = 0x3a;
const HASH = 0x23;
const PERCENT = 0x25;

/** 0-9 A-F: the hex digits of an escape the normalizer keeps as written (it upper-cases lower ones). */
function upperHex(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x41 && c <= 0x46) return c - 0x41 + 10;
  return -1;
}

/**
 * Is href[i] ('%') an escape both the parser and the normalizer leave alone: two upper-case hex
 * digits of a byte that is not unreserved (an unreserved one, e.g. %7E or %2E, is decoded)?
 */
function keptEscape(href: string, i: number): boolean {
  const h1 = upperHex(href.charCodeAt(i + 1));
  const h2 = upperHex(href.charCodeAt(i + 2));
  if (h1 < 0 || h2 < 0) return false;
  const b = h1 * 16 + h2;
  const unreserved = (b >= 0x61 && b <= 0x7a) || (b >= 0x41 && b <= 0x5a) || (b >= 0x30 && b <= 0x39) || b === 0x2d || b === DOT || b === 0x5f || b === 0x7e;
  return !unreserved;
}

/**
 * normalizeUrl(href, base) for a relative href of plain characters ("/a/b", "b/c.html", "?q=1"),
 * or null when the href is anything else (then the caller must use normalizeUrl).
 */
export function resolvePlainRelative(href: string, base: BaseParts): string | null {
  const n = href.length;
  const first = href.charCodeAt(0);
  // "//host" is protocol-relative; a leading '.' may start a dot segment: both to the parser.
  if (n === 0 || first === DOT || first === HASH || (first === SLASH && n > 1 && href.charCodeAt(1) === SLASH)) return null;
  // (A ':' before the query could end a scheme: "mailto:", "javascript:".)
  const end = plainEnd(href, 0, first === QUESTION, first !== SLASH);
  if (end < 0) return null;
  const link = end === n ? href : href.slice(0, end);
  if (first === SLASH) return base.origin + link;
  if (first === QUESTION) return base.path + link;
  return base.directory + link;
}

/**
 * normalizeUrl(href) for an absolute "http(s)://host/path?query" that is already in normalized form:
 * lower-case scheme and host of plain labels (letters, digits, '-'; the last starting with a letter,
 * so no IPv4 spelling; no punycode, which the parser validates), no port, no credentials, and a path
 * and query of plain characters without dot segments. Null for anything else.
 */
export function plainAbsolute(href: string): string | null {
  const start = href.startsWith("http://") ? 7 : href.startsWith("https://") ? 8 : -1;
  if (start === -1) return null;
  const n = href.length;
  let i = start;
  let labelStart = start;
  // One pass over the host: labels, and "xn--" anywhere in it (punycode, which the parser validates).
  for (; i < n; i++) {
    const c = href.charCodeAt(i);
    if (c === DOT) {
      if (i === labelStart) return null; // empty label
      labelStart = i + 1;
    } else if (c === 0x2d /* - */) {
      if (i >= start + 3 && href.charCodeAt(i - 1) === 0x2d && href.charCodeAt(i - 2) === 0x6e /* n */ && href.charCodeAt(i - 3) === 0x78 /* x */) return null;
    } else if (!((c >= 0x61 && c <= 0x7a) || (c >= 0x30 && c <= 0x39))) {
      break;
    }
  }
  if (labelStart >= i) return null; // empty host or trailing dot
  const lastLabelFirst = href.charCodeAt(labelStart);
  if (lastLabelFirst < 0x61 || lastLabelFirst > 0x7a) return null;
  if (i === n) return href + "/";
  if (href.charCodeAt(i) === HASH) return href.slice(0, i) + "/";
  if (href.charCodeAt(i) !== SLASH) return null; // a port, credentials, '?' ...
  const end = plainEnd(href, i + 1, false, false);
  if (end < 0) return null;
  return end === n ? href : href.slice(0, end);
}

/**
 * One pass over href[from..], a path and query: where the normalized link ends (at a fragment,
 * which the normalizer drops), or -1 when the parser must decide: a character that is neither
 * plain nor a kept escape, a dot segment in the path, an empty query ("page?", which the
 * normalizer drops), or with `noColon` a ':' before the query.
 */
function plainEnd(href: string, from: number, inQuery: boolean, noColon: boolean): number {
  const n = href.length;
  let segmentStart = from;
  let end = n;
  for (let i = from; i < n; i++) {
    const c = href.charCodeAt(i);
    if (c === HASH) {
      end = i;
      break;
    }
    if (c === PERCENT) {
      if (!keptEscape(href, i)) return -1;
      i += 2;
      continue;
    }
    if (c >= 128 || PLAIN[c] === 0) return -1;
    if (inQuery) continue;
    if (c === COLON && noColon) return -1;
    if (c === SLASH || c === QUESTION) {
      if (isDotSegment(href, segmentStart, i)) return -1;
      segmentStart = i + 1;
      if (c === QUESTION) inQuery = true;
    }
  }
  if (href.charCodeAt(end - 1) === QUESTION) return -1;
  if (!inQuery && isDotSegment(href, segmentStart, end)) return -1;
  return end;
}

/** Is href[start, end) "." or ".."? */
function isDotSegment(href: string, start: number, end: number): boolean {
  const length = end - start;
  if (length === 1) return href.charCodeAt(start) === DOT;
  if (length === 2) return href.charCodeAt(start) === DOT && href.charCodeAt(start + 1) === DOT;
  return false;
}
