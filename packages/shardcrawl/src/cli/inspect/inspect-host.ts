// `shardcrawl inspect host`: one host as its node sees it -- queues by tier, robots rules in force,
// politeness and adaptive limits, next start, page budget, recent outcomes and sheds.
import { FrontierKeys, parseOutage } from "../../frontier/index.js";
import { productToken } from "../../fetch/robots.js";
import type { PageLogLine } from "../../shared/types.js";
import { FrontierReader, type LeaseInfo, type ScopeVerdict, type ShedEntry } from "./frontier-reader.js";
import type { InspectLimits } from "./inspect-url.js";
import type { NodeTarget } from "./node-target.js";
import { pageLogLinesOfHost } from "./page-log-scan.js";
import { robotsGroupFor } from "./robots-group.js";
import { ShardRouter } from "../../shard/shard-spec.js";
import type { OutageState } from "../../fetch/robots-outage.js";

const BACKOFF_BASE_MS = 100; // lib.lua: a zero delay under rate back-off still gets gaps

export interface HostReport {
  host: string;
  node: string;
  owner: string;
  /** Known to this node's frontier (host state exists). */
  known: boolean;
  origin: string | null;
  scope: ScopeVerdict | null;
  frontier: {
    queued: number;
    byTier: number[];
    /** First URLs of each non-empty tier, in lease order. */
    next: Array<{ tier: number; urls: string[] }>;
    leases: LeaseInfo[];
    /** Epoch ms of the next allowed start, and whether the host sits in the ready schedule. */
    nextStartAt: number | null;
    inReadySchedule: boolean;
  };
  limits: {
    inFlight: number;
    /** Concurrency in force: the adaptive limit under the hard one. */
    concurrency: number;
    hardConcurrency: number;
    adaptiveConcurrency: number | null;
    /** Gap between request starts now (delay x back-off multiplier / concurrency), ms. */
    gapMs: number;
    crawlDelayMs: number | null;
    delayMultiplier: number;
    baselineLatencyMs: number | null;
  };
  budget: { admitted: number; budget: number | null; fetched: number; errors: number; errorsByClass: Record<string, number>; requeues: number; retries: number };
  robots: {
    origin: string | null;
    cached: boolean;
    kind?: string;
    fetchedAt?: string;
    expiresInMs?: number;
    userAgentToken: string;
    /** The group chosen for our user agent and its lines. */
    group?: { matched: string; rules: string[] };
    /** A robots.txt outage the host is waiting out (its URLs stay queued), with the next try. */
    outage?: OutageState & { waiting: boolean };
  };
  recent: PageLogLine[];
  shed: ShedEntry[];
  scanned: { pageLogBytes: number; pageLogComplete: boolean };
}

/** A URL refused again and again shows once, with its newest entry (entries come newest first). */
function newestPerUrl(entries: ShedEntry[]): ShedEntry[] {
  const seen = new Set<string>();
  return entries.filter((e) => !seen.has(e.url) && Boolean(seen.add(e.url)));
}

const num = (v: string | undefined): number | null => (v === undefined || v === "" || !Number.isFinite(Number(v)) ? null : Number(v));

export async function inspectHost(target: NodeTarget, rawHost: string, limits: InspectLimits & { recent: number }): Promise<HostReport> {
  const host = rawHost.trim().toLowerCase();
  if (!/^[^\s/?#]{1,255}$/.test(host)) throw new Error(`inspect: not a host name: ${JSON.stringify(rawHost)}`);
  const { config } = target;
  const reader = await FrontierReader.open(target.redis, config.prefix);
  const h = await reader.hostFields(host);
  // Domain politeness: the clock and limits are the domain's (P d:<domain>); queues stay the host's.
  if (h.k !== undefined && (await reader.flowConfig()).pk === "domain") {
    const d = await target.redis.hgetall(new FrontierKeys(config.prefix).politenessDomain(h.k));
    for (const f of ["n", "f", "c", "a", "m", "b"]) {
      if (d[f] !== undefined) h[f] = d[f];
      else delete h[f];
    }
  }
  const origin = h.o ?? null;
  const byTier = await reader.tierSizes(host);
  const ready = await reader.readyAt(host);
  const hard = num(h.c) ?? config.hostConcurrency;
  const adaptive = num(h.a);
  const concurrency = adaptive === null ? hard : Math.max(1, Math.min(hard, Math.floor(adaptive)));
  const mult = num(h.m) ?? 1;
  let delay = Math.max(config.delayMs, num(h.d) ?? 0);
  if (mult > 1) delay = Math.max(delay, BACKOFF_BASE_MS) * mult;
  const flow = await reader.flowConfig();
  const budget = Number(flow.hbud ?? 0);
  const errorsByClass: Record<string, number> = {};
  for (const [k, v] of Object.entries(h)) if (k.startsWith("e:")) errorsByClass[k.slice(2)] = Number(v);
  // The robots.txt of the host's origin (the one its queued paths belong to); https first when unknown.
  const robotsOrigin = origin ?? `https://${host}`;
  const cached = await reader.robots(robotsOrigin);
  const token = productToken(config.userAgent);
  const robots: HostReport["robots"] = { origin: robotsOrigin, cached: cached !== null, userAgentToken: token };
  if (cached) {
    robots.kind = cached.entry.kind;
    robots.fetchedAt = new Date(cached.entry.fetchedAt).toISOString();
    robots.expiresInMs = cached.ttlMs;
    if (cached.entry.kind === "rules") robots.group = robotsGroupFor(cached.entry.body, token);
  }
  const outage = parseOutage(await reader.redis.hgetall(reader.keys.robotsOutage(host)));
  if (outage) robots.outage = { ...outage, waiting: (await reader.redis.zscore(reader.keys.robotsDeferred, host)) !== null };
  const scan = target.out ? pageLogLinesOfHost(target.out, host, { limit: limits.recent, maxBytes: limits.scanBytes }) : { lines: [], scannedBytes: 0, complete: false };
  const owner = config.shard ? new ShardRouter(config.shard).ownerOfHost(host) : target.node;
  return {
    host, node: target.node, owner, known: Object.keys(h).length > 0, origin,
    scope: await reader.scopeOf(host),
    frontier: {
      queued: num(h.q) ?? 0, byTier, next: await reader.queueHeads(host, origin ?? undefined, 3), leases: await reader.leasesOf(host, origin ?? undefined),
      nextStartAt: num(h.n) ?? ready, inReadySchedule: ready !== null,
    },
    limits: {
      inFlight: num(h.f) ?? 0, concurrency, hardConcurrency: hard, adaptiveConcurrency: adaptive,
      gapMs: Math.ceil(delay / concurrency), crawlDelayMs: num(h.d), delayMultiplier: mult, baselineLatencyMs: num(h.b),
    },
    budget: {
      admitted: num(h.A) ?? 0, budget: budget > 0 ? budget : null, fetched: num(h.x) ?? 0, errors: num(h.e) ?? 0, errorsByClass,
      requeues: num(h.r) ?? 0, retries: num(h.R) ?? 0,
    },
    robots,
    recent: scan.lines,
    shed: newestPerUrl(await reader.shedEntries((e) => e.host === host)).slice(0, limits.recent),
    scanned: { pageLogBytes: scan.scannedBytes, pageLogComplete: scan.complete },
  };
}
