// The fetcher's robots.txt step for a host whose rules are not cached: fetch robots.txt (this
// lease's request slot), then either store the rules, or -- when the file is unreachable for a
// reason that heals (an outage) -- hold the host until the next try with its URLs still queued
// and unattempted (fetch/robots-outage.ts decides, frontier/robots-outages.ts stores).
import type { RobotsHttp, RobotsEntry } from "../fetch/robots.js";
import { fetchRobots } from "../fetch/robots.js";
import { trimRobotsBody } from "../fetch/robots-trim.js";
import { decideOutage, type OutageState, type RobotsOutageSettings } from "../fetch/robots-outage.js";
import type { NodeFrontier } from "./open-frontier.js";
import type { NodeConfig } from "./config.js";
import type { Lease } from "../shared/types.js";

/** A disallow-all kept for a failure that is not an outage (redirect loop, undecodable file). */
const FINAL_DISALLOW_TTL_MS = 10 * 60_000;

export type RobotsStepResult =
  /** Rules to use (fresh, the last cached copy, or a permanent disallow-all); the caller requeues the lease. */
  | { kind: "entry"; entry: RobotsEntry }
  /** The host waits out an outage; the lease is already back in its queue. */
  | { kind: "deferred"; state: OutageState };

/** lastError prefix of a deferral asked by Retry-After (not a robots.txt outage: no wake-up at restart). */
export const RETRY_AFTER_DEFERRAL = "retry-after: ";

/**
 * A page answered with a Retry-After above --max-retry-after: the lease ends, its URL goes back
 * uncounted, and the host waits until `until` (listed as deferred, like a robots.txt outage).
 */
export async function deferHostFor(
  frontier: NodeFrontier,
  lease: Lease,
  origin: string,
  ask: { until: number; retryAfterMs: number; reason: string; why?: string },
  log: (msg: string) => void,
): Promise<void> {
  const now = Date.now();
  const why = ask.why ?? "Retry-After above --max-retry-after";
  const state: OutageState = {
    origin, firstFailureAt: now, tries: 1, nextTryAt: ask.until, lastTryAt: now,
    lastError: `${RETRY_AFTER_DEFERRAL}${ask.reason} asked ${Math.round(ask.retryAfterMs / 1000)} s`,
  };
  log(`${lease.host} waits ${Math.round(ask.retryAfterMs / 1000)} s (${ask.reason}, ${why}): deferred until ${new Date(ask.until).toISOString()}`);
  await frontier.outages.defer(lease.id, lease.host, state, now);
}

export function outageSettings(config: NodeConfig): RobotsOutageSettings {
  return {
    backoffBaseMs: config.robotsBackoffBaseMs,
    backoffMaxMs: config.robotsBackoffMaxMs,
    outageMaxMs: config.robotsOutageMaxMs,
    nxdomainConfirmMs: Math.min(60_000, config.robotsBackoffBaseMs),
  };
}

export async function robotsStep(
  client: RobotsHttp,
  frontier: NodeFrontier,
  config: NodeConfig,
  lease: Lease,
  origin: string,
  log: (msg: string) => void,
): Promise<RobotsStepResult> {
  const settings = outageSettings(config);
  // No default wait and no clamp here: an absent Retry-After reads as 0 (our back-off decides),
  // a present one is honoured as given (never shortened).
  const result = await fetchRobots(client, origin, config.userAgent, {
    redirectDelayMs: config.delayMs + config.politenessMarginMs,
    unavailableRetryMs: 0,
    minRetryMs: 0,
    maxRetryMs: config.robotsOutageMaxMs,
  });
  // Only what decides for our agent is cached (fetch/robots-trim.ts): same decisions, a fraction of the bytes.
  const entry: RobotsEntry = result.entry.kind === "rules" ? { ...result.entry, body: trimRobotsBody(result.entry.body, config.userAgent) } : result.entry;
  const outages = frontier.outages;
  if (entry.kind !== "disallow-all") {
    // Kept past its 24 h freshness as the last cached copy for a long outage.
    await frontier.robots.set(origin, entry, result.ttlMs, config.robotsOutageMaxMs);
    await outages.clear(lease.host);
    return { kind: "entry", entry };
  }
  const now = Date.now();
  const recorded = await outages.get(lease.host);
  // A Retry-After deferral is not a robots.txt outage: this is the outage's first try.
  const previous = recorded?.lastError.startsWith(RETRY_AFTER_DEFERRAL) ? undefined : recorded;
  if (recorded && !previous) await outages.clear(lease.host);
  const last = await frontier.robots.getLast(origin);
  const decision = decideOutage(origin, result, previous, now, settings, last !== undefined);
  switch (decision.action) {
    case "defer": {
      const s = decision.state;
      log(`robots.txt of ${origin} unavailable (${s.lastError}); try ${s.tries} since ${new Date(s.firstFailureAt).toISOString()}: ` +
        `${lease.host} waits, its URLs stay queued, next try ${new Date(s.nextTryAt).toISOString()}`);
      await outages.defer(lease.id, lease.host, s, now);
      return { kind: "deferred", state: s };
    }
    case "use-last-copy": {
      const s = decision.state;
      log(`robots.txt of ${origin} unavailable for ${Math.round((now - s.firstFailureAt) / 3600_000)} h (over --robots-outage-max): using the copy fetched ` +
        `${new Date(last!.fetchedAt).toISOString()} until the next try ${new Date(s.nextTryAt).toISOString()}`);
      const copy = last as RobotsEntry;
      // Fresh until the next try; the outage record stays, so the back-off goes on from here.
      await frontier.robots.set(origin, copy, Math.max(1, s.nextTryAt - now), config.robotsOutageMaxMs);
      await outages.recordTry(lease.host, s);
      return { kind: "entry", entry: copy };
    }
    case "fail": {
      log(`robots.txt of ${origin}: ${decision.reason}: a permanent failure, ${lease.host}'s URLs fail as ${decision.errorClass}`);
      const failed: RobotsEntry = { kind: "disallow-all", retryAfterMs: FINAL_DISALLOW_TTL_MS, fetchedAt: now, reason: decision.reason, errorClass: decision.errorClass };
      await frontier.robots.set(origin, failed, FINAL_DISALLOW_TTL_MS);
      await outages.clear(lease.host);
      return { kind: "entry", entry: failed };
    }
    case "final": {
      await frontier.robots.set(origin, entry, Math.max(result.ttlMs, FINAL_DISALLOW_TTL_MS));
      await outages.clear(lease.host);
      return { kind: "entry", entry };
    }
  }
}
