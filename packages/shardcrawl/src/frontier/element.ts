// Compact queue elements. A host's queue holds millions of URLs on a hot host, so an element is
// as short as it can be while still giving back the exact URL. Forms (all readable, so queues
// written by an earlier version are still served without conversion):
//   packed: a URL with the host's stored origin, depth 1..8, no hops, first attempt, and a
//       printable-ASCII path+query of at least 4 bytes after the "/" (normalized URLs are ASCII:
//       the URL serializer percent-encodes the rest). Stored: the path+query WITHOUT its "/", as
//       7-bit chars whose free top bits carry a bit stream: 1 (the form's mark, so the first byte
//       is >= 0x80), depth-1 in 3 bits, then the 7 bits of each of the LAST s chars, which are left
//       out (s = floor((n - 4) / 8) for n chars; a printable char is never 0, so a 0 group ends
//       them). About 1/8 less than the raw path+query. Binary: read queues with lrangeBuffer (or
//       latin1), never as UTF-8 strings.
//   "\x01".."\x08" + path+query without its "/": the same for other paths (short, non-ASCII); the
//       depth byte stands in for the "/".
//   "/" + path+query + suffix: the URL has the host's stored origin (any depth/hops/attempt).
//   full URL + suffix: the URL has another origin than the host's (e.g. http vs https).
// Suffix: nothing when depth, hops and attempt are 0; ONE byte \x01..\x08 for depth 1..8 with no
// hops and no attempt; else "\t<depth>[,<hops>[,<attempt>]]". A normalized URL never contains a
// control character (invalidLinkReason refuses them), so the forms separate unambiguously by
// their first byte: >= 0x80, a control byte, "/", or a scheme letter. The Lua scripts decide
// relative vs full (they know the host's stored origin) and expand elements (lib.lua el_long,
// el_full); lease data and page records keep the long "/..." form, so only queues are binary.

/** A URL split losslessly as origin + rest, where rest starts with "/" (or origin is "" and rest is the URL). */
export interface SplitUrl {
  origin: string;
  rest: string;
}

/**
 * Splits "https://a.test:8080/p?q" into {origin: "https://a.test:8080", rest: "/p?q"}. String
 * slicing, not `new URL()`: the URL is already normalized and this runs for every discovered link.
 * When there is no "/" after the authority the whole URL is kept as rest (stored in full).
 */
export function splitOrigin(url: string): SplitUrl {
  const scheme = url.indexOf("://");
  if (scheme <= 0) return { origin: "", rest: url };
  const slash = url.indexOf("/", scheme + 3);
  if (slash < 0) return { origin: "", rest: url };
  const origin = url.slice(0, slash);
  // Authority ends at the first "/"; a "?" or "#" before it means an empty path: keep it whole.
  if (origin.includes("?") || origin.includes("#")) return { origin: "", rest: url };
  return { origin, rest: url.slice(slash) };
}

/** Deepest depth written as one control byte (\x09 is the tab). */
const MAX_BYTE_DEPTH = 8;

/** One depth byte, "\t<depth>[,<hops>[,<attempt>]]", or "" when all are zero. */
export function encodeSuffix(depth: number, hops: number, attempt: number): string {
  if (attempt === 0 && hops === 0 && depth >= 1 && depth <= MAX_BYTE_DEPTH) return String.fromCharCode(depth);
  if (attempt !== 0) return `\t${depth},${hops},${attempt}`;
  if (hops !== 0) return `\t${depth},${hops}`;
  if (depth !== 0) return `\t${depth}`;
  return "";
}

/** Bytes after the "/" that a packed element needs: the mark and three depth bits. */
const PACKED_MIN = 4;

function printableAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c > 0x7e) return false;
  }
  return true;
}

/**
 * The element of a link whose URL has an origin (the Lua side swaps in the full URL when the
 * host's stored origin differs): `rest` is the path+query starting with "/". A packed element is
 * returned as a binary string (one char per byte, write it as latin1: see isPacked).
 */
export function encodeRelative(rest: string, depth: number, hops: number, attempt: number): string {
  if (attempt !== 0 || hops !== 0 || depth < 1 || depth > MAX_BYTE_DEPTH) return rest + encodeSuffix(depth, hops, attempt);
  if (rest.length > PACKED_MIN && printableAscii(rest)) return pack(rest.slice(1), depth);
  return String.fromCharCode(depth) + rest.slice(1);
}

/** The packed form of path+query `q` (without its "/"), see the header. */
function pack(q: string, depth: number): string {
  const n = q.length;
  const s = Math.floor((n - PACKED_MIN) / 8);
  const m = n - s;
  const carriers = PACKED_MIN + 7 * s;
  const d = depth - 1;
  let out = String.fromCharCode(q.charCodeAt(0) | 0x80, q.charCodeAt(1) | ((d & 4) << 5), q.charCodeAt(2) | ((d & 2) << 6), q.charCodeAt(3) | ((d & 1) << 7));
  for (let i = PACKED_MIN; i < carriers; i++) {
    const j = i - PACKED_MIN;
    const bit = (q.charCodeAt(m + Math.floor(j / 7)) >> (6 - (j % 7))) & 1;
    out += String.fromCharCode(q.charCodeAt(i) | (bit << 7));
  }
  return out + q.slice(carriers, m);
}

/** Inverse of pack: the path+query (with its "/") and the depth. */
function unpack(el: string): { path: string; depth: number } {
  const m = el.length;
  const top = (i: number) => (i < m ? el.charCodeAt(i) >> 7 : 0);
  const depth = 1 + (top(1) << 2) + (top(2) << 1) + top(3);
  let stash = "";
  for (let k = 0; PACKED_MIN + 7 * (k + 1) <= m; k++) {
    let c = 0;
    for (let t = 0; t < 7; t++) c = (c << 1) | top(PACKED_MIN + 7 * k + t);
    if (c === 0) break;
    stash += String.fromCharCode(c);
  }
  let body = "";
  for (let i = 0; i < m; i++) body += String.fromCharCode(el.charCodeAt(i) & 0x7f);
  return { path: `/${body}${stash}`, depth };
}

/** True for a packed element (a binary string: its bytes are its char codes). */
export function isPacked(element: string): boolean {
  const c = element.charCodeAt(0);
  return c >= 0x80 && c <= 0xff;
}

export interface DecodedElement {
  url: string;
  depth: number;
  hops: number;
  attempt: number;
}

function nonNegativeInt(s: string | undefined): number {
  if (s === undefined || s === "") return 0;
  const n = Number(s);
  // Elements are written only by this module and the scripts; anything else is treated as 0
  // rather than thrown, because a throw here would strand an already-recorded lease.
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

/**
 * Decodes an element: `url` is the full URL when the element holds one, else the path+query
 * starting with "/" (prefix the host's stored origin, field o of P h:<host>). Give queue elements
 * as Buffers (lrangeBuffer) or latin1 strings: a packed element is not UTF-8.
 */
export function decodeElement(raw: string | Buffer): DecodedElement {
  const element = typeof raw === "string" ? raw : raw.toString(raw[0]! >= 0x80 ? "latin1" : "utf8");
  const first = element.charCodeAt(0);
  if (first >= 0x80 && first <= 0xff) {
    const { path, depth } = unpack(element);
    return { url: path, depth, hops: 0, attempt: 0 };
  }
  if (first >= 1 && first <= MAX_BYTE_DEPTH) return { url: `/${element.slice(1)}`, depth: first, hops: 0, attempt: 0 };
  const last = element.charCodeAt(element.length - 1);
  if (last >= 1 && last <= MAX_BYTE_DEPTH) return { url: element.slice(0, -1), depth: last, hops: 0, attempt: 0 };
  const tab = element.indexOf("\t");
  if (tab < 0) return { url: element, depth: 0, hops: 0, attempt: 0 };
  const [d, h, a] = element.slice(tab + 1).split(",");
  return { url: element.slice(0, tab), depth: nonNegativeInt(d), hops: nonNegativeInt(h), attempt: nonNegativeInt(a) };
}
