// The node's side of a re-crawl visit (continuous mode): the conditional headers a fetcher sends
// for a URL it has a stored copy of, and the recording of a response (200 after parsing, or 304
// straight from the fetcher) into the per-URL history, with the validator evidence the exchange
// gave (validators.ts) taken from the request headers that were actually sent.
import { conditionalHeadersFor, header, parseHttpDate } from "./http-revisit.js";
import type { RecordResult, RecrawlHistoryStore } from "./history-store.js";
import type { UrlHistory } from "./history-codec.js";
import { evidenceOf, verdictOf, type ValidatorPolicy, type ValidatorVerdict } from "./validators.js";
import { DEFAULT_COST_CONFIG, visitCost, type BudgetUnit } from "./cost.js";

type Headers = ReadonlyArray<readonly [string, string]>;

/** Conditional request headers for a revisit of a stored copy (none without one, or for a host that ignores them). */
export function revisitHeaders(stored: UrlHistory | undefined, verdict: ValidatorVerdict): Record<string, string> {
  if (!stored) return {};
  return conditionalHeadersFor({ etag: stored.etag, lastModifiedMs: stored.lastModifiedMs, digest: stored.digest, fetchedAtMs: stored.lastVisitMs, etagChurns: stored.etagChurns }, verdict);
}

/** A host's validator verdict from the node-wide counters record_visit.lua keeps (P rm:<host>). */
export async function hostVerdict(store: RecrawlHistoryStore, host: string, policy?: ValidatorPolicy): Promise<ValidatorVerdict> {
  const m = await store.metrics(host);
  return verdictOf({ notModified: m.validators.honoured, ignored: m.validators.ignored, churningEtag: m.validators.churningEtag }, policy);
}

export interface ResponseVisit {
  url: string;
  /** When the request was sent (epoch ms). */
  atMs: number;
  status: number;
  /** Body bytes as received. */
  bytes: number;
  requestHeaders: Headers;
  headers: Headers;
  /** Content digest of the extracted text (absent on 304). */
  digest?: string;
  tier: number;
  unit: BudgetUnit;
  creditsByType: Record<string, number>;
}

/**
 * Records one response of a URL in its history. Returns null when there is nothing to record (a
 * 304 for a URL without a stored copy, or a page without a content digest).
 */
export async function recordResponse(store: RecrawlHistoryStore, v: ResponseVisit): Promise<RecordResult | null> {
  const old = await store.get(v.url);
  const notModified = v.status === 304;
  if (notModified ? !old : v.digest === undefined) return null;
  // The same response again (a parser that crashed after recording and before its ack): skip.
  // (The stored time has a resolution of 1/256 s.)
  if (old && Math.abs(old.lastVisitMs - v.atMs) <= 2) return null;
  const sentEtag = header(v.requestHeaders, "if-none-match");
  const sentIfModifiedSinceMs = parseHttpDate(header(v.requestHeaders, "if-modified-since"));
  const gotEtag = header(v.headers, "etag");
  const gotLastModifiedMs = parseHttpDate(header(v.headers, "last-modified"));
  const contentChanged = !notModified && old !== undefined && v.digest !== old.digest;
  const evidence = evidenceOf({ status: v.status, sentEtag, sentIfModifiedSinceMs, gotEtag, gotLastModifiedMs, contentChanged });
  // A 304 has no body: the visit costs what a full fetch of the copy we hold would (the scheduler
  // plans in full-fetch costs; the bytes actually spent are in the metrics).
  const cost = notModified ? (old as UrlHistory).cost : visitCost({ ...DEFAULT_COST_CONFIG, unit: v.unit, creditsByType: v.creditsByType }, { pageType: "html", lastBytes: v.bytes });
  return store.recordVisit(v.url, {
    atMs: v.atMs, status: v.status, bytes: v.bytes, tier: v.tier, cost, evidence,
    ...(v.digest !== undefined && !notModified ? { digest: v.digest } : {}),
    ...(gotEtag !== undefined ? { etag: gotEtag } : {}),
    ...(gotLastModifiedMs !== undefined ? { lastModifiedMs: gotLastModifiedMs } : {}),
    // Sticky: an ETag that follows churn is a property of the page.
    etagChurns: evidence === "churning-etag" || old?.etagChurns === true,
  });
}
