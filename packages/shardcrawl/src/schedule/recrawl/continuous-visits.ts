// Continuous mode: what fetchers and parsers do per visit. A URL with a stored copy in the re-crawl history is a
// revisit, so it is fetched conditionally (If-None-Match / If-Modified-Since, unless its host is
// known to ignore validators); a 304 answer is recorded in the history here and never reaches
// the parse queue; a parsed 2xx page is recorded by its parser (content digest under the
// content rules) before the page is acknowledged. Verdicts come from the node-wide validator counters in Redis and are cached
// per host for a short while (they change slowly; a cache hit saves a round trip per fetch).
import { FrontierKeys } from "../../frontier/index.js";
import type { Redis } from "ioredis";
import type { FetchSuccess } from "../../fetch/http-client.js";
import type { FetchedPage } from "../../shared/types.js";
import { decodeBody } from "../../parse/decode-body.js";
import { RecrawlHistoryStore, ValueTiers, hostVerdict, isSitemap, recordResponse, revisitHeaders, sitemapLastmods, type ValidatorVerdict } from "./index.js";
import { feedEntries, feedLinks, isFeed } from "./feeds.js";
import { ListingRules, summaryDigest } from "./listing-rules.js";
import { isSitemapIndex, sitemapIndexLocs, sitemapLocs } from "./sitemap.js";
import type { RecrawlNodeConfig } from "./continuous-config.js";
import { budgetPerDay } from "./continuous-config.js";

const VERDICT_TTL_MS = 30_000;
/** Sitemaps kept in the hint stream (P rhint) until the node's re-crawl loop reads them. */
const HINT_STREAM_CAP = 1_000;
/** Largest decoded sitemap read (the protocol allows 50 MB; 50,000 URLs fit well within this). */
const MAX_SITEMAP_BYTES = 16 * 1024 * 1024;

/**
 * Redis stream of hints from sitemaps, sitemap indexes and feeds: fields s (document URL), k (kind:
 * sitemap, index, feed), h (JSON [[url, date ms or 0], ...]; an index's child sitemaps with 0).
 */
export const hintStreamKey = (prefix: string) => new FrontierKeys(prefix).recrawlHints;
/** Redis stream of listing reads: fields u (listing URL), t (its fetch time, ms), c (JSON changed item URLs), n (new items), i (items). */
export const listingStreamKey = (prefix: string) => new FrontierKeys(prefix).recrawlListingReads;
/** Hash per host: item path+query -> 8-byte digest of its summary on the listing last read. */
export const listingItemsKey = (prefix: string, host: string) => new FrontierKeys(prefix).recrawlListingItems(host);
/** Hash: host -> JSON list of the feed URLs its pages announce. */
export const feedsKey = (prefix: string) => new FrontierKeys(prefix).recrawlFeeds;
/** Hash of fetches made outside the schedule, to be charged to the budget (field robots). */
export const chargesKey = (prefix: string) => new FrontierKeys(prefix).recrawlCharges;
/** Hash: URL queued at once from a feed or sitemap -> which copy was fetched first (see RecrawlVisits.duplicate). */
export const feedQueuedKey = (prefix: string) => new FrontierKeys(prefix).recrawlFeedQueued;
/** Listing reads kept in their stream until the loop reads them. */
const LISTING_STREAM_CAP = 10_000;
/** Pages per host (per process) searched for feed links; a site announces its feeds everywhere or nowhere. */
const FEED_SCAN_PAGES = 3;
const FEED_SCAN_HOSTS_MAX = 10_000;
/** A listing whose body is larger than this is not read (a listing is a page of summaries). */
const MAX_LISTING_BYTES = 4 * 1024 * 1024;
const VERDICT_CACHE_MAX = 10_000;

export class RecrawlVisits {
  private readonly store: RecrawlHistoryStore;
  private readonly tiers: ValueTiers;
  private readonly verdicts = new Map<string, { verdict: ValidatorVerdict; until: number }>();
  private readonly listings: ListingRules;
  /** Per host: pages searched for feed links so far (bounded: the map starts over when full). */
  private readonly feedScans = new Map<string, number>();

  constructor(private readonly redis: Redis, private readonly prefix: string, private readonly rc: RecrawlNodeConfig) {
    this.store = new RecrawlHistoryStore(redis, prefix, rc.outcomeStreamCap);
    this.tiers = new ValueTiers(rc.value);
    this.listings = new ListingRules(rc.listings ?? []);
  }

  static forConfig(redis: Redis, config: { prefix: string; recrawl?: RecrawlNodeConfig }): RecrawlVisits | undefined {
    return config.recrawl ? new RecrawlVisits(redis, config.prefix, config.recrawl) : undefined;
  }

  private async verdict(host: string): Promise<ValidatorVerdict> {
    const hit = this.verdicts.get(host);
    if (hit && hit.until > Date.now()) return hit.verdict;
    const verdict = await hostVerdict(this.store, host);
    if (this.verdicts.size >= VERDICT_CACHE_MAX) this.verdicts.delete(this.verdicts.keys().next().value!);
    this.verdicts.set(host, { verdict, until: Date.now() + VERDICT_TTL_MS });
    return verdict;
  }

  /** Conditional headers for this URL (empty when we hold no copy of it). */
  async headersFor(url: string, host: string): Promise<Record<string, string>> {
    const stored = await this.store.get(url);
    return stored ? revisitHeaders(stored, await this.verdict(host)) : {};
  }

  /** Records a 304 answer in the URL's history. False when there was no stored copy to confirm. */
  async recordNotModified(res: FetchSuccess): Promise<boolean> {
    const r = await recordResponse(this.store, {
      url: res.url, atMs: Date.parse(res.fetchedAt), status: 304, bytes: res.body.length, requestHeaders: res.requestHeaders,
      headers: res.headers, tier: this.tiers.tierOf(res.url), unit: budgetPerDay(this.rc).unit, creditsByType: this.rc.creditsByType,
    });
    return r !== null;
  }

  /**
   * Records a parsed page (2xx with a content digest; anything else is not kept fresh). Returns
   * whether the content changed since our copy (null on a first visit or when not recorded).
   */
  async recordPage(page: FetchedPage, contentDigest: string | undefined, bodyBytes = page.body.byteLength, loadBody?: () => Buffer): Promise<boolean | null> {
    if (page.status < 200 || page.status >= 300 || contentDigest === undefined) return null;
    // The body may be spooled to disk: read back only for the few pages searched for feed links
    // and for listings.
    let full: FetchedPage | undefined;
    const withBody = (): FetchedPage => (full ??= loadBody ? { ...page, body: loadBody() } : page);
    await this.noteFeeds(page, withBody);
    // A listing page is a detector, read on its own schedule, not a page kept fresh for itself.
    if (await this.readListing(page, withBody)) return null;
    const r = await recordResponse(this.store, {
      url: page.url, atMs: Date.parse(page.fetchedAt), status: page.status, bytes: bodyBytes, requestHeaders: page.requestHeaders,
      headers: page.headers, digest: contentDigest, tier: this.tiers.tierOf(page.url), unit: budgetPerDay(this.rc).unit, creditsByType: this.rc.creditsByType,
    });
    return r?.changed ?? null;
  }

  /**
   * Whether this first-attempt lease is the second copy of a URL the loop queued from a feed or
   * sitemap (P rfq): the entry's own copy (queued like a planned visit, depth 0) and a discovery
   * copy (depth >= 1) may both be queued. The mark says which kind was fetched first ("f" planned,
   * "d" discovery); the other kind is then not fetched, and the mark goes. Later planned visits
   * (depth 0 after "f": revisits, listing reads) are fetched as usual. A host has one request in
   * flight by default, so its two copies are not leased at the same moment.
   */
  async duplicate(url: string, depth: number): Promise<boolean> {
    const key = feedQueuedKey(this.prefix);
    const mark = await this.redis.hget(key, url);
    if (mark === null) return false;
    const kind = depth === 0 ? "f" : "d";
    if (mark === "0") {
      await this.redis.hset(key, url, kind);
      return false;
    }
    if (mark === kind) return false;
    await this.redis.hdel(key, url);
    return true;
  }

  /** A robots.txt fetch (the fetcher's): counted, and charged to the budget by the loop. */
  async chargeRobots(): Promise<void> {
    await this.redis.hincrby(chargesKey(this.prefix), "robots", 1);
  }

  private text(page: FetchedPage, max: number): string | null {
    const enc = page.headers.filter(([k]) => k.toLowerCase() === "content-encoding").map(([, v]) => v);
    const decoded = decodeBody(page.body, enc, max);
    return decoded.ok ? decoded.body.toString("utf8") : null;
  }

  /** Feed links of the first pages of each host go to P rfeeds (the loop reads the feeds). */
  private async noteFeeds(page: FetchedPage, withBody: () => FetchedPage): Promise<void> {
    let host: string;
    try {
      host = new URL(page.url).host;
    } catch {
      return;
    }
    const n = this.feedScans.get(host) ?? 0;
    // Listing pages are where sites announce feeds most; they are few, so each is searched.
    if ((n >= FEED_SCAN_PAGES && !this.listings.for(page.url)) || !/html/i.test(page.headers.find(([k]) => k.toLowerCase() === "content-type")?.[1] ?? "")) return;
    if (this.feedScans.size >= FEED_SCAN_HOSTS_MAX) this.feedScans.clear();
    this.feedScans.set(host, n + 1);
    const html = this.text(withBody(), MAX_LISTING_BYTES);
    if (html === null) return;
    const links = feedLinks(html, page.url).filter((u) => new URL(u).host === host); // another host's feed is not ours to read
    if (links.length > 0) await this.redis.hset(feedsKey(this.prefix), host, JSON.stringify(links));
  }

  /**
   * A listing page: its items' summaries are compared with those of the last read; the items whose
   * summary changed go to the loop (stream P rlisting), which marks them stale. False when no
   * listing rule applies.
   */
  private async readListing(page: FetchedPage, withBody: () => FetchedPage): Promise<boolean> {
    const rule = this.listings.for(page.url);
    if (!rule) return false;
    const html = this.text(withBody(), MAX_LISTING_BYTES);
    if (html === null) return true;
    const items = rule.extract(html, page.url);
    const byHost = new Map<string, Array<{ url: string; field: string; digest: Buffer }>>();
    for (const it of items) {
      const u = new URL(it.url);
      const list = byHost.get(u.host) ?? [];
      list.push({ url: it.url, field: u.pathname + u.search, digest: summaryDigest(it.summary) });
      byHost.set(u.host, list);
    }
    const changed: string[] = [];
    let fresh = 0;
    for (const [host, list] of byHost) {
      const key = listingItemsKey(this.prefix, host);
      const old = await this.redis.hmgetBuffer(key, ...list.map((x) => x.field));
      const writes: Array<string | Buffer> = [];
      list.forEach((x, i) => {
        const before = old[i];
        if (before && before.equals(x.digest)) return;
        if (before) changed.push(x.url);
        else fresh++;
        writes.push(x.field, x.digest);
      });
      if (writes.length > 0) await this.redis.hset(key, ...writes);
    }
    await this.redis.xadd(listingStreamKey(this.prefix), "MAXLEN", "~", LISTING_STREAM_CAP, "*", "u", page.url, "t", String(Date.parse(page.fetchedAt)), "c", JSON.stringify(changed), "n", String(fresh), "i", String(items.length));
    return true;
  }

  /**
   * A fetched sitemap, sitemap index or feed (2xx XML): its entries go to the hint stream for the
   * re-crawl loop (dates as change hints, unknown URLs as discovery, an index's children as
   * sitemaps to read). Returns the number of entries (0 for anything else).
   */
  async recordSitemap(page: FetchedPage): Promise<number> {
    if (page.status < 200 || page.status >= 300) return 0;
    const text = this.text(page, MAX_SITEMAP_BYTES);
    if (text === null) return 0;
    let kind: string;
    let pairs: Array<[string, number]>;
    if (isSitemap(text)) {
      kind = "sitemap";
      const dated = new Map(sitemapLastmods(text).map((h) => [h.url, h.lastmodMs]));
      pairs = sitemapLocs(text).map((u) => [u, dated.get(u) ?? 0]);
    } else if (isSitemapIndex(text)) {
      kind = "index";
      pairs = sitemapIndexLocs(text).map((u) => [u, 0]);
    } else if (isFeed(text)) {
      kind = "feed";
      pairs = feedEntries(text, page.url).map((e) => [e.url, e.dateMs ?? 0]);
    } else return 0;
    if (pairs.length === 0) return 0;
    await this.redis.xadd(hintStreamKey(this.prefix), "MAXLEN", "~", HINT_STREAM_CAP, "*", "s", page.url, "k", kind, "h", JSON.stringify(pairs));
    return pairs.length;
  }
}
