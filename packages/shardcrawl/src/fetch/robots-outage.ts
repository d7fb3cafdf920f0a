// What a failed robots.txt fetch means for its host. RFC 9309 2.3.1.3/2.3.1.4: a server or
// network error means "assume complete disallow" -- for a while. The host's URLs must then WAIT
// (stay queued, unattempted) while robots.txt is fetched again on a back-off, not fail: a
// ten-minute maintenance window must not remove a site from the crawl. Only failures that will
// not heal by themselves (a name that does not exist, confirmed by a second lookup; an invalid
// certificate) fail the host's URLs, with their own error class.
import type { FetchErrorClass } from "../shared/types.js";
import type { RobotsFetchResult } from "./robots.js";

export interface RobotsOutageSettings {
  /** First wait after a failed robots.txt fetch (default 1 min). */
  backoffBaseMs: number;
  /** The wait doubles per failed try up to this (default 6 h). */
  backoffMaxMs: number;
  /** After this long unreachable, use the last cached copy if there is one (RFC 9309 2.3.1.4; default 30 days). */
  outageMaxMs: number;
  /** An NXDOMAIN is believed only when a second lookup at least this much later says it again (default 1 min). */
  nxdomainConfirmMs: number;
}

export const DEFAULT_ROBOTS_OUTAGE: RobotsOutageSettings = {
  backoffBaseMs: 60_000,
  backoffMaxMs: 6 * 3600_000,
  outageMaxMs: 30 * 24 * 3600_000,
  nxdomainConfirmMs: 60_000,
};

/** A host's robots.txt outage so far (kept in Redis, frontier/robots-outages.ts). */
export interface OutageState {
  origin: string;
  /** When the first failed try of this outage ended (epoch ms). */
  firstFailureAt: number;
  /** Failed tries so far. */
  tries: number;
  /** When robots.txt is fetched again (epoch ms). */
  nextTryAt: number;
  /** The last failure, "<class>: <detail>". */
  lastError: string;
  /** When the last try ended (epoch ms). */
  lastTryAt: number;
}

/**
 * transient: wait and try again (5xx, 429, timeouts, resets, TLS handshake failures that are not
 * about the certificate, DNS errors other than NXDOMAIN);
 * nxdomain: the name does not exist -- permanent only when an earlier try said so too;
 * permanent: fail the host's URLs with `errorClass` (an invalid certificate, a blocked address);
 * final: not an outage at all (the RFC's other cases: redirect loops, undecodable files) -- the
 * fetch stage keeps its disallow-all entry as before.
 */
export type RobotsFailureKind = "transient" | "nxdomain" | "permanent" | "final";

/** TLS verification codes (fetch-errors.ts puts the code first in the detail): a bad certificate stays bad. */
const CERT_CODE = /^(?:[A-Z_]*CERT[A-Z_]*|HOSTNAME_MISMATCH|UNABLE_TO_[A-Z_]+|ERR_TLS_CERT_ALTNAME_INVALID)\b/;

export function classifyRobotsFailure(errorClass: FetchErrorClass, detail: string): RobotsFailureKind {
  switch (errorClass) {
    case "robots-unavailable": // 5xx, 429, an unexpected status
    case "connect":
    case "connect-timeout":
    case "reset":
    case "headers-timeout":
    case "body-timeout":
    case "total-timeout":
    case "http-protocol":
    case "dns-transient": // SERVFAIL, timeouts, refused (dns-cache.ts never caches them)
    case "other":
      return "transient";
    case "dns":
      // getaddrinfo says ENOTFOUND for NXDOMAIN (and NODATA); EAI_AGAIN, SERVFAIL, timeouts heal.
      return /^(?:ENOTFOUND|ENODATA|NXDOMAIN|NOTFOUND)\b/.test(detail) ? "nxdomain" : "transient";
    case "tls":
      // A certificate that fails verification stays bad; a handshake cut short (reset, timeout) heals.
      return CERT_CODE.test(detail.replace(/^during TLS handshake: /, "")) ? "permanent" : "transient";
    case "ssrf-blocked":
      return "permanent";
    default:
      return "final";
  }
}

/** The wait before try `tries + 1`: base x 2^(tries-1) up to the cap, never less than Retry-After. */
export function nextTryDelayMs(tries: number, s: RobotsOutageSettings, retryAfterMs?: number): number {
  const backoff = Math.min(s.backoffMaxMs, s.backoffBaseMs * 2 ** Math.min(Math.max(0, tries - 1), 40));
  // Retry-After is honoured as given: never shortened, and above our cap too (the site said so).
  return Math.max(backoff, retryAfterMs ?? 0);
}

export type OutageDecision =
  /** Put the lease back and wait until `state.nextTryAt`. */
  | { action: "defer"; state: OutageState }
  /** The outage outlived outageMaxMs and a last good copy exists: use it. */
  | { action: "use-last-copy"; state: OutageState }
  /** Fail the host's URLs with this class (the failure will not heal). */
  | { action: "fail"; errorClass: FetchErrorClass; reason: string }
  /** Not an outage: the caller keeps the disallow-all entry it got. */
  | { action: "final" };

/**
 * What to do after a failed robots.txt fetch that ended at `now`. `previous` is the host's outage
 * so far (undefined at its first failure); `hasLastCopy` whether an older good copy is cached.
 */
export function decideOutage(
  origin: string,
  result: Pick<RobotsFetchResult, "errorClass" | "detail" | "entry">,
  previous: OutageState | undefined,
  now: number,
  s: RobotsOutageSettings,
  hasLastCopy: boolean,
): OutageDecision {
  const errorClass = result.errorClass ?? "other";
  const detail = result.detail ?? "";
  const kind = classifyRobotsFailure(errorClass, detail);
  const reason = `${errorClass}: ${detail}`.slice(0, 300);
  if (kind === "final") return { action: "final" };
  if (kind === "permanent") return { action: "fail", errorClass, reason };
  if (kind === "nxdomain" && previous && previous.lastError.startsWith("dns: ") && classifyRobotsFailure("dns", previous.lastError.slice(5)) === "nxdomain"
    && now - previous.lastTryAt >= s.nxdomainConfirmMs) {
    return { action: "fail", errorClass: "dns", reason: `${reason} (confirmed by a second lookup ${Math.round((now - previous.lastTryAt) / 1000)} s later)` };
  }
  const tries = (previous?.tries ?? 0) + 1;
  const firstFailureAt = previous?.firstFailureAt ?? now;
  const retryAfterMs = result.entry.kind === "disallow-all" && errorClass === "robots-unavailable" ? result.entry.retryAfterMs : undefined;
  // An NXDOMAIN is looked up again after the confirmation interval, whatever the back-off says.
  const delay = kind === "nxdomain" ? Math.max(s.nxdomainConfirmMs, retryAfterMs ?? 0) : nextTryDelayMs(tries, s, retryAfterMs);
  const state: OutageState = { origin, firstFailureAt, tries, nextTryAt: now + delay, lastError: reason, lastTryAt: now };
  if (now - firstFailureAt >= s.outageMaxMs && hasLastCopy) return { action: "use-last-copy", state };
  return { action: "defer", state };
}
