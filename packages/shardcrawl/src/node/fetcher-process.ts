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
import { childContext, exitFatal, sleep } from "./child-runtime.js";
import { takeIpSlot } from "./ip-slots.js";
import { openFrontier } from "./open-frontier.js";
import { createHttpClient, type HttpClient } from "../fetch/http-client.js";
import { FetchPipeline } from "../fetch/fetch-pipeline.js";
import { RobotsMemo } from "../fetch/robots-memo.js";
import { processAdmissionCounts } from "../admit/index.js";
import { deferHostFor, robotsStep } from "./robots-step.js";
import { PageLogWriter } from "../store/page-log.js";
import type { RetrySettings } from "../fetch/retry-policy.js";
import { SharedLeaseTtl } from "../schedule/lease-ttl.js";
import { fetcherLeaseOwner } from "./lease-owner.js";
import { dnsServerLookup } from "../fetch/dns-servers.js";
import { isDiskFull, LeaseTimeDiskCheck, minFreeOf, pauseForDiskFull } from "./disk-pause.js";
import { StatsBatch, countingPageLog } from "./stats-batch.js";
import { ConnectionStatsReporter } from "../fetch/connection-stats.js";
import { DnsStatsReporter } from "../fetch/dns-stats.js";
import { PageSpool } from "./page-spool.js";
import { reportEventLoop } from "./child-telemetry.js";
import type { Lease } from "../shared/types.js";
import { RecrawlVisits } from "../schedule/recrawl/continuous-visits.js";

/** Blocked time is added to the Redis counters at most this often. */
const BLOCKED_FLUSH_MS = 1_000;

async function main(): Promise<void> {
  const ctx = childContext();
  const { config } = ctx;
  const frontier = await openFrontier(ctx.redis, config);
  // Metrics: page-log lines by outcome go to the Redis stats (connections and TLS handshakes through
  // the ConnectionStatsReporter below); loop lag over IPC.
  const stats = new StatsBatch(frontier);
  reportEventLoop((m) => ctx.send(m));
  const client: HttpClient = createHttpClient({
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
  // A body the spool cannot take (disk full) still reaches the parser, inline; a full disk pauses the node.
  const spool = new PageSpool(config.out, `${config.nodeName}-f${ctx.index}`, async (err) => {
    if (isDiskFull(err)) await pauseForDiskFull(frontier, `fetcher ${ctx.index}`, err).catch(() => undefined);
    else ctx.log(`spool write failed (${(err as Error).message}); the body goes through Redis`);
  });
  const pageLog = countingPageLog(new PageLogWriter({ dir: join(config.out, "pages"), prefix: `${config.nodeName}-f${ctx.index}`, maxFileBytes: config.warcMaxFileBytes }), stats);
  const inFlight = new Set<Promise<void>>();
  const retry: RetrySettings = {
    maxAttempts: config.retryMaxAttempts, baseMs: config.retryBaseMs, capMs: config.retryCapMs, maxRetryAfterMs: config.maxRetryAfterMs,
    upstreamLimitHeader: config.upstreamLimitHeader, upstreamQuotaHeader: config.upstreamQuotaHeader,
  };
  // One sample for the whole node (P fetchtimes), so every fetcher leases with the same TTL.
  const leaseTtl = new SharedLeaseTtl((batch, size) => frontier.shareFetchTimes(batch, size), {
    percentile: config.leaseTtlPercentile, headroom: 2, floorMs: config.leaseTtlFloorMs, capMs: config.leaseTtlMs, size: 1024, minSamples: 50,
  });
  const ttlSync = setInterval(() => void leaseTtl.sync().catch((err: unknown) => ctx.log(`lease ttl sample: ${(err as Error).message}`)), 1000);
  // The end of a response, as the host's politeness clock should see it (see politenessMarginMs).
  const endNow = () => Date.now() + config.politenessMarginMs;
  // Wakes the pull loop when a fetch completes: its host may be due again soon.
  let wake: () => void = () => undefined;
  const nextWake = () => new Promise<void>((r) => (wake = r));
  const log = (m: string) => ctx.log(m);
  const pipeline = new FetchPipeline({
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
    revisits: RecrawlVisits.forConfig(ctx.redis, config),
    spool: { complete: (lease, end, page, body, feedback) => spool.complete(frontier, lease, end, page, body, feedback) },
    pageLog, leaseTtl, retry,
    settings: { delayMs: config.delayMs, maxCrawlDelayMs: config.maxCrawlDelayMs, totalTimeoutMs: config.timeouts.totalMs, cutDrainBytes: config.cutDrainBytes, politenessMarginMs: config.politenessMarginMs },
    log,
  });

  // Fetcher 0 only: the memory governor (Redis under its budget) and, in spill mode, the spill
  // store (shed URLs to disk and back). One loop, once a second; errors are logged, not fatal.
  function startFlowKeeper(): { stop(): Promise<void> } {
    const governor = frontier.memoryGovernor({ budgetBytes: config.redisMemoryBudgetBytes, high: 0.85, low: 0.7 });
    const spill = config.shedMode === "spill" ? frontier.spillStore(join(config.out, "spill")) : undefined;
    let running = true;
    const loop = (async () => {
      while (running && !ctx.isStopping()) {
        try {
          if (config.redisMemoryBudgetBytes > 0) await governor.tick();
          if (spill) {
            while ((await spill.drain()) > 0 && running);
            await spill.readmitIfRoom();
          }
        } catch (err) {
          ctx.log(`flow keeper: ${(err as Error).message}`);
        }
        await Promise.race([sleep(1000), ctx.stopRequested]);
      }
      // Whatever was shed meanwhile goes to disk before we exit (nothing lost).
      if (spill) {
        try {
          while ((await spill.drain()) > 0);
        } catch (err) {
          ctx.log(`flow keeper: final spill drain failed: ${(err as Error).message}`);
        }
        spill.close();
      }
    })();
    return {
      stop: async () => {
        running = false;
        await loop;
      },
    };
  }

  function track(lease: Lease): void {
    const p = pipeline.handle(lease)
      .catch(async (err: unknown) => {
        // A full disk (page log) pauses the node; a bug or a Redis failure: return the URL rather than lose it.
        if (isDiskFull(err)) await pauseForDiskFull(frontier, `fetcher ${ctx.index}`, err).catch(() => undefined);
        else ctx.log(`fetch of ${lease.url} failed unexpectedly: ${(err as Error).stack ?? String(err)}`);
        await frontier.requeue(lease, endNow()).catch(() => undefined);
      })
      .finally(() => {
        inFlight.delete(p);
        wake();
      });
    inFlight.add(p);
  }

  // Blocked time per reason, flushed to the stats hash (blockedMs:<reason>) about once a second.
  const blocked = new Map<string, number>();
  const connectionStats = new ConnectionStatsReporter(client.connections);
  const dnsStats = new DnsStatsReporter(client.dns.counters);
  let lastFlush = Date.now();
  async function flushBlocked(force = false): Promise<void> {
    if (!force && Date.now() - lastFlush < BLOCKED_FLUSH_MS) return;
    lastFlush = Date.now();
    for (const [reason, ms] of blocked) await frontier.count(`blockedMs:${reason}`, ms);
    blocked.clear();
    for (const [field, n] of connectionStats.take()) await frontier.count(field, n);
    for (const [field, n] of dnsStats.take()) await frontier.count(field, n);
    // Opt-out refusals at lease time and the admission chain's sampled timings.
    processAdmissionCounts.drainInto(stats);
  }
  let quotaSaid = false;

  const keeper = ctx.index === 0 ? startFlowKeeper() : undefined;
  const sweeper = ctx.index === 0 ? spool.startSweeper(frontier, (m) => ctx.log(m)) : undefined;
  // Our leases are listed under this id: if we die, the supervisor returns them at once.
  const leaseOwner = fetcherLeaseOwner(ctx.index, process.pid);
  // Free space checked before every lease batch, not only by the supervisor's timer: a fast crawl
  // on a small disk can otherwise write past the threshold between two checks.
  const diskCheck = new LeaseTimeDiskCheck(frontier, config.out, `fetcher ${ctx.index}`, minFreeOf(config.minFreeDisk));

  while (!ctx.isStopping()) {
    const free = config.fetcherConcurrency - inFlight.size;
    if (free <= 0) {
      await Promise.race([...inFlight, ctx.stopRequested]);
      continue;
    }
    await diskCheck.beforeLease();
    const batch = await frontier.lease(Math.min(free, 64), Date.now(), leaseTtl.ttlMs(), leaseOwner);
    for (const l of batch.leases) track(l);
    if (batch.blocked && batch.blocked !== "budget") {
      // Pull, don't push: a full parse queue (or the global cap, or an upstream pause) stops
      // leasing until it clears; the wait is measured.
      if (batch.blocked === "quota" && !quotaSaid) {
        quotaSaid = true;
        ctx.log(`fetching stopped: ${batch.message ?? "upstream quota exhausted"}`);
      }
      const t0 = Date.now();
      await Promise.race([sleep(batch.blocked === "quota" || batch.blocked === "disk-full" ? 500 : 50), nextWake(), ctx.stopRequested]);
      blocked.set(batch.blocked, (blocked.get(batch.blocked) ?? 0) + (Date.now() - t0));
      await flushBlocked();
      continue;
    }
    await flushBlocked();
    if (batch.blocked === "budget") {
      // The page budget is used up: nothing to lease until a retry or requeue gives a slot back
      // (the supervisor ends the crawl meanwhile). Without this wait the loop spun every 2 ms.
      await Promise.race([sleep(250), nextWake(), ctx.stopRequested]);
      continue;
    }
    if (batch.leases.length === 0) {
      const woken = nextWake();
      const wait = await frontier.msUntilNextDue(Date.now());
      // Due hosts left unleased are other fetchers' (host affinity) until their grace runs out:
      // poll every 25 ms meanwhile rather than every 2.
      await Promise.race([sleep(Math.max(wait === 0 ? 25 : 2, Math.min(wait ?? 250, 250))), woken, ctx.stopRequested]);
    }
  }
  clearInterval(ttlSync);
  await leaseTtl.sync().catch(() => undefined);
  await keeper?.stop();
  // Graceful stop: finish what is in flight (each fetch is bounded by its total timeout).
  await Promise.all([...inFlight]);
  // After the in-flight fetches: a body spooled but not yet queued must not be swept as unreferenced.
  await (sweeper ? sweeper.stop() : spool.close());
  // Once, at the very end: blocked time, and the connections the last fetches opened.
  await flushBlocked(true);
  await pageLog.close();
  await stats.close();
  await client.close();
  ctx.redis.disconnect();
  process.exit(0);
}

main().catch((err: unknown) => exitFatal("fetcher", err));
