// Continuous mode (issue 7), what fetchers and parsers do per visit. A URL with a stored copy in the re-crawl history is a
// revisit, so it is fetched conditionally (If-None-Match / If-Modified-Since, unless its host is
// known to ignore validators); a 304 answer is recorded in the history here and never reaches
// the parse queue; a parsed 2xx page is recorded by its parser (content digest under the
// content rules) before the page is acknowledged. Verdicts come from the node-wide validator counters in Redis and are cached
// per host for a short while (they change slowly; a cache hit saves a round trip per fetch).
import type { Redis } from "ioredis";
import type { FetchSuccess } from "../fetch/http-client.js";
import type { FetchedPage } from "../shared/types.js";
import { RecrawlHistoryStore, ValueTiers, hostVerdict, recordResponse, revisitHeaders, type ValidatorVerdict } from "../schedule/recrawl/index.js";
import type { NodeConfig } from "./config.js";
import type { RecrawlNodeConfig } from "./recrawl-config.js";
import { budgetPerDay } from "./recrawl-config.js";

const VERDICT_TTL_MS = 30_000;
const VERDICT_CACHE_MAX = 10_000;

export class RecrawlVisits {
  private readonly store: RecrawlHistoryStore;
  private readonly tiers: ValueTiers;
  private readonly verdicts = new Map<string, { verdict: ValidatorVerdict; until: number }>();

  constructor(redis: Redis, prefix: string, private readonly rc: RecrawlNodeConfig) {
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
  async recordPage(page: FetchedPage, contentDigest: string | undefined): Promise<boolean | null> {
    if (page.status < 200 || page.status >= 300 || contentDigest === undefined) return null;
    const r = await recordResponse(this.store, {
      url: page.url, atMs: Date.parse(page.fetchedAt), status: page.status, bytes: page.body.byteLength, requestHeaders: page.requestHeaders,
      headers: page.headers, digest: contentDigest, tier: this.tiers.tierOf(page.url), unit: budgetPerDay(this.rc).unit, creditsByType: this.rc.creditsByType,
    });
    return r?.changed ?? null;
  }
}
