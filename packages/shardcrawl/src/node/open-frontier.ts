// The node's one way into its Redis state: the Frontier (queues, leases, seen filter, parse
// queue, robots cache, scope, flow signals; every key is frontier/keys.ts's) configured from the
// NodeConfig, with the verbs the fetcher, parser and supervisor speak, and the parser side's seen
// cache. Processes call NodeFrontier only; helpers name the few methods they need (Pick<...>).
import type { Redis } from "ioredis";
import {
  DEFAULT_SEEN_CACHE_ENTRIES, Frontier, MemoryGovernor, SeenCache, SpillStore, redisUsedMemory, robotsCacheMaxBytes,
  type AddLinksResult, type BloomParams, type BloomStatus, type ExclusionList, type FrontierStats, type HashedLink, type HostFeedback, type HostLimits, type HostPressure,
  type LeaseBatch, type MemoryBudget, type ParseQueue, type RobotsCache, type RobotsOutages, type SpooledPage, type TakenPage, type Exclusion,
} from "../frontier/index.js";
import type { RobotsEntry } from "../fetch/robots.js";
import { hostOf } from "../url/normalize.js";
import type { ScopeMode } from "../url/scope.js";
import type { ScopeSpec } from "../url/scope.js";
import type { NodeConfig } from "./config.js";
import type { FetchedPage, FetchErrorClass, Lease } from "../shared/types.js";
import type { DiscoveredLink } from "../shared/types.js";

export type { ScopeSpec } from "../url/scope.js";

/** Flat numbers for progress, status and the summary: the frontier's, and totals read from its counters. */
export interface NodeStats extends FrontierStats {
  fetched: number;
  parsed: number;
  failed: number;
  errors: number;
  robotsDisallowed: number;
  discovered: number;
  outOfScope: number;
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
    private readonly frontier: Frontier,
    private readonly memoryBudgetBytes = 0,
    /** URLs the parser's seen cache holds (frontier/seen-cache.ts). */
    private readonly seenCacheEntries = DEFAULT_SEEN_CACHE_ENTRIES,
  ) {}

  // --- parts with their own small APIs ---------------------------------------------------
  get robots(): RobotsCache { return this.frontier.robots; }
  get outages(): RobotsOutages { return this.frontier.outages; }
  get exclusions(): ExclusionList { return this.frontier.exclusions; }
  get parse(): ParseQueue { return this.frontier.parse; }
  get bloom(): BloomParams { return this.frontier.bloom; }

  // --- seeds and scope -------------------------------------------------------------------
  async saveScope(mode: ScopeMode, seeds: string[]): Promise<void> {
    await this.frontier.scope.save(mode, seeds);
  }

  async hasScope(): Promise<boolean> {
    return this.frontier.scope.exists();
  }

  async loadScope(): Promise<ScopeSpec> {
    return this.frontier.scope.load();
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

  /** Links from another node (inbox ingest) or any other source past the seen filter. */
  addLinks(links: readonly HashedLink[], opts: { now?: number; kind?: "seeds" | "discovered" } = {}): Promise<AddLinksResult> {
    return this.frontier.addLinks(links, opts);
  }

  /** Re-crawl visits: queued like any URL (politeness applies), past the seen filter. */
  addRevisits(visits: ReadonlyArray<{ url: string; host: string }>, tier: number, now: number = Date.now(), front = false): Promise<number> {
    return this.frontier.addRevisits(visits, tier, now, front);
  }

  /** The stored origin of a host, or null when the host is unknown. */
  mightHaveSeen(urls: readonly string[]): Promise<boolean[]> {
    return this.frontier.mightHaveSeen(urls);
  }

  hostOrigin(host: string): Promise<string | null> {
    return this.frontier.hostOrigin(host);
  }

  // --- fetcher side ----------------------------------------------------------------------
  /** `owner` (fetcherLeaseOwner) lets the supervisor return these leases at once if this process dies. */
  async lease(max: number, now: number, ttlMs?: number, owner?: string): Promise<LeaseBatch> {
    return this.frontier.lease(max, now, ttlMs, owner);
  }

  /** Host affinity's start-up handshake (Frontier.joinAffinity): fetcher slots asking now. */
  joinAffinity(owner: string, now: number = Date.now()): Promise<number> {
    return this.frontier.joinAffinity(owner, now);
  }

  /** Adds to a stats counter (blocked time, upstream events). */
  async count(field: string, by: number): Promise<void> {
    await this.frontier.addCounters([[field, by]]);
  }

  /** Adds to several stats counters at once (StatsBatch). */
  addCounters(deltas: Iterable<readonly [string, number]>): Promise<void> {
    return this.frontier.addCounters(deltas);
  }

  /** A parser's write buffer fill (StorageSignal). */
  reportWriteBuffer(consumer: string, used: number, peak: number, storageUntil?: number): Promise<void> {
    return this.frontier.reportWriteBuffer(consumer, used, peak, storageUntil);
  }

  /** Pushes this fetcher's fetch times to the node's sample and returns the sample (lease TTL). */
  shareFetchTimes(batch: readonly number[], size: number): Promise<number[]> {
    return this.frontier.shareFetchTimes(batch, size);
  }

  async parseQueueHasRoom(): Promise<boolean> {
    return this.frontier.parse.hasRoom();
  }

  /** Milliseconds until the earliest ready host is due (null when no host is ready). */
  async msUntilNextDue(now: number, signed = false): Promise<number | null> {
    const lag = await this.frontier.readyLagMs(now);
    if (lag === null) return null;
    // signed: negative when the host is overdue (metrics: how far fetchers lag the schedule).
    return signed ? lag : Math.max(0, lag);
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

  setHostLimits(host: string, limits: HostLimits, now: number = Date.now()): Promise<void> {
    return this.frontier.setHostLimits(host, limits, now);
  }

  /** Node-wide signals (upstream pause or stop, disk full, the memory governor's cap). */
  setFlow(s: Parameters<Frontier["setFlow"]>[0]): Promise<void> {
    return this.frontier.setFlow(s);
  }

  flowState(): ReturnType<Frontier["flowState"]> {
    return this.frontier.flowState();
  }

  acquireIpSlot(addr: string, lease: Pick<Lease, "id" | "expiresAt">, max: number, now: number = Date.now()): Promise<boolean> {
    return this.frontier.acquireIpSlot(addr, lease, max, now);
  }

  releaseIpSlot(addr: string, lease: Pick<Lease, "id">): Promise<void> {
    return this.frontier.releaseIpSlot(addr, lease);
  }

  /** The memory governor over this frontier's queues. */
  memoryGovernor(budget: MemoryBudget): MemoryGovernor {
    return new MemoryGovernor(this.frontier, budget);
  }

  /** Spill mode's file store (URLs shed to disk and re-admitted) over this frontier. */
  spillStore(dir: string): SpillStore {
    return new SpillStore(dir, this.frontier);
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

  /** A 304 on a re-crawl visit: the stored copy stays current. */
  completeNotModified(lease: Lease, now: number, feedback?: HostFeedback): Promise<boolean> {
    return this.frontier.completeNotModified(lease, now, feedback);
  }

  // --- parser side -----------------------------------------------------------------------
  async recoverParseConsumer(consumer: string): Promise<number> {
    return this.frontier.parse.recover(consumer);
  }

  async takePages(consumer: string, max: number, blockMs: number): Promise<TakenPage[]> {
    return this.frontier.parse.take(consumer, max, { blockMs });
  }

  /** False when the page was no longer ours (recovered and handed to another consumer). */
  async ackPage(consumer: string, id: string, links: HashedLink[], opts: { error: string | null; unknownOnly?: boolean }): Promise<boolean> {
    const cache = this.seenCache();
    // `links` passed the admission chain (parse/route-links.ts); the seen cache answers the known
    // (unknownOnly: the caller already asked it, unknownLinks).
    const send = opts.unknownOnly ? links : cache.unknown(links);
    const r = await this.frontier.parse.ack(consumer, id, send, opts.error ? { parseError: opts.error } : {});
    if (!r.acked) return false;
    this.seenCachedUncounted += links.length - send.length;
    // Every link sent is now in the filter unless some were refused for want of room (bits left
    // clear, and the script does not say which): a batch with refusals is not remembered.
    if (r.dropped === 0) for (const url of r.sentUrls) cache.remember(url);
    return true;
  }

  /**
   * A page's links without those the seen cache knows (counted as its hits). A parser asks before
   * the admission chain: a known link was admitted when it was first sent (refused links never reach
   * Redis, so never the cache) and is a duplicate whatever the chain says now, so most of a page's
   * links skip the chain's filters.
   */
  unknownLinks<L extends { url: string }>(links: readonly L[]): L[] {
    const cache = this.seenCache();
    const send = cache.unknown(links);
    this.seenCachedUncounted += links.length - send.length;
    return send;
  }

  /** Links the seen cache answered since the last call (the caller adds them to the "duplicates" stat). */
  takeSeenCacheHits(): number {
    const n = this.seenCachedUncounted;
    this.seenCachedUncounted = 0;
    return n;
  }

  private seenCache(): SeenCache {
    if (!this.seen) {
      const cache = (this.seen = new SeenCache(this.seenCacheEntries));
      // A restarted Redis may have lost its last second of writes (AOF everysec): forget everything.
      this.frontier.redis.on("reconnecting", () => cache.clear());
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

  /** Returns the leases a (dead) owner held. */
  releaseOwner(owner: string, now: number = Date.now()): Promise<number> {
    return this.frontier.releaseOwner(owner, now);
  }

  /** Removes the queued URLs an exclusion covers. */
  purgeExcluded(e: Exclusion, now: number = Date.now()): Promise<number> {
    return this.frontier.purgeExcluded(e, now);
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

  hostPressure(topN: number): Promise<HostPressure[]> {
    return this.frontier.hostPressure(topN);
  }

  /**
   * The node's counters and queue sizes, with the flow-control pressure. The pressure's top hosts,
   * Redis memory and seen-filter figures take ~10 Redis calls: given `earlier`, those are kept
   * from it and only its flags (quota stop, disk full, governor cap) are read again.
   */
  async stats(earlier?: NodePressure): Promise<NodeStats> {
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
      pressure: earlier ? await this.withFreshFlags(earlier) : await this.pressure(),
    };
  }

  private async withFreshFlags(earlier: NodePressure): Promise<NodePressure> {
    const { totalCap: _t, stopped: _s, diskFull: _d, ...kept } = earlier;
    const flow = await this.frontier.flowState();
    return {
      ...kept,
      ...(flow.totalCap !== undefined ? { totalCap: flow.totalCap } : {}),
      ...(flow.stop !== undefined ? { stopped: flow.stop } : {}),
      ...(flow.diskFull !== undefined ? { diskFull: flow.diskFull } : {}),
    };
  }

  async pressure(): Promise<NodePressure> {
    const f = this.frontier;
    const flow = await f.flowState();
    return {
      hosts: await f.hostPressure(TOP_HOSTS),
      hostsUnderBackoff: await f.hostsUnderBackoff(),
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

/** `child`: a fetcher or parser, opened after the supervisor published the flow settings. */
export async function openFrontier(redis: Redis, config: NodeConfig, opts: { child?: boolean } = {}): Promise<NodeFrontier> {
  const frontier = await Frontier.open(redis, {
    publishFlow: !opts.child,
    prefix: config.prefix,
    // A child resumes the filter the supervisor created and checked against this config (sizing it
    // again is a numeric search of ~10 ms per process).
    ...(opts.child ? {} : { bloom: { expectedUrls: config.expectedUrls, falsePositiveRate: config.falsePositiveRate } }),
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
    robotsCacheMaxBytes: robotsCacheMaxBytes(config.robotsCacheMaxBytes, config.redisMemoryBudgetBytes),
    flow: {
      aimdFloor: config.aimdFloor, aimdIncrease: config.aimdIncrease, aimdDecrease: config.aimdDecrease,
      aimdLatencyFactor: config.aimdLatencyFactor, aimdLatencyMinMs: config.aimdLatencyMinMs, aimdProbeMs: config.aimdProbeMs,
      aimdMaxDelayMultiplier: config.aimdMaxDelayMultiplier, hostPageBudget: config.hostPageBudget, shedMode: config.shedMode,
      globalConcurrency: config.globalConcurrency,
    },
  });
  return new NodeFrontier(frontier, config.redisMemoryBudgetBytes, config.seenCacheEntries);
}
