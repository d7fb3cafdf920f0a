// The node's view of its Redis state: the Frontier (queues, leases, seen filter, parse queue,
// robots cache) configured from the NodeConfig, plus the crawl scope, which the node stores
// beside the frontier so a resumed crawl (or a restarted parser) knows it without the seed file.
//
// Keys this module adds (prefix P as in frontier/keys.ts):
//   P scope:mode   string  "domains" | "hosts" | "any"
//   P scope:keys   set     registrable domains (mode domains) or hosts (mode hosts) of the seeds
import type { Redis } from "ioredis";
import { Frontier, redisUsedMemory, type BloomStatus, type FrontierStats, type HashedLink, type HostFeedback, type HostPressure, type LeaseBatch, type SpooledPage, type TakenPage } from "../frontier/index.js";
import type { RobotsEntry } from "../fetch/robots.js";
import { hostOf } from "../url/normalize.js";
import type { ScopeMode } from "../url/scope.js";
import { scopeSpecOf, type ScopeSpec } from "../admit/scope-filter.js";
import { SeenCache } from "../frontier/seen-cache.js";
import type { NodeConfig } from "./config.js";
import type { FetchedPage, FetchErrorClass, Lease } from "../shared/types.js";
import type { DiscoveredLink } from "../shared/types.js";

/** Flat numbers for progress, status and the summary. */
export interface NodeStats {
  fetched: number;
  parsed: number;
  failed: number;
  errors: number;
  robotsDisallowed: number;
  discovered: number;
  outOfScope: number;
  queued: number;
  hostsQueued: number;
  readyHosts: number;
  dueHosts: number;
  leases: number;
  parseQueue: number;
  parseInFlight: number;
  counters: Record<string, number>;
  /** Flow-control pressure (metrics). */
  pressure?: NodePressure;
}

export interface NodePressure {
  /** Hosts under back-off, highest pressure first (top N). */
  hosts: HostPressure[];
  /** Hosts under back-off in all. */
  hostsUnderBackoff: number;
  redisUsedBytes: number;
  redisBudgetBytes: number;
  parseQueueMax: number;
  parseQueueOldestAgeMs: number;
  /** How long the most overdue ready host has been due (0 when none is overdue). */
  readyLagMs?: number;
  /** The memory governor's lower total cap, if any. */
  totalCap?: number;
  spillWaiting: number;
  /** Spilled URLs on disk waiting for re-admission. */
  spillOnDisk: number;
  /** Set when our upstream quota is exhausted. */
  stopped?: string;
  /** Set while fetching is paused because the output disk is full (why). */
  diskFull?: string;
  /** The seen filter: stages, insertions, fill, estimated false-positive rate. */
  bloom?: BloomStatus;
}

/** Hosts listed in the pressure metrics. */
const TOP_HOSTS = 10;

export class NodeFrontier {
  /** Parser side: URLs known to be in the seen filter (frontier/seen-cache.ts), made on first ack. */
  private seen: SeenCache | undefined;
  /** Links answered by the seen cache in acks that took effect, not yet counted in the stats. */
  private seenCachedUncounted = 0;

  constructor(
    readonly frontier: Frontier,
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly memoryBudgetBytes = 0,
  ) {}

  // --- seeds and scope -------------------------------------------------------------------
  async saveScope(mode: ScopeMode, seeds: string[]): Promise<void> {
    const multi = this.redis.multi().set(`${this.prefix}scope:mode`, mode);
    const list = scopeSpecOf(seeds, mode).keys;
    for (let i = 0; i < list.length; i += 10_000) multi.sadd(`${this.prefix}scope:keys`, ...list.slice(i, i + 10_000));
    await multi.exec();
  }

  async hasScope(): Promise<boolean> {
    return (await this.redis.exists(`${this.prefix}scope:mode`)) === 1;
  }

  async loadScope(): Promise<ScopeSpec> {
    const mode = ((await this.redis.get(`${this.prefix}scope:mode`)) ?? "domains") as ScopeMode;
    const keys: string[] = [];
    let cursor = "0";
    do {
      const [next, batch] = await this.redis.sscan(`${this.prefix}scope:keys`, cursor, "COUNT", 10_000);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== "0");
    return { mode, keys };
  }

  /** Adds seeds (tier 0, depth 0); the seen filter makes re-adding them on resume harmless. */
  async addSeeds(urls: string[], now: number): Promise<number> {
    const links: DiscoveredLink[] = [];
    for (const url of urls) {
      const host = hostOf(url);
      if (host) links.push({ url, host, tier: 0, depth: 0, hops: 0 });
    }
    const r = await this.frontier.addLinks(links, { now, kind: "seeds" });
    return r.added;
  }

  // --- fetcher side ----------------------------------------------------------------------
  /** `owner` (fetcherLeaseOwner) lets the supervisor return these leases at once if this process dies. */
  async lease(max: number, now: number, ttlMs?: number, owner?: string): Promise<LeaseBatch> {
    return this.frontier.lease(max, now, ttlMs, owner);
  }

  /** Adds to a stats counter (blocked time, upstream events). */
  async count(field: string, by: number): Promise<void> {
    if (by !== 0) await this.redis.hincrby(this.frontier.keys.stats, field, Math.round(by));
  }

  async parseQueueHasRoom(): Promise<boolean> {
    return this.frontier.parse.hasRoom();
  }

  /** Milliseconds until the earliest ready host is due (null when no host is ready). */
  async msUntilNextDue(now: number, signed = false): Promise<number | null> {
    const r = await this.redis.zrange(this.frontier.keys.ready, 0, 0, "WITHSCORES");
    if (r.length < 2) return null;
    // signed: negative when the host is overdue (metrics: how far fetchers lag the schedule).
    return signed ? Number(r[1]) - now : Math.max(0, Number(r[1]) - now);
  }

  async getRobots(origin: string): Promise<RobotsEntry | null> {
    return ((await this.frontier.robots.get(origin)) as RobotsEntry | undefined) ?? null;
  }

  async setRobots(origin: string, entry: RobotsEntry, ttlMs: number): Promise<void> {
    await this.frontier.robots.set(origin, entry, ttlMs);
  }

  async setHostDelay(host: string, delayMs: number): Promise<void> {
    await this.frontier.setHostLimits(host, { delayMs });
  }

  /** Puts the URL back at the head of its queue without counting an attempt (robots.txt came first). */
  async requeue(lease: Lease, now: number, feedback?: HostFeedback): Promise<void> {
    await this.frontier.requeue(lease, { countAttempt: false, ...(feedback ? { feedback } : {}) }, now);
  }

  /** A retry: back to the head of its queue with attempt+1; the host may not start before notBefore. */
  async retry(lease: Lease, now: number, opts: { notBefore: number; reason: string; feedback: HostFeedback }): Promise<void> {
    await this.frontier.requeue(lease, { countAttempt: true, notBefore: opts.notBefore, reason: opts.reason, feedback: opts.feedback }, now);
  }

  async fail(lease: Lease, now: number, opts: { requested: boolean; errorClass: FetchErrorClass; feedback?: HostFeedback }): Promise<void> {
    // No request went out (robots said no): the host's politeness clock is not advanced.
    await this.frontier.fail(lease, opts.errorClass, opts.requested ? now : now - 1_000_000_000, opts.feedback);
  }

  /** Returns the page id, or null when the lease had expired (the page was dropped). */
  async completeWithPage(lease: Lease, now: number, page: FetchedPage | SpooledPage, feedback?: HostFeedback): Promise<string | null> {
    return this.frontier.completeWithPage(lease, page, now, feedback);
  }

  // --- parser side -----------------------------------------------------------------------
  async recoverParseConsumer(consumer: string): Promise<number> {
    return this.frontier.parse.recover(consumer);
  }

  async takePages(consumer: string, max: number, blockMs: number): Promise<TakenPage[]> {
    return this.frontier.parse.take(consumer, max, { blockMs });
  }

  /** False when the page was no longer ours (recovered and handed to another consumer). */
  async ackPage(consumer: string, id: string, links: HashedLink[], opts: { error: string | null }): Promise<boolean> {
    const cache = this.seenCache();
    const send = cache.unknown(links);
    const r = await this.frontier.parse.ack(consumer, id, send, opts.error ? { parseError: opts.error } : {});
    if (!r.acked) return false;
    this.seenCachedUncounted += links.length - send.length;
    // Every link sent is now in the filter unless some were refused for want of room (bits left
    // clear, and the script does not say which): a batch with refusals is not remembered.
    if (r.dropped === 0) for (const url of r.sentUrls) cache.remember(url);
    return true;
  }

  /** Links the seen cache answered since the last call (the caller adds them to the "duplicates" stat). */
  takeSeenCacheHits(): number {
    const n = this.seenCachedUncounted;
    this.seenCachedUncounted = 0;
    return n;
  }

  private seenCache(): SeenCache {
    if (!this.seen) {
      const cache = (this.seen = new SeenCache());
      // A restarted Redis may have lost its last second of writes (AOF everysec): forget everything.
      this.redis.on("reconnecting", () => cache.clear());
    }
    return this.seen;
  }

  /** A taken page whose spooled body is lost: its URL goes back to be fetched again. */
  async refetchPage(consumer: string, id: string): Promise<boolean> {
    return this.frontier.parse.refetch(consumer, id);
  }

  // --- supervisor side -------------------------------------------------------------------
  async recoverAll(): Promise<{ leases: number; pages: number }> {
    return this.frontier.recoverAll();
  }

  /** Lifts a quota stop left by an earlier run; returns its message (undefined when there was none). */
  async clearQuotaStop(): Promise<string | undefined> {
    const { stop } = await this.frontier.flowState();
    if (stop !== undefined) await this.frontier.setFlow({ stop: null });
    return stop;
  }

  async reap(now: number): Promise<number> {
    return this.frontier.reapExpired(now);
  }

  async stats(): Promise<NodeStats> {
    const s: FrontierStats = await this.frontier.stats();
    const c = s.counters;
    return {
      fetched: c.fetched ?? 0,
      parsed: c.parsed ?? 0,
      failed: c.failed ?? 0,
      errors: (c.failed ?? 0) - (c["err:robots-disallowed"] ?? 0) - (c["err:robots-unavailable"] ?? 0) - (c["err:crawl-delay-too-long"] ?? 0) - (c["err:excluded"] ?? 0),
      robotsDisallowed: (c["err:robots-disallowed"] ?? 0) + (c["err:robots-unavailable"] ?? 0) + (c["err:crawl-delay-too-long"] ?? 0),
      discovered: c.discovered ?? 0,
      outOfScope: c.outOfScope ?? 0,
      // Spilled URLs are still work to do: "done" waits until they were re-admitted and fetched.
      queued: s.queued + (await this.frontier.spilledWaiting()) + (await this.frontier.spilledOnDisk()),
      hostsQueued: s.hostsQueued,
      readyHosts: s.readyHosts,
      dueHosts: s.dueHosts,
      leases: s.leases,
      parseQueue: s.parseQueue,
      parseInFlight: s.parseInFlight,
      counters: c,
      pressure: await this.pressure(),
    };
  }

  async pressure(): Promise<NodePressure> {
    const f = this.frontier;
    const flow = await f.flowState();
    return {
      hosts: await f.hostPressure(TOP_HOSTS),
      hostsUnderBackoff: await this.redis.zcard(f.keys.pressure),
      redisUsedBytes: await redisUsedMemory(f),
      redisBudgetBytes: this.memoryBudgetBytes,
      parseQueueMax: f.parse.max,
      parseQueueOldestAgeMs: await f.parseQueueOldestAgeMs(),
      readyLagMs: Math.max(0, -((await this.msUntilNextDue(Date.now(), true)) ?? 0)),
      ...(flow.totalCap !== undefined ? { totalCap: flow.totalCap } : {}),
      spillWaiting: await f.spilledWaiting(),
      spillOnDisk: await f.spilledOnDisk(),
      ...(flow.stop !== undefined ? { stopped: flow.stop } : {}),
      ...(flow.diskFull !== undefined ? { diskFull: flow.diskFull } : {}),
      bloom: await f.bloomStatus(),
    };
  }
}

export async function openFrontier(redis: Redis, config: NodeConfig): Promise<NodeFrontier> {
  const frontier = await Frontier.open(redis, {
    prefix: config.prefix,
    bloom: { expectedUrls: config.expectedUrls, falsePositiveRate: config.falsePositiveRate },
    delayMs: config.delayMs,
    hostConcurrency: config.hostConcurrency,
    politenessKey: config.politenessKey,
    leaseTtlMs: config.leaseTtlMs,
    maxPages: config.maxPages,
    parseQueueMax: config.parseQueueMax,
    parseQueueMaxBytes: config.parseQueueMaxBytes,
    maxQueuedPerHost: config.maxQueuedPerHost,
    maxQueuedTotal: config.maxQueuedTotal,
    maxHostsPerDomain: config.maxHostsPerDomain,
    urlFilters: config.urlFilters,
    flow: {
      aimdFloor: config.aimdFloor, aimdIncrease: config.aimdIncrease, aimdDecrease: config.aimdDecrease,
      aimdLatencyFactor: config.aimdLatencyFactor, aimdLatencyMinMs: config.aimdLatencyMinMs, aimdProbeMs: config.aimdProbeMs,
      aimdMaxDelayMultiplier: config.aimdMaxDelayMultiplier, hostPageBudget: config.hostPageBudget, shedMode: config.shedMode,
      globalConcurrency: config.globalConcurrency,
    },
  });
  return new NodeFrontier(frontier, redis, config.prefix, config.redisMemoryBudgetBytes);
}
