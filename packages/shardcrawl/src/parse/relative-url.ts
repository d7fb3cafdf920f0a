// Resolving the common relative links (and taking the common absolute ones) without the URL parser. A page's links are mostly
// "/path/page.html" or "page.html?x=1" made of characters the WHATWG parser copies as they are and
// the normalizer leaves alone; for those, the normalized link is the normalized base's origin or
// directory followed by the href, which a string concatenation gives for a fraction of the
// new URL() + normalization cost (about a fifth of the extraction on link-heavy pages). Anything
// else (a scheme, "//", '%', '#', '\\', whitespace, dot segments, non-ASCII, quotes ...) returns
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

/**
 * normalizeUrl(href, base) for a relative href of plain characters ("/a/b", "b/c.html", "?q=1"),
 * or null when the href is anything else (then the caller must use normalizeUrl).
 */
export function resolvePlainRelative(href: string, base: BaseParts): string | null {
  const n = href.length;
  // An empty query ("page?") is dropped by the normalizer: leave it to the parser.
  if (n === 0 || href.charCodeAt(n - 1) === QUESTION) return null;
  const first = href.charCodeAt(0);
  // "//host" is protocol-relative; a leading '.' may start a dot segment: both to the parser.
  if (first === DOT || (first === SLASH && n > 1 && href.charCodeAt(1) === SLASH)) return null;
  let inQuery = first === QUESTION;
  let segmentStart = first === SLASH ? 1 : 0;
  for (let i = 0; i < n; i++) {
    const c = href.charCodeAt(i);
    if (c >= 128 || PLAIN[c] === 0) return null;
    if (inQuery) continue;
    if (c === COLON && first !== SLASH) return null; // could be a scheme ("mailto:", "javascript:")
    if (c === SLASH || c === QUESTION) {
      if (isDotSegment(href, segmentStart, i)) return null;
      segmentStart = i + 1;
      if (c === QUESTION) inQuery = true;
    }
  }
  if (!inQuery && isDotSegment(href, segmentStart, n)) return null;
  if (first === SLASH) return base.origin + href;
  if (first === QUESTION) return base.path + href;
  return base.directory + href;
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
  if (href.charCodeAt(i) !== SLASH) return null; // a port, credentials, '?', '#' ...
  if (href.charCodeAt(n - 1) === QUESTION) return null; // an empty query: the normalizer drops it
  // One pass over path and query: plain characters only, no dot segment in the path.
  let segmentStart = i + 1;
  let inQuery = false;
  for (let k = i + 1; k < n; k++) {
    const c = href.charCodeAt(k);
    if (c >= 128 || PLAIN[c] === 0) return null;
    if (inQuery) continue;
    if (c === SLASH || c === QUESTION) {
      if (isDotSegment(href, segmentStart, k)) return null;
      segmentStart = k + 1;
      if (c === QUESTION) inQuery = true;
    }
  }
  if (!inQuery && isDotSegment(href, segmentStart, n)) return null;
  return href;
}

/** Is href[start, end) "." or ".."? */
function isDotSegment(href: string, start: number, end: number): boolean {
  const length = end - start;
  if (length === 1) return href.charCodeAt(start) === DOT;
  if (length === 2) return href.charCodeAt(start) === DOT && href.charCodeAt(start + 1) === DOT;
  return false;
}
