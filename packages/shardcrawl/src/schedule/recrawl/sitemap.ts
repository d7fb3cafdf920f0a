// Sitemap <lastmod> as a change hint (cheap signals before full fetches): a sitemap lists a site's
// URLs with the time each last changed; a lastmod newer than the copy we hold says the page IS
// stale, without fetching it. The sitemap protocol is a flat, namespace-free-in-practice list of
// <url><loc>..</loc><lastmod>..</lastmod></url>; a scan for those two elements is enough and
// keeps an XML parser dependency (and its entity/DTD surface) out of the parser process.
// Sitemap index files (<sitemapindex>) name further sitemaps; the node follows them, bounded per
// host and round (continuous-loop.ts).

/** The protocol's limit on URLs per sitemap file. */
export const MAX_SITEMAP_URLS = 50_000;

export interface LastmodHint {
  url: string;
  lastmodMs: number;
}

const URL_RE = /<url\b[^>]*>([\s\S]*?)<\/url\s*>/gi;
const LOC_RE = /<loc\b[^>]*>\s*([^<]+?)\s*<\/loc\s*>/i;
const LASTMOD_RE = /<lastmod\b[^>]*>\s*([^<]+?)\s*<\/lastmod\s*>/i;

function unescapeXml(s: string): string {
  return s.replace(/&(amp|lt|gt|quot|apos);/g, (_, e: string) => ({ amp: "&", lt: "<", gt: ">", quot: '"', apos: "'" })[e] as string);
}

/** Whether a body looks like a sitemap url set (cheap test before scanning it). */
export function isSitemap(text: string): boolean {
  return /<urlset\b/i.test(text.slice(0, 4096));
}

/** Child sitemaps an index may name at most (the protocol allows 50,000; we follow few). */
export const MAX_INDEX_SITEMAPS = 100;
const SITEMAP_RE = /<sitemap\b[^>]*>([\s\S]*?)<\/sitemap\s*>/gi;

/** Whether a body looks like a sitemap index file. */
export function isSitemapIndex(text: string): boolean {
  return /<sitemapindex\b/i.test(text.slice(0, 4096));
}

/** The child sitemap URLs of a sitemap index (at most `max`). */
export function sitemapIndexLocs(xml: string, max = MAX_INDEX_SITEMAPS): string[] {
  const out: string[] = [];
  for (const m of xml.matchAll(SITEMAP_RE)) {
    if (out.length >= max) break;
    const loc = LOC_RE.exec(m[1] as string)?.[1];
    if (loc) out.push(unescapeXml(loc));
  }
  return out;
}

/** Every <loc> of a sitemap url set (for discovery), at most `max`. */
export function sitemapLocs(xml: string, max = MAX_SITEMAP_URLS): string[] {
  const out: string[] = [];
  for (const m of xml.matchAll(URL_RE)) {
    if (out.length >= max) break;
    const loc = LOC_RE.exec(m[1] as string)?.[1];
    if (loc) out.push(unescapeXml(loc));
  }
  return out;
}

/**
 * The (loc, lastmod) pairs of a sitemap; entries without a usable lastmod (W3C datetime: a date,
 * or a date-time with a time zone) are skipped. At most `max` entries.
 */
export function sitemapLastmods(xml: string, max = MAX_SITEMAP_URLS): LastmodHint[] {
  const out: LastmodHint[] = [];
  for (const m of xml.matchAll(URL_RE)) {
    if (out.length >= max) break;
    const body = m[1] as string;
    const loc = LOC_RE.exec(body)?.[1];
    const lastmod = LASTMOD_RE.exec(body)?.[1];
    if (!loc || !lastmod) continue;
    if (!/^\d{4}-\d{2}-\d{2}(T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2}))?$/.test(lastmod)) continue;
    const t = Date.parse(lastmod);
    if (Number.isNaN(t)) continue;
    out.push({ url: unescapeXml(loc), lastmodMs: t });
  }
  return out;
}

/**
 * Whether a hint says our copy is stale: the lastmod is newer than the Last-Modified of the copy
 * we hold (the server's own clock on both sides), or, without one, newer than our fetch of it.
 * Compared in whole seconds (Last-Modified has no finer resolution).
 */
export function hintSaysStale(lastmodMs: number, copy: { lastModifiedMs?: number; lastVisitMs: number }): boolean {
  const ref = copy.lastModifiedMs ?? copy.lastVisitMs;
  return Math.floor(lastmodMs / 1000) > Math.floor(ref / 1000);
}
