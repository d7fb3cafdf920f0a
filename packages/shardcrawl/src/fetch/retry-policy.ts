// What to do with one fetch attempt's outcome: record it (a page for the parse queue, or a
// failure), or retry it later through the same admission control as a first attempt (the URL goes
// back to its host queue with attempt+1 and the host may not start before a not-before time).
// Also says what the outcome means for the host's adaptive limit (lib.lua feedback), and spots
// signals that are about us, not the site: our upstream plan's limit and quota.
import type { FetchErrorClass } from "../shared/types.js";
import type { FetchOutcome } from "./http-client.js";
import { headerValue, parseRetryAfter } from "./retry-after.js";

export interface RetrySettings {
  /** Attempts per URL in total, first one included (1 = never retry). */
  maxAttempts: number;
  /** Back-off base: attempt n waits a uniform random time in [0, min(cap, base * 2^n)] (full jitter). */
  baseMs: number;
  capMs: number;
  /** Retry-After is honoured up to this. */
  maxRetryAfterMs: number;
  /** A response header that marks a 429 as OUR upstream plan's limit (a proxy or scraping API), "" = none. */
  upstreamLimitHeader: string;
  /** A response header (or status 402 with it) that says our upstream quota is exhausted, "" = none. */
  upstreamQuotaHeader: string;
}

export const DEFAULT_RETRY: RetrySettings = {
  maxAttempts: 3, baseMs: 1000, capMs: 60_000, maxRetryAfterMs: 300_000, upstreamLimitHeader: "", upstreamQuotaHeader: "",
};

export type HostSignal = "ok" | "backoff" | "none";

export type Verdict =
  | { action: "record"; signal: HostSignal; notBefore?: number; reason?: string }
  | { action: "retry"; signal: HostSignal; reason: string; notBefore: number; delayMs: number }
  /** Our upstream plan asked us to slow down: pause all leasing, put the URL back uncounted. */
  | { action: "upstream-pause"; until: number }
  /** Our upstream quota is exhausted: stop fetching with this message. */
  | { action: "quota-stop"; message: string }
  /**
   * The site asked (Retry-After) for a longer pause than --max-retry-after: never retry sooner
   * than asked -- the URL goes back uncounted and the host waits until `until`, like a robots.txt outage.
   * Also a name that still does not resolve (SERVFAIL, no answer) after the URL's retries (`why` says so).
   */
  | { action: "defer-host"; signal: HostSignal; until: number; retryAfterMs: number; reason: string; why?: string };

/** HTTP statuses worth another attempt (RFC 9110: 408, 429 and the transient 5xx). */
const RETRY_STATUS = new Set([408, 429, 500, 502, 503, 504]);
/** Statuses that mean "too much load": multiplicative decrease. */
const BACKOFF_STATUS = new Set([429, 503]);
/** Failures worth another attempt: the network or the server hiccuped. Everything else cannot succeed (TLS certificate, SSRF, robots, bad URL, bombs, DNS answers). */
const RETRY_ERRORS = new Set<FetchErrorClass>(["connect", "connect-timeout", "reset", "headers-timeout", "total-timeout", "http-protocol", "dns-transient"]);
/** Failures that mean the host is overloaded (it did not answer in time). */
const BACKOFF_ERRORS = new Set<FetchErrorClass>(["connect-timeout", "headers-timeout", "total-timeout"]);

/** A Retry-After longer than this is read as this (a date years ahead is a mistake, not a plan). */
export const RETRY_AFTER_SANITY_MS = 30 * 24 * 3600_000;

/** A bot-challenge page (Cloudflare marks them with cf-mitigated: challenge). */
export function isChallenge(status: number, headers: ReadonlyArray<readonly [string, string]>): boolean {
  if (status !== 403 && status !== 429 && status !== 503) return false;
  return headerValue(headers, "cf-mitigated")?.toLowerCase() === "challenge";
}

/** Full jitter (AWS architecture blog, "Exponential Backoff And Jitter"): uniform in [0, min(cap, base * 2^n)]. */
export function backoffMs(attempt: number, s: Pick<RetrySettings, "baseMs" | "capMs">, random: () => number = Math.random): number {
  const ceiling = Math.min(s.capMs, s.baseMs * 2 ** Math.min(attempt, 30));
  return Math.floor(random() * ceiling);
}

/**
 * `attempt` is the number of earlier attempts of this URL (0 on the first). `now` is epoch ms at
 * the end of the response.
 */
export function decide(res: FetchOutcome, attempt: number, s: RetrySettings, now: number, random: () => number = Math.random): Verdict {
  const more = attempt + 1 < s.maxAttempts;
  if (!res.ok) {
    const signal: HostSignal = BACKOFF_ERRORS.has(res.errorClass) ? "backoff" : "none";
    if (more && RETRY_ERRORS.has(res.errorClass)) {
      const delayMs = backoffMs(attempt, s, random);
      return { action: "retry", signal, reason: res.errorClass, notBefore: now + delayMs, delayMs };
    }
    if (res.errorClass === "dns-transient") {
      // A name server that fails to answer says nothing about the page: once its retries are spent the
      // URL is not failed for good but waits with its host, as in a robots.txt outage, and is tried
      // again when the host's wait ends (a crawl with nothing else to do reports it as deferred).
      const waitMs = Math.min(s.capMs, s.baseMs * 2 ** Math.min(attempt, 30));
      return { action: "defer-host", signal, until: now + waitMs, retryAfterMs: waitMs, reason: "dns-transient", why: "its name did not resolve after the URL's retries" };
    }
    return { action: "record", signal };
  }
  const h = res.headers;
  if (s.upstreamQuotaHeader && headerValue(h, s.upstreamQuotaHeader) !== undefined) {
    return { action: "quota-stop", message: `upstream quota exhausted (HTTP ${res.status}, ${s.upstreamQuotaHeader}: ${headerValue(h, s.upstreamQuotaHeader)})` };
  }
  const retryAfter = parseRetryAfter(headerValue(h, "retry-after"), now, s.maxRetryAfterMs);
  if (res.status === 429 && s.upstreamLimitHeader && headerValue(h, s.upstreamLimitHeader) !== undefined) {
    return { action: "upstream-pause", until: now + (retryAfter ?? backoffMs(attempt, s, random)) };
  }
  if (RETRY_STATUS.has(res.status) || isChallenge(res.status, h)) {
    // Never sooner than the site asked: above our cap the host is deferred, not retried early.
    const asked = parseRetryAfter(headerValue(h, "retry-after"), now, RETRY_AFTER_SANITY_MS);
    if (asked !== undefined && asked > s.maxRetryAfterMs) {
      return { action: "defer-host", signal: "backoff", until: now + asked, retryAfterMs: asked, reason: `http-${res.status}` };
    }
  }
  const challenge = isChallenge(res.status, h);
  const signal: HostSignal = challenge || BACKOFF_STATUS.has(res.status) ? "backoff" : "ok";
  if (more && (RETRY_STATUS.has(res.status) || challenge)) {
    // Retry-After when the server gave one (capped), else our own back-off; never sooner than the jitter.
    const delayMs = Math.max(retryAfter ?? 0, backoffMs(attempt, s, random));
    return { action: "retry", signal, reason: challenge ? "challenge" : `http-${res.status}`, notBefore: now + delayMs, delayMs };
  }
  return { action: "record", signal, ...(retryAfter !== undefined ? { notBefore: now + retryAfter } : {}) };
}
