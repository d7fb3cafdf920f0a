// RSS/Atom feeds as change hints and discovery: a site's feed lists its newest or most recently
// updated entries with a date, so an entry dated after our copy says the page is stale, and an
// entry we have never fetched is a new page to fetch now. Feeds are found in the <link
// rel="alternate"> of the pages we fetch. htmlparser2's parseFeed reads both RSS and Atom.
import { parseFeed } from "htmlparser2";

export interface FeedEntry {
  url: string;
  /** The entry's date (updated, else published), or undefined. */
  dateMs: number | undefined;
}

/** Entries read from one feed at most. */
export const MAX_FEED_ENTRIES = 1000;
/** Feed links kept per page. */
const MAX_FEED_LINKS = 4;
/** The part of a page searched for feed links: the head of any sane page fits. */
const HEAD_CHARS = 64 * 1024;

const LINK_RE = /<link\b[^>]*>/gi;
const ATTR_RE = /([a-z-]+)\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi;

/** Whether a body looks like an RSS or Atom feed. */
export function isFeed(text: string): boolean {
  const head = text.slice(0, 4096);
  return /<rss\b/i.test(head) || /<feed\b[^>]*xmlns="http:\/\/www\.w3\.org\/2005\/Atom"/i.test(head) || /<rdf:RDF\b/i.test(head);
}

/** Feed URLs a page announces (<link rel="alternate" type="application/rss+xml|atom+xml">), absolute. */
export function feedLinks(html: string, pageUrl: string): string[] {
  const head = html.slice(0, HEAD_CHARS);
  const end = head.search(/<\/head\s*>/i);
  const out: string[] = [];
  for (const m of (end >= 0 ? head.slice(0, end) : head).matchAll(LINK_RE)) {
    const attrs: Record<string, string> = {};
    for (const a of m[0].matchAll(ATTR_RE)) attrs[(a[1] as string).toLowerCase()] = a[2] ?? a[3] ?? a[4] ?? "";
    if (!(attrs.rel ?? "").toLowerCase().split(/\s+/).includes("alternate")) continue;
    if (!/^application\/(rss|atom)\+xml\b/i.test(attrs.type ?? "") || !attrs.href) continue;
    try {
      const u = new URL(attrs.href.replace(/&amp;/g, "&"), pageUrl);
      if ((u.protocol === "http:" || u.protocol === "https:") && !out.includes(u.href)) out.push(u.href);
    } catch {
      continue;
    }
    if (out.length >= MAX_FEED_LINKS) break;
  }
  return out;
}

/** The entries of an RSS/Atom feed (links resolved against the feed's URL); [] when it is not one. */
export function feedEntries(xml: string, feedUrl: string, max = MAX_FEED_ENTRIES): FeedEntry[] {
  let feed;
  try {
    feed = parseFeed(xml, { xmlMode: true });
  } catch {
    return [];
  }
  if (!feed) return [];
  const out: FeedEntry[] = [];
  for (const item of feed.items) {
    if (out.length >= max) break;
    if (!item.link) continue;
    let url: string;
    try {
      const u = new URL(item.link.trim(), feedUrl);
      if (u.protocol !== "http:" && u.protocol !== "https:") continue;
      url = u.href;
    } catch {
      continue;
    }
    const t = item.pubDate?.getTime();
    out.push({ url, dateMs: t !== undefined && Number.isFinite(t) ? t : undefined });
  }
  return out;
}
