// Continuous mode (--continuous), what fetchers and parsers do per visit. A URL with a stored copy in the re-crawl history is a
// revisit, so it is fetched conditionally (If-None-Match / If-Modified-Since, unless its host is
// known to ignore validators); a 304 answer is recorded in the history here and never reaches
// the parse queue; a parsed 2xx page is recorded by its parser (content digest under the
// content rules) before the page is acknowledged. Verdicts come from the node-wide validator counters in Redis and are cached
// per host for a short while (they change slowly; a cache hit saves a round trip per fetch).
import type { Redis } from "ioredis";
import type { FetchSuccess } from "../fetch/http-client.js";
import type { FetchedPage } from "../shared/types.js";
import { decodeBody } from "../parse/decode-body.js";
import { RecrawlHistoryStore, ValueTiers, hostVerdict, isSitemap, recordResponse, revisitHeaders, sitemapLastmods, type ValidatorVerdict } from "../schedule/recrawl/index.js";
import type { NodeConfig } from "./config.js";
import type { RecrawlNodeConfig } from "./recrawl-config.js";
import { budgetPerDay } from "./recrawl-config.js";

const VERDICT_TTL_MS = 30_000;
/** Sitemaps kept in the hint stream (P rhint) until the node's re-crawl loop reads them. */
const HINT_STREAM_CAP = 1_000;
/** Largest decoded sitemap read (the protocol allows 50 MB; 50,000 URLs fit well within this). */
const MAX_SITEMAP_BYTES = 16 * 1024 * 1024;

/** Redis stream of sitemap lastmod hints: fields s (sitemap URL), h (JSON [[url, lastmod ms], ...]). */
export const hintStreamKey = (prefix: string) => `${prefix}rhint`;
const VERDICT_CACHE_MAX = 10_000;

export class RecrawlVisits {
  private readonly store: RecrawlHistoryStore;
  private readonly tiers: ValueTiers;
  private readonly verdicts = new Map<string, { verdict: ValidatorVerdict; until: number }>();

  constructor(private readonly redis: Redis, private readonly prefix: string, private readonly rc: RecrawlNodeConfig) {
    this.store = new RecrawlHistoryStore(redis, prefix, rc.outcomeStreamCap);
    this.tiers = new ValueTiers(rc.value);
  }

  static forConfig(redis: Redis, config: NodeConfig): RecrawlVisits | undefined {
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
  async recordPage(page: FetchedPage, contentDigest: string | undefined, bodyBytes = page.body.byteLength): Promise<boolean | null> {
    if (page.status < 200 || page.status >= 300 || contentDigest === undefined) return null;
    const r = await recordResponse(this.store, {
      url: page.url, atMs: Date.parse(page.fetchedAt), status: page.status, bytes: bodyBytes, requestHeaders: page.requestHeaders,
      headers: page.headers, digest: contentDigest, tier: this.tiers.tierOf(page.url), unit: budgetPerDay(this.rc).unit, creditsByType: this.rc.creditsByType,
    });
    return r?.changed ?? null;
  }

  /**
   * A fetched sitemap (2xx XML with a <urlset>): its lastmod entries go to the hint stream for the
   * re-crawl loop. Returns the number of hints (0 for anything else).
   */
  async recordSitemap(page: FetchedPage): Promise<number> {
    if (page.status < 200 || page.status >= 300) return 0;
    const enc = page.headers.filter(([k]) => k.toLowerCase() === "content-encoding").map(([, v]) => v);
    const decoded = decodeBody(page.body, enc, MAX_SITEMAP_BYTES);
    if (!decoded.ok) return 0;
    const text = decoded.body.toString("utf8");
    if (!isSitemap(text)) return 0;
    const hints = sitemapLastmods(text);
    if (hints.length === 0) return 0;
    await this.redis.xadd(hintStreamKey(this.prefix), "MAXLEN", "~", HINT_STREAM_CAP, "*", "s", page.url, "h", JSON.stringify(hints.map((h) => [h.url, h.lastmodMs])));
    return hints.length;
  }
}
