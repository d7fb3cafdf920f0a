// Compact queue elements. A host's queue holds millions of URLs on a hot host, so an element is
// as short as it can be while still giving back the exact URL. Forms (all readable, so queues
// written by an earlier version are still served):
//   "\x01".."\x08" + path+query WITHOUT its leading "/": the URL has the host's stored origin,
//       depth 1..8, no hops, first attempt (the common case). The depth byte stands in for the
//       "/", so such a URL costs exactly its raw path+query bytes (since issue 6, session 3).
//   "/" + path+query + suffix: the URL has the host's stored origin (any depth/hops/attempt).
//   full URL + suffix: the URL has another origin than the host's (e.g. http vs https).
// Suffix: nothing when depth, hops and attempt are 0; ONE byte \x01..\x08 for depth 1..8 with no
// hops and no attempt; else "\t<depth>[,<hops>[,<attempt>]]". A normalized URL never contains a
// control character (invalidLinkReason refuses them), so the forms separate unambiguously: a
// leading control byte, a leading "/", or a scheme. The Lua scripts decide relative vs full (they
// know the host's stored origin) and expand elements to full URLs (lib.lua el_full); this module
// does the client side.

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

/**
 * The element of a link whose URL has an origin (the Lua side swaps in the full URL when the
 * host's stored origin differs): `rest` is the path+query starting with "/".
 */
export function encodeRelative(rest: string, depth: number, hops: number, attempt: number): string {
  if (attempt === 0 && hops === 0 && depth >= 1 && depth <= MAX_BYTE_DEPTH) return String.fromCharCode(depth) + rest.slice(1);
  return rest + encodeSuffix(depth, hops, attempt);
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
 * starting with "/" (prefix the host's stored origin, field o of P h:<host>).
 */
export function decodeElement(element: string): DecodedElement {
  const first = element.charCodeAt(0);
  if (first >= 1 && first <= MAX_BYTE_DEPTH) return { url: `/${element.slice(1)}`, depth: first, hops: 0, attempt: 0 };
  const last = element.charCodeAt(element.length - 1);
  if (last >= 1 && last <= MAX_BYTE_DEPTH) return { url: element.slice(0, -1), depth: last, hops: 0, attempt: 0 };
  const tab = element.indexOf("\t");
  if (tab < 0) return { url: element, depth: 0, hops: 0, attempt: 0 };
  const [d, h, a] = element.slice(tab + 1).split(",");
  return { url: element.slice(0, tab), depth: nonNegativeInt(d), hops: nonNegativeInt(h), attempt: nonNegativeInt(a) };
}
