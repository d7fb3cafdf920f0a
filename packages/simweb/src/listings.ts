// Listing pages, feeds and sitemap indexes: the cheap change detectors of a monitoring crawl.
// A listing host shows its pages as items on category pages (/list/<k>: each item's link plus a
// summary, price and stock, that changes with the item), an RSS feed of its most recently changed
// pages (/feed.xml, pubDate = the page's version stamp), and a sitemap index (/sitemap-index.xml,
// named by a Sitemap line in robots.txt) over a sitemap of its listing pages.
//
// Harsher than a kind web: not every change of an item shows on its listing (a description edit
// leaves price and stock alone; `visibleShare` of the change instants do), and a listing can be
// served from a cache that lags the items (`lagMs`). Ground truth is in the page change model:
// summaryVersionAt says which summary a listing showed at any instant.
import { changesInEpoch, type ChangeSpec } from "./change.js";
import { hashString, mix, unit } from "./prng.js";
import type { HostModel, PageSpec, World } from "./world.js";

export interface ListingsConfig {
  /** Share of hosts with listing pages, a feed and a sitemap index (0 = none, the default). */
  hostShare: number;
  /** Items per listing page. */
  itemsPerListing: number;
  /** Share of an item's content changes that change its summary on the listing. */
  visibleShare: number;
  /** How far behind the items a listing (and the feed) is served, ms (a page cache). */
  lagMs: number;
  /** Entries in the feed (the most recently changed pages among the first feedScan items). */
  feedEntries: number;
  /** Items a feed looks at (bounds the work of one feed render on huge hosts). */
  feedScan: number;
}

export const DEFAULT_LISTINGS: ListingsConfig = { hostShare: 0, itemsPerListing: 20, visibleShare: 0.7, lagMs: 0, feedEntries: 20, feedScan: 2000 };

/** Listing pages per host at most (each holds itemsPerListing items). */
const MAX_LISTINGS = 5000;
const MAX_WALK_BACK = 256;

export class Listings {
  constructor(private readonly world: World, private readonly cfg: ListingsConfig = { ...DEFAULT_LISTINGS, ...world.config.listings }) {}

  /** Whether this host has listing pages (a hash of the host, so the world's other draws are unchanged). */
  has(h: HostModel): boolean {
    return this.cfg.hostShare > 0 && unit(mix(h.seed, 0x11a7)) < this.cfg.hostShare;
  }

  /** Number of listing pages of a listing host. */
  count(h: HostModel): number {
    return Math.min(MAX_LISTINGS, Math.ceil(Math.max(0, h.info.pageCount - 1) / this.cfg.itemsPerListing));
  }

  /** The HTML pages shown as items on listing k (ids k*N+1 .. (k+1)*N; other kinds are not items). */
  items(h: HostModel, k: number): PageSpec[] {
    const n = this.cfg.itemsPerListing;
    const out: PageSpec[] = [];
    for (let id = k * n + 1; id <= (k + 1) * n && id < h.info.pageCount; id++) {
      const p = this.world.page(h, id);
      if (p.kind === "html") out.push(p);
    }
    return out;
  }

  /** Whether the content change at instant t changes the item's summary. */
  private visible(spec: ChangeSpec, t: number): boolean {
    return unit(mix(spec.seed, 0x5a3, t)) < this.cfg.visibleShare;
  }

  /**
   * Ground truth: the version of the summary a listing shows for this page at time t (served, so
   * the lag applies): the last visible change at or before t - lagMs, or the page's base stamp.
   */
  summaryVersionAt(p: PageSpec, t: number): number {
    const spec = p.change;
    const at = t - this.cfg.lagMs;
    if (!Number.isFinite(spec.intervalMs)) return spec.baseMs;
    const k0 = Math.floor((at - spec.phaseMs) / spec.intervalMs);
    for (let k = k0; k > k0 - MAX_WALK_BACK; k--) {
      const times = changesInEpoch(spec, k);
      for (let i = times.length - 1; i >= 0; i--) {
        const ti = times[i] as number;
        if (ti <= at && this.visible(spec, ti)) return ti;
      }
    }
    return spec.baseMs;
  }

  /** The summary text of an item at a summary version (price and stock from the version). */
  static summaryText(p: PageSpec, version: number): string {
    const h = hashString(String(version), p.seed);
    return `$${(5 + (h % 50_000) / 100).toFixed(2)} · ${(h >>> 16) % 40} in stock`;
  }

  /** Which listing page (k) a path names on this host, or null. */
  listingIndex(h: HostModel, path: string): number | null {
    const m = /^\/list\/(\d{1,6})$/.exec(path);
    if (!m) return null;
    const k = Number(m[1]);
    return k < this.count(h) ? k : null;
  }

  /**
   * The body for a listing-host path this module serves (/list/<k>, /feed.xml, /sitemap-index.xml,
   * /sitemap-lists.xml), or null.
   */
  render(h: HostModel, path: string, now: number): { contentType: string; body: string } | null {
    if (!this.has(h)) return null;
    const o = this.world.origin(h);
    const k = this.listingIndex(h, path);
    if (k !== null) return { contentType: "text/html; charset=utf-8", body: this.listingHtml(h, k, now) };
    if (path === "/feed.xml") return { contentType: "application/rss+xml", body: this.feed(h, now) };
    if (path === "/sitemap-index.xml") {
      const maps = [`${o}/sitemap-lists.xml`, ...(h.info.robots === "sitemap" ? [`${o}/sitemap.xml`] : [])];
      const body = maps.map((u) => `  <sitemap><loc>${u}</loc></sitemap>`).join("\n");
      return { contentType: "application/xml", body: `<?xml version="1.0" encoding="UTF-8"?>\n<sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${body}\n</sitemapindex>\n` };
    }
    if (path === "/sitemap-lists.xml") {
      const body = Array.from({ length: this.count(h) }, (_, i) => `  <url><loc>${o}/list/${i}</loc></url>`).join("\n");
      return { contentType: "application/xml", body: `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${body}\n</urlset>\n` };
    }
    return null;
  }

  /** Extra robots.txt lines of a listing host: its sitemap index. */
  robotsLines(h: HostModel): string {
    return this.has(h) ? `\nSitemap: ${this.world.origin(h)}/sitemap-index.xml\n` : "";
  }

  private listingHtml(h: HostModel, k: number, now: number): string {
    const items = this.items(h, k).map((p) => {
      const v = this.summaryVersionAt(p, now);
      return `<li class="item"><a href="${p.url.replace(/&/g, "&amp;")}">${p.slug.replace(/-/g, " ")}</a> <span class="summary">${Listings.summaryText(p, v)}</span></li>`;
    });
    const next = k + 1 < this.count(h) ? `<a rel="next" href="/list/${k + 1}">next</a>` : "";
    return `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>Listing ${k} — ${h.info.name}</title>\n<link rel="alternate" type="application/rss+xml" title="Latest" href="/feed.xml">\n</head>\n<body><h1>Listing ${k}</h1>\n<ul class="listing">\n${items.join("\n")}\n</ul>\n${next}\n</body></html>\n`;
  }

  /** Ground truth of the feed served at `now`: its entries (page and version stamp), newest first. */
  feedAt(h: HostModel, now: number): Array<{ p: PageSpec; v: number }> {
    const at = now - this.cfg.lagMs;
    const scan = Math.min(h.info.pageCount - 1, this.cfg.feedScan);
    const entries: Array<{ p: PageSpec; v: number }> = [];
    for (let id = 1; id <= scan; id++) {
      const p = this.world.page(h, id);
      if (p.kind !== "html" || !Number.isFinite(p.change.intervalMs)) continue;
      entries.push({ p, v: this.world.pageVersionAt(p.url, at) });
    }
    entries.sort((a, b) => b.v - a.v);
    return entries.slice(0, this.cfg.feedEntries);
  }

  /** RSS 2.0 of the most recently changed pages (pubDate = their version stamp, as served). */
  private feed(h: HostModel, now: number): string {
    const items = this.feedAt(h, now).map(
      ({ p, v }) => `  <item><title>${p.slug}</title><link>${p.url.replace(/&/g, "&amp;")}</link><guid>${p.url.replace(/&/g, "&amp;")}#${v}</guid><pubDate>${new Date(Math.floor(v / 1000) * 1000).toUTCString()}</pubDate></item>`,
    );
    return `<?xml version="1.0" encoding="UTF-8"?>\n<rss version="2.0"><channel><title>${h.info.name}</title><link>${this.world.origin(h)}/</link>\n${items.join("\n")}\n</channel></rss>\n`;
  }
}
