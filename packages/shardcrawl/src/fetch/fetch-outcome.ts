// Fetch stages "decide" and the plan of "feedback": what one fetch's response means for the page
// log and the frontier, as data (the fetch pipeline applies it). Pure: unit-tested without a server.
import type { FetchOutcome } from "./http-client.js";
import type { Verdict as RetryVerdict } from "./retry-policy.js";
import type { Refusal } from "../admit/verdict.js";
import type { FetchErrorClass, Lease, PageLogLine } from "../shared/types.js";

export interface Feedback {
  signal: "ok" | "backoff" | "none";
  latencyMs: number;
  startedAt: number;
  notBefore?: number;
}

export type OutcomePlan =
  /** About us, not the site: the host's limiter is untouched, the URL goes back uncounted. */
  | { action: "upstream-pause"; until: number }
  | { action: "quota-stop"; message: string }
  /** Retry-After above --max-retry-after: the host waits as long as asked, the URL stays queued. */
  | { action: "defer-host"; line: PageLogLine; until: number; retryAfterMs: number; reason: string; why?: string }
  | { action: "retry"; line: PageLogLine; notBefore: number; reason: string; feedback: Feedback }
  | { action: "fail"; line: PageLogLine; errorClass: FetchErrorClass; feedback: Feedback }
  /** A response to keep: a 304 of a revisit, or a page for the parse queue. */
  | { action: "response"; feedback: Feedback };

/** The page-log line of a lease that ended without a page. */
export function failureLine(lease: Lease, error: PageLogLine["error"], detail: string, timings: PageLogLine["timings"]): PageLogLine {
  return {
    url: lease.url, final_url: lease.url, status: null, error, error_detail: detail, content_type: null,
    bytes: 0, truncated: false, digest: null, fetched_at: new Date().toISOString(), timings, outlinks: 0,
    depth: lease.depth, attempt: lease.attempt,
  };
}

/** The page-log line of a URL refused before any request (opt-out list, robots.txt, Crawl-delay). */
export function refusalLine(lease: Lease, refusal: Refusal & { reason: FetchErrorClass }): PageLogLine {
  return failureLine(lease, refusal.reason, refusal.detail, { total: 0 });
}

export function planOutcome(lease: Lease, res: FetchOutcome, verdict: RetryVerdict, startedAt: number, limits: { maxAttempts: number; maxRetryAfterMs: number }): OutcomePlan {
  if (verdict.action === "upstream-pause") return { action: "upstream-pause", until: verdict.until };
  if (verdict.action === "quota-stop") return { action: "quota-stop", message: verdict.message };
  if (verdict.action === "defer-host") {
    // A long Retry-After, or a page's DNS failing transiently past its retries (verdict.why).
    const asked = verdict.why ?? `Retry-After ${Math.round(verdict.retryAfterMs / 1000)} s is above --max-retry-after ${limits.maxRetryAfterMs} ms`;
    const detail = `${res.ok ? "" : `${res.errorClass}: ${res.detail}; `}${asked}: ${lease.host} waits until ${new Date(verdict.until).toISOString()}, the URL stays queued`;
    const line = { ...failureLine(lease, null, detail, res.timings), status: res.ok ? res.status : null, final_url: res.ok ? res.url : lease.url };
    return { action: "defer-host", line, until: verdict.until, retryAfterMs: verdict.retryAfterMs, reason: verdict.reason, ...(verdict.why !== undefined ? { why: verdict.why } : {}) };
  }
  const latencyMs = res.ok ? (res.timings.ttfb ?? res.timings.total) : res.timings.total;
  const feedback: Feedback = { signal: verdict.signal, latencyMs, startedAt, ...(verdict.notBefore !== undefined ? { notBefore: verdict.notBefore } : {}) };
  if (verdict.action === "retry") {
    // Every attempt is in the page log; the retry itself passes the frontier's admission control.
    const detail = `attempt ${lease.attempt + 1} of ${limits.maxAttempts}: retry in ${verdict.delayMs} ms (${verdict.reason})`;
    const line = res.ok
      ? { ...failureLine(lease, null, detail, res.timings), status: res.status, final_url: res.url }
      : failureLine(lease, res.errorClass, `${res.detail}; ${detail}`, res.timings);
    return { action: "retry", line, notBefore: verdict.notBefore, reason: verdict.reason, feedback };
  }
  if (!res.ok) return { action: "fail", line: failureLine(lease, res.errorClass, res.detail, res.timings), errorClass: res.errorClass, feedback };
  return { action: "response", feedback };
}
