// Writes a canonical link target in one of the many spellings real HTML uses. Every spelling
// resolves back to the canonical URL under canonicalUrl() (WHATWG + unreserved-escape decoding);
// the HTML tests check exactly that.
import type { Rng } from "./prng.js";

export interface SpellContext {
  /** The document's base URL (its <base href> or its own URL). */
  base: URL;
  /** Raw non-ASCII in URLs is only safe where the page's bytes decode as declared. */
  allowRawNonAscii: boolean;
}

const FRAGMENTS = ["top", "comments", "section-2", "main", "", "ref=1", "%C3%A9t%C3%A9"];

/** Relative reference from the base's directory to target's path (both same-origin paths). */
function relativePath(basePath: string, targetPath: string): string {
  const baseSegs = basePath.split("/").slice(1, -1); // directories of the base
  const targetSegs = targetPath.split("/").slice(1);
  let common = 0;
  while (common < baseSegs.length && common < targetSegs.length - 1 && baseSegs[common] === targetSegs[common]) common++;
  const up = baseSegs.length - common;
  const rest = targetSegs.slice(common).join("/");
  const rel = "../".repeat(up) + rest;
  if (rel === "") return "./";
  // A first segment with a colon would parse as a scheme; our paths have none, but stay safe.
  return /^[^/]*:/.test(rel) ? `./${rel}` : rel;
}

/** Percent-encodes one unreserved character of the path (e.g. ~ as %7E), which must be decoded back. */
function encodeOneUnreserved(path: string, r: Rng): string {
  const tilde = path.indexOf("~");
  if (tilde >= 0) return `${path.slice(0, tilde)}%7E${path.slice(tilde + 1)}`;
  const candidates: number[] = [];
  for (let i = 1; i < path.length; i++) if (/[a-z_-]/.test(path[i] as string)) candidates.push(i);
  if (candidates.length === 0) return path;
  const i = r.pick(candidates);
  const hex = (path.charCodeAt(i)).toString(16).toUpperCase();
  return `${path.slice(0, i)}%${hex}${path.slice(i + 1)}`;
}

/** Returns the href value (not yet HTML-escaped) for a canonical absolute URL. */
export function spell(target: string, ctx: SpellContext, r: Rng): string {
  const t = new URL(target);
  const sameOrigin = t.origin === ctx.base.origin;
  const sameScheme = t.protocol === ctx.base.protocol;
  let path = t.pathname;
  if (path.includes("~") ? r.chance(0.5) : r.chance(0.05)) path = encodeOneUnreserved(path, r);
  if (ctx.allowRawNonAscii && path.includes("%C3") && r.chance(0.5)) path = decodeURI(path);
  const pq = path + t.search;
  const port = t.protocol === "https:" ? ":443" : ":80";
  const x = r.next();
  let href: string;
  if (sameOrigin && x < 0.3) href = pq; // root-relative
  else if (sameOrigin && x < 0.55) {
    // relative to the base's directory; same path with another query can be just "?query"
    const basePath = ctx.base.pathname;
    href = path === basePath && t.search !== "" && r.chance(0.5) ? t.search : relativePath(basePath, path) + t.search;
    if (r.chance(0.15) && !href.startsWith("?") && !href.startsWith("../")) href = `./${href === "./" ? "" : href}`;
  } else if (sameOrigin && x < 0.62) href = r.chance(0.5) ? `/./${pq.slice(1)}` : `/${r.pick(["a", "x", "zz"])}/..${pq}`; // dot segments
  else if (sameScheme && x < 0.72) href = `//${t.host}${pq}`; // protocol-relative
  else if (x < 0.78) href = `${t.protocol}//${t.host.toUpperCase()}${pq}`;
  else if (x < 0.84) href = `${t.protocol}//${t.host}${port}${pq}`;
  else if (x < 0.87) href = `${t.protocol.toUpperCase()}//${t.host}${pq}`;
  else href = `${t.protocol}//${t.host}${pq}`;
  if (r.chance(0.08)) href += `#${r.pick(FRAGMENTS)}`;
  if (r.chance(0.02)) href = ` ${href} `; // attribute whitespace is stripped by URL parsing
  return href;
}

/** HTML-escapes an href for an attribute, varying how "&" is written (all decode to "&"). */
export function escapeHref(href: string, r: Rng): string {
  if (!href.includes("&")) return href;
  const x = r.next();
  // Raw "&" is only safe because no generated parameter name is a legacy entity prefix.
  const amp = x < 0.75 ? "&amp;" : x < 0.9 ? "&" : "&#38;";
  return href.replace(/&/g, amp);
}
