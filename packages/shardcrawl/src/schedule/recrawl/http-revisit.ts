// One re-crawl visit over HTTP: a conditional GET built from the stored copy's validators (ETag ->
// If-None-Match, Last-Modified -> If-Modified-Since; a host that sent no Last-Modified gets the
// time of our last fetch), then change detection on the extracted text under the content rules.
// The exchange is fed to the host's validator tracker, so a host that ignores validators is found
// and stops being sent them; a page whose ETag follows churn gets If-Modified-Since alone.
import type { HttpClient } from "../../fetch/http-client.js";
import { extractPage } from "../../parse/extract.js";
import type { ContentDigester } from "./content-rules.js";
import type { Evidence, HostValidators, ValidatorVerdict } from "./validators.js";

export interface StoredCopy {
  etag?: string;
  lastModifiedMs?: number;
  /** ContentDigester digest of the extracted text. */
  digest: string;
  /** When the copy was fetched (content time, ms). */
  fetchedAtMs: number;
  /** This page's ETag changed without a content change (it follows churn): send If-Modified-Since only. */
  etagChurns?: boolean;
}

export interface RevisitResult {
  status: number;
  /** Changed since the stored copy, by content digest (false on 304). */
  changed: boolean;
  copy: StoredCopy;
  /** Body bytes received. */
  bytes: number;
  evidence: Evidence;
  conditional: boolean;
}

export interface RevisitFailure {
  error: string;
  detail: string;
}

export function header(headers: ReadonlyArray<readonly [string, string]>, name: string): string | undefined {
  for (const [k, v] of headers) if (k.toLowerCase() === name) return v;
  return undefined;
}

export function parseHttpDate(v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  const t = Date.parse(v);
  return Number.isNaN(t) ? undefined : t;
}

/** Request headers of a conditional revisit of `copy` (none for a host known to ignore them). */
export function conditionalHeaders(copy: StoredCopy | undefined, host: string, validators: HostValidators): Record<string, string> {
  return conditionalHeadersFor(copy, validators.verdict(host));
}

/** Request headers of a conditional revisit of `copy` given the host's validator verdict. */
export function conditionalHeadersFor(copy: StoredCopy | undefined, verdict: ValidatorVerdict): Record<string, string> {
  if (!copy || verdict === "ignored") return {};
  const h: Record<string, string> = {};
  if (copy.etag !== undefined && !copy.etagChurns) h["if-none-match"] = copy.etag;
  h["if-modified-since"] = new Date(copy.lastModifiedMs ?? copy.fetchedAtMs).toUTCString();
  return h;
}

/**
 * Revisits `url`. `nowMs` is content time (the fetch date recorded for the next If-Modified-Since;
 * in a simulated-time run it differs from the wall clock).
 */
export async function revisit(client: HttpClient, url: string, host: string, copy: StoredCopy | undefined, nowMs: number, digester: ContentDigester, validators: HostValidators): Promise<RevisitResult | RevisitFailure> {
  const cond = conditionalHeaders(copy, host, validators);
  const res = await client.fetch(url, { headers: cond });
  if (!res.ok) return { error: res.errorClass, detail: res.detail };
  const gotEtag = header(res.headers, "etag");
  const gotLastModifiedMs = parseHttpDate(header(res.headers, "last-modified"));
  const conditional = Object.keys(cond).length > 0;
  const sentIms = parseHttpDate(cond["if-modified-since"]);
  if (res.status === 304 && copy) {
    const evidence = validators.record(host, { status: 304, sentEtag: cond["if-none-match"], sentIfModifiedSinceMs: sentIms, gotEtag, gotLastModifiedMs, contentChanged: false });
    return { status: 304, changed: false, copy: { ...copy, fetchedAtMs: nowMs, etag: gotEtag ?? copy.etag }, bytes: res.body.length, evidence, conditional };
  }
  const text = res.status >= 200 && res.status < 300 ? extractPage(res.body.toString("utf8"), { pageUrl: url }).text : "";
  const digest = digester.digest(text);
  const changed = copy !== undefined && digest !== copy.digest;
  const evidence = conditional
    ? validators.record(host, { status: res.status, sentEtag: cond["if-none-match"], sentIfModifiedSinceMs: sentIms, gotEtag, gotLastModifiedMs, contentChanged: changed })
    : "none";
  const etagChurns = evidence === "churning-etag" || copy?.etagChurns === true; // sticky: churn is a property of the page
  return { status: res.status, changed, copy: { etag: gotEtag, lastModifiedMs: gotLastModifiedMs, digest, fetchedAtMs: nowMs, etagChurns }, bytes: res.body.length, evidence, conditional };
}
