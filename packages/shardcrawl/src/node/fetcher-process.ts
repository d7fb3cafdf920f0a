// A fetcher process: a pull loop that leases ready (host, URL) pairs from the node's Redis and runs
// each through the fetch pipeline (fetch/fetch-pipeline.ts: admit, robots gate, conditional
// request, fetch, decide, feedback, spool). Every outcome is routed by origin: a site's
// 429/503/timeouts/latency feed that host's AIMD limit in Redis, retries go back through the
// frontier, our upstream plan's limit pauses all leasing and its quota stops it. Time spent unable
// to lease (parse queue full, global cap, upstream pause) is counted as stats blockedMs:<reason>.
// Leases last a percentile of the node's recent fetch times (one sample in Redis shared by all
// fetchers, schedule/lease-ttl.ts), and no fetch outlives its lease. Fetcher 0 also runs the memory
// governor and the spill store.
import { join } from "node:path";
import { childContext, exitFatal, sleep, type ChildContext } from "./child-runtime.js";
import { takeIpSlot } from "./ip-slots.js";
import { openFrontier, type NodeFrontier } from "./open-frontier.js";
import { createHttpClient, type HttpClient } from "../fetch/http-client.js";
import { FetchPipeline, type FetchPipelineDeps } from "../fetch/fetch-pipeline.js";
import { RobotsMemo } from "../fetch/robots-memo.js";
// The counters alone, not the admit/ barrel: the fetch-time chain (fetch-pipeline.ts) uses few of its modules.
import { processAdmissionCounts } from "../admit/admission-counts.js";
import { deferHostFor, robotsStep } from "./robots-step.js";
import { PageLogWriter } from "../store/page-log.js";
import type { RetrySettings } from "../fetch/retry-policy.js";
import { SharedLeaseTtl } from "../schedule/lease-ttl.js";
import { fetcherLeaseOwner } from "./lease-owner.js";
import { dnsServerLookup } from "../fetch/dns-servers.js";
import { isDiskFull, LeaseTimeDiskCheck, minFreeOf, pauseForDiskFull } from "./disk-pause.js";
import { StatsBatch, countingPageLog } from "./stats-batch.js";
import { FetcherCounters } from "../fetch/fetcher-counters.js";
import { PullLoop } from "../fetch/pull-loop.js";
import { awaitFetchers } from "./await-fetchers.js";
import { startFlowKeeper, type FlowKeeper } from "./flow-keeper.js";
import { PageSpool } from "./page-spool.js";
import { reportEventLoop } from "./child-telemetry.js";
import type { RecrawlVisits } from "../schedule/recrawl/continuous-visits.js";
import type { NodeConfig } from "./config.js";

/** How long a starting fetcher waits for the node's other fetchers before its first lease (await-fetchers.ts). */
const FETCHERS_START_WAIT_MS = 30_000;
/** How often a fetcher with a free request slot marks itself as asking (below the 1 s least affinity grace). */
const AFFINITY_HEARTBEAT_MS = 400;

async function main(): Promise<void> {
  const ctx = childContext();
  const { config } = ctx;
  const frontier = await openFrontier(ctx.redis, config, { child: true });
  // Page-log lines by outcome go to the Redis stats; loop lag over IPC.
  const stats = new StatsBatch(frontier);
  reportEventLoop((m) => ctx.send(m));
  const client = httpClientFor(config);
  // A body the spool cannot take (disk full) still reaches the parser, inline; a full disk pauses the node.
  const spool = new PageSpool(config.out, `${config.nodeName}-f${ctx.index}`, async (err) => {
    if (isDiskFull(err)) await pauseForDiskFull(frontier, `fetcher ${ctx.index}`, err).catch(() => undefined);
    else ctx.log(`spool write failed (${(err as Error).message}); the body goes through Redis`);
  });
  const pageLog = countingPageLog(new PageLogWriter({ dir: join(config.out, "pages"), prefix: `${config.nodeName}-f${ctx.index}`, maxFileBytes: config.warcMaxFileBytes }), stats);
  // One sample for the whole node (P fetchtimes), so every fetcher leases with the same TTL.
  const leaseTtl = new SharedLeaseTtl((batch, size) => frontier.shareFetchTimes(batch, size), {
    percentile: config.leaseTtlPercentile, headroom: 2, floorMs: config.leaseTtlFloorMs, capMs: config.leaseTtlMs, size: 1024, minSamples: 50,
  });
  const ttlSync = setInterval(() => void leaseTtl.sync().catch((err: unknown) => ctx.log(`lease ttl sample: ${(err as Error).message}`)), 1000);
  // Continuous mode only: the re-crawl modules (listing rules, feeds, an HTML parser) cost a process ~45 ms to load.
  const revisits = config.recrawl ? (await import("../schedule/recrawl/continuous-visits.js")).RecrawlVisits.forConfig(ctx.redis, config) : undefined;
  const pipeline = pipelineFor(ctx, frontier, client, { spool, pageLog, leaseTtl, revisits });
  const counters = new FetcherCounters({
    count: (field, by) => frontier.count(field, by), connections: client.connections, dns: client.dns.counters,
    // Opt-out refusals at lease time and the admission chain's sampled timings.
    alsoDrain: () => processAdmissionCounts.drainInto(stats),
  });
  const keeper = ctx.index === 0 ? flowKeeperFor(ctx, frontier) : undefined;
  const sweeper = ctx.index === 0 ? spool.startSweeper(frontier, (m) => ctx.log(m)) : undefined;
  const loop = pullLoopFor(ctx, frontier, pipeline, counters, leaseTtl);

  const owner = fetcherLeaseOwner(ctx.index, process.pid);
  if (!ctx.restarted && config.fetchers > 1) {
    const asking = await awaitFetchers({
      join: () => frontier.joinAffinity(owner), fetchers: config.fetchers,
      maxWaitMs: FETCHERS_START_WAIT_MS, pollMs: 100, isStopping: () => ctx.isStopping(), sleep,
    });
    if (asking < config.fetchers) ctx.log(`leasing with ${asking} of ${config.fetchers} fetchers up after ${FETCHERS_START_WAIT_MS / 1000} s; the others' hosts move to them when they ask`);
  }
  // Host affinity: while this fetcher has a free request slot it keeps saying so (a timer, not the
  // lease loop: a fetcher busy with a burst of handshakes can take seconds between lease calls, and
  // its hosts must not move for that); a full one goes quiet and its due hosts go to the others.
  const heartbeat = setInterval(() => {
    if (loop.running < config.fetcherConcurrency) void frontier.joinAffinity(owner).catch(() => undefined);
  }, AFFINITY_HEARTBEAT_MS);
  await loop.run();
  clearInterval(heartbeat);
  clearInterval(ttlSync);
  await leaseTtl.sync().catch(() => undefined);
  await keeper?.stop();
  // Graceful stop: finish what is in flight (each fetch is bounded by its total timeout).
  await loop.drain();
  // After the in-flight fetches: a body spooled but not yet queued must not be swept as unreferenced.
  await (sweeper ? sweeper.stop() : spool.close());
  // Once, at the very end: blocked time, and the connections the last fetches opened.
  await counters.flush(true);
  await pageLog.close();
  await stats.close();
  await client.close();
  ctx.redis.disconnect();
  process.exit(0);
}

function httpClientFor(config: NodeConfig): HttpClient {
  return createHttpClient({
    userAgent: config.userAgent,
    ...(config.fromHeader ? { from: config.fromHeader } : {}),
    connectTo: config.connectTo,
    resolve: config.resolve,
    // A name without an address is remembered no longer than the robots.txt step waits before it
    // confirms an NXDOMAIN (robots-step.ts): with host affinity the same fetcher makes both lookups,
    // and the confirmation must ask the DNS server again, not this cache.
    dnsNegativeTtlMs: Math.min(60_000, config.robotsBackoffBaseMs),
    allowPrivate: config.allowPrivate,
    caFile: config.caFile,
    ...(config.dnsServers.length > 0 ? { dnsLookup: dnsServerLookup(config.dnsServers, config.timeouts.connectMs) } : {}),
    dnsMinTtlMs: config.dnsMinTtlMs,
    dnsMaxTtlMs: config.dnsMaxTtlMs,
    dnsConcurrency: config.dnsConcurrency,
    timeouts: config.timeouts,
    maxBodyBytes: config.maxPageBytes,
    connectionsPerOrigin: Math.max(1, config.hostConcurrency),
  });
}

/** The end of a response, as the host's politeness clock should see it (see politenessMarginMs). */
function endNowOf(config: NodeConfig): () => number {
  return () => Date.now() + config.politenessMarginMs;
}

function pipelineFor(
  ctx: ChildContext,
  frontier: NodeFrontier,
  client: HttpClient,
  parts: { spool: PageSpool; pageLog: FetchPipelineDeps["pageLog"]; leaseTtl: SharedLeaseTtl; revisits: RecrawlVisits | undefined },
): FetchPipeline {
  const { config } = ctx;
  const log = (m: string) => ctx.log(m);
  const retry: RetrySettings = {
    maxAttempts: config.retryMaxAttempts, baseMs: config.retryBaseMs, capMs: config.retryCapMs, maxRetryAfterMs: config.maxRetryAfterMs,
    upstreamLimitHeader: config.upstreamLimitHeader, upstreamQuotaHeader: config.upstreamQuotaHeader,
  };
  return new FetchPipeline({
    frontier: {
      fail: (lease, now, opts) => frontier.fail(lease, now, opts),
      requeue: (lease, now) => frontier.requeue(lease, now),
      retry: (lease, now, opts) => frontier.retry(lease, now, opts),
      count: (field, by) => frontier.count(field, by),
      setHostDelay: (host, delayMs) => (delayMs === null ? frontier.setHostLimits(host, { delayMs: null }) : frontier.setHostDelay(host, delayMs)),
      setFlow: (flow) => frontier.setFlow(flow),
      completeNotModified: (lease, end, feedback) => frontier.completeNotModified(lease, end, feedback),
    },
    exclusions: () => frontier.exclusions.current(),
    robots: new RobotsMemo((origin) => frontier.getRobots(origin), config.userAgent, config.maxCrawlDelayMs, config.delayMs),
    fetchRobots: (lease, origin) => robotsStep(client, frontier, config, lease, origin, log),
    deferHost: (lease, origin, ask) => deferHostFor(frontier, lease, origin, ask, log),
    http: client,
    // --ip-concurrency: a slot of the address this lease's requests go to (node/ip-slots.ts).
    ipSlot: (lease) => (config.ipConcurrency <= 0 ? Promise.resolve(null) : takeIpSlot(frontier, (url) => client.addressOf(url), lease, config.ipConcurrency)),
    // Continuous mode: revisits are conditional and a 304 is recorded without parsing.
    revisits: parts.revisits,
    spool: { complete: (lease, end, page, body, feedback) => parts.spool.complete(frontier, lease, end, page, body, feedback) },
    pageLog: parts.pageLog, leaseTtl: parts.leaseTtl, retry,
    settings: { delayMs: config.delayMs, maxCrawlDelayMs: config.maxCrawlDelayMs, totalTimeoutMs: config.timeouts.totalMs, cutDrainBytes: config.cutDrainBytes, politenessMarginMs: config.politenessMarginMs },
    log,
  });
}

/** Fetcher 0's: Redis under its memory budget, shed URLs to disk and back (flow-keeper.ts). */
function flowKeeperFor(ctx: ChildContext, frontier: NodeFrontier): FlowKeeper {
  const { config } = ctx;
  return startFlowKeeper({
    ...(config.redisMemoryBudgetBytes > 0 ? { governor: frontier.memoryGovernor({ budgetBytes: config.redisMemoryBudgetBytes, high: 0.85, low: 0.7 }) } : {}),
    ...(config.shedMode === "spill" ? { spill: frontier.spillStore(join(config.out, "spill")) } : {}),
    stopRequested: ctx.stopRequested, isStopping: () => ctx.isStopping(), log: (m) => ctx.log(m), sleep,
  });
}

function pullLoopFor(ctx: ChildContext, frontier: NodeFrontier, pipeline: FetchPipeline, counters: FetcherCounters, leaseTtl: SharedLeaseTtl): PullLoop {
  const { config } = ctx;
  // Our leases are listed under this id: if we die, the supervisor returns them at once.
  const leaseOwner = fetcherLeaseOwner(ctx.index, process.pid);
  const diskCheck = new LeaseTimeDiskCheck(frontier, config.out, `fetcher ${ctx.index}`, minFreeOf(config.minFreeDisk));
  const endNow = endNowOf(config);
  return new PullLoop({
    concurrency: config.fetcherConcurrency,
    beforeLease: () => diskCheck.beforeLease(),
    lease: (max) => frontier.lease(max, Date.now(), leaseTtl.ttlMs(), leaseOwner),
    handle: (lease) => pipeline.handle(lease),
    failed: async (lease, err) => {
      // A full disk (page log) pauses the node; a bug or a Redis failure: return the URL rather than lose it.
      if (isDiskFull(err)) await pauseForDiskFull(frontier, `fetcher ${ctx.index}`, err).catch(() => undefined);
      else ctx.log(`fetch of ${lease.url} failed unexpectedly: ${(err as Error).stack ?? String(err)}`);
      await frontier.requeue(lease, endNow()).catch(() => undefined);
    },
    msUntilNextDue: (now) => frontier.msUntilNextDue(now),
    blocked: (reason, ms) => counters.blocked(reason, ms),
    afterLease: () => counters.flush(),
    stopRequested: ctx.stopRequested, isStopping: () => ctx.isStopping(), log: (m) => ctx.log(m), sleep,
  });
}

main().catch((err: unknown) => exitFatal("fetcher", err));
