// Compact queue elements. A host's queue holds millions of URLs on a hot host, so an element is
// the path+query when the URL has the host's origin (the host hash stores the origin once) and the
// full URL otherwise, followed by "\t<depth>[,<hops>[,<attempt>]]" only when a number is non-zero,
// or, for the most common case (depth 1..8, no hops, first attempt), by ONE byte: the depth as a
// control character \x01..\x08 (a byte per queued URL is ~3% of the frontier's memory). A
// normalized URL never contains a control character (invalidLinkReason refuses them), so both
// forms separate unambiguously. The Lua scripts
// decide relative vs full (they know the host's stored origin); this module does the client side.

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

/** Decodes an element whose URL part the script already expanded to a full URL. */
export function decodeElement(element: string): DecodedElement {
  const last = element.charCodeAt(element.length - 1);
  if (last >= 1 && last <= MAX_BYTE_DEPTH) return { url: element.slice(0, -1), depth: last, hops: 0, attempt: 0 };
  const tab = element.indexOf("\t");
  if (tab < 0) return { url: element, depth: 0, hops: 0, attempt: 0 };
  const [d, h, a] = element.slice(tab + 1).split(",");
  return { url: element.slice(0, tab), depth: nonNegativeInt(d), hops: nonNegativeInt(h), attempt: nonNegativeInt(a) };
}
