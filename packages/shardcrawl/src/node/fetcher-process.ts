// A fetcher process: a pull loop that leases ready (host, URL) pairs from the node's Redis, checks
// robots.txt (fetching it first when the cache has none), fetches under the host's politeness
// limits and hands the raw response to the parse queue. Failures become page-log lines.
// Flow control: every outcome is routed by origin -- a site's 429/503/timeouts/latency
// feed that host's AIMD limit in Redis (lib.lua feedback), retries go back through the frontier
// (fetch/retry-policy.ts), our upstream plan's limit pauses all leasing and its quota stops it.
// Time spent unable to lease (parse queue full, global cap, upstream pause) is counted as
// stats blockedMs:<reason>. Leases last a percentile of the node's recent fetch times (one sample
// in Redis shared by all fetchers, schedule/lease-ttl.ts),
// and no fetch outlives its lease. Fetcher 0 also runs the memory governor and the spill store.
import { join } from "node:path";
import { childContext, exitFatal, sleep } from "./child-runtime.js";
import { takeIpSlot } from "./ip-slots.js";
import { openFrontier } from "./open-frontier.js";
import { DEFAULT_KEEP_ALIVE_MS, createHttpClient, fetchedPageMeta, type HttpClient } from "../fetch/http-client.js";
import { compileRobots, type CompiledRobots, type RobotsEntry } from "../fetch/robots.js";
import { deferHostFor, robotsStep } from "./robots-step.js";
import { PageLogWriter } from "../store/page-log.js";
import { decide, type RetrySettings } from "../fetch/retry-policy.js";
import { SharedLeaseTtl } from "../schedule/lease-ttl.js";
import { fetcherLeaseOwner } from "./lease-owner.js";
import { dnsServerLookup } from "../fetch/dns-servers.js";
import { isDiskFull, pauseForDiskFull } from "./disk-pause.js";
import { MemoryGovernor, SpillStore } from "../frontier/index.js";
import { StatsBatch, countingPageLog } from "./stats-batch.js";
import { ConnectionStatsReporter } from "../fetch/connection-stats.js";
import { DnsStatsReporter } from "../fetch/dns-stats.js";
import { PageSpool } from "./page-spool.js";
import { reportEventLoop } from "./child-telemetry.js";
import type { FetchErrorClass, Lease, PageLogLine } from "../shared/types.js";
import { RecrawlVisits } from "./recrawl-visits.js";

const ROBOTS_MEMO_MAX = 10_000;
/** A fetch must end this long before its lease expires (the completion call needs time too). */
const LEASE_MARGIN_MS = 2_000;
/** A host's delay must leave this much of the keep-alive time for a drained connection to be reused. */
const DRAIN_DELAY_MARGIN_MS = 1_000;
/** Blocked time is added to the Redis counters at most this often. */
const BLOCKED_FLUSH_MS = 1_000;

async function main(): Promise<void> {
  const ctx = childContext();
  const { config } = ctx;
  const frontier = await openFrontier(ctx.redis, config);
  // Metrics: page-log lines by outcome go to the Redis stats (connections and TLS handshakes through
  // the ConnectionStatsReporter below); loop lag over IPC.
  const stats = new StatsBatch(ctx.redis, frontier.frontier.keys.stats);
  reportEventLoop((m) => ctx.send(m));
  const client: HttpClient = createHttpClient({
    userAgent: config.userAgent,
    ...(config.fromHeader ? { from: config.fromHeader } : {}),
    connectTo: config.connectTo,
    resolve: config.resolve,
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
  // Continuous mode: revisits are conditional and a 304 is recorded without parsing.
  const revisits = RecrawlVisits.forConfig(ctx.redis, config);
  // A body the spool cannot take (disk full) still reaches the parser, inline; a full disk pauses the node.
  const spool = new PageSpool(config.out, `${config.nodeName}-f${ctx.index}`, async (err) => {
    if (isDiskFull(err)) await pauseForDiskFull(frontier.frontier, `fetcher ${ctx.index}`, err).catch(() => undefined);
    else ctx.log(`spool write failed (${(err as Error).message}); the body goes through Redis`);
  });
  const pageLog = countingPageLog(new PageLogWriter({ dir: join(config.out, "pages"), prefix: `${config.nodeName}-f${ctx.index}`, maxFileBytes: config.warcMaxFileBytes }), stats);
  // Compiled robots per origin, so the hot path does not re-parse robots.txt for every URL.
  const robotsMemo = new Map<string, { compiled: CompiledRobots; kind: RobotsEntry["kind"]; reason?: string; errorClass?: FetchErrorClass; fetchedAt: number; expires: number }>();
  const inFlight = new Set<Promise<void>>();
  const retry: RetrySettings = {
    maxAttempts: config.retryMaxAttempts, baseMs: config.retryBaseMs, capMs: config.retryCapMs, maxRetryAfterMs: config.maxRetryAfterMs,
    upstreamLimitHeader: config.upstreamLimitHeader, upstreamQuotaHeader: config.upstreamQuotaHeader,
  };
  // One sample for the whole node (P fetchtimes), so every fetcher leases with the same TTL.
  const leaseTtl = new SharedLeaseTtl(ctx.redis, frontier.frontier.keys.fetchTimes, {
    percentile: config.leaseTtlPercentile, headroom: 2, floorMs: config.leaseTtlFloorMs, capMs: config.leaseTtlMs, size: 1024, minSamples: 50,
  });
  const ttlSync = setInterval(() => void leaseTtl.sync().catch((err: unknown) => ctx.log(`lease ttl sample: ${(err as Error).message}`)), 1000);
  // The end of a response, as the host's politeness clock should see it (see politenessMarginMs).
  const endNow = () => Date.now() + config.politenessMarginMs;
  // Wakes the pull loop when a fetch completes: its host may be due again soon.
  let wake: () => void = () => undefined;
  const nextWake = () => new Promise<void>((r) => (wake = r));

  /** Compiles an origin's rules and remembers them (compiling costs far more than matching a URL). */
  function remember(origin: string, entry: RobotsEntry): { compiled: CompiledRobots; kind: RobotsEntry["kind"]; reason?: string; errorClass?: FetchErrorClass } {
    const compiled = compileRobots(entry, config.userAgent, { maxCrawlDelayMs: config.maxCrawlDelayMs });
    robotsMemo.delete(origin);
    if (robotsMemo.size >= ROBOTS_MEMO_MAX) robotsMemo.delete(robotsMemo.keys().next().value!);
    const fresh = {
      compiled, kind: entry.kind, ...(entry.kind === "disallow-all" && entry.reason ? { reason: entry.reason } : {}),
      ...(entry.kind === "disallow-all" && entry.errorClass ? { errorClass: entry.errorClass } : {}), fetchedAt: entry.fetchedAt, expires: Date.now() + 60_000,
    };
    robotsMemo.set(origin, fresh);
    return fresh;
  }

  async function robotsFor(origin: string): Promise<{ compiled: CompiledRobots; kind: RobotsEntry["kind"]; reason?: string; errorClass?: FetchErrorClass } | null> {
    const memo = robotsMemo.get(origin);
    if (memo && memo.expires > Date.now()) return memo;
    const entry = await frontier.getRobots(origin);
    if (!entry) return null;
    // The same fetch of the file (another fetcher would have stored a newer fetchedAt): keep the
    // compiled rules rather than compile them again every minute (a large file costs ~40 ms).
    if (memo && memo.fetchedAt === entry.fetchedAt && memo.kind === entry.kind) {
      memo.expires = Date.now() + 60_000;
      return memo;
    }
    return remember(origin, entry);
  }

  function failureLine(lease: Lease, error: PageLogLine["error"], detail: string, timings: PageLogLine["timings"]): PageLogLine {
    return {
      url: lease.url, final_url: lease.url, status: null, error, error_detail: detail, content_type: null,
      bytes: 0, truncated: false, digest: null, fetched_at: new Date().toISOString(), timings, outlinks: 0,
      depth: lease.depth, attempt: lease.attempt,
    };
  }

  async function handle(lease: Lease): Promise<void> {
    // The site owners' opt-out list first: no request (not even robots.txt) to an excluded site.
    const exclusion = (await frontier.frontier.exclusions.current()).match(lease.url, lease.host);
    if (exclusion) {
      await pageLog.append(failureLine(lease, "excluded", `excluded by ${exclusion.pattern}${exclusion.reason ? ` (${exclusion.reason})` : ""}`, { total: 0 }));
      await frontier.fail(lease, Date.now(), { requested: false, errorClass: "excluded" });
      await frontier.count("excluded", 1);
      return;
    }
    // --ip-concurrency: a slot of the address this lease's requests go to (node/ip-slots.ts).
    if (config.ipConcurrency <= 0) return handleLease(lease);
    const slot = await takeIpSlot(frontier.frontier, (url) => client.addressOf(url), lease, config.ipConcurrency);
    if (slot === "full") {
      await frontier.count("ipFull", 1);
      await frontier.requeue(lease, Date.now());
      return;
    }
    try {
      await handleLease(lease);
    } finally {
      await slot?.release();
    }
  }

  async function handleLease(lease: Lease): Promise<void> {
    const origin = new URL(lease.url).origin;
    const robots = await robotsFor(origin);
    if (!robots) {
      // robots.txt is this slot's request; the page waits for the host's next turn. An outage
      // (5xx, 429, timeout, reset, transient DNS) holds the host instead: the URL is back in its
      // queue, unattempted, until the next robots.txt try (robots-step.ts).
      const step = await robotsStep(client, frontier, config, lease, origin, (m) => ctx.log(m));
      if (step.kind === "deferred") return;
      const { compiled } = remember(origin, step.entry);
      // Crawl-delay as the file asks it; a new file without one clears the old override.
      if (compiled.crawlDelayMs !== undefined && !compiled.crawlDelayTooLong) await frontier.setHostDelay(lease.host, compiled.crawlDelayMs);
      else if (compiled.crawlDelayMs === undefined && step.entry.kind !== "disallow-all") await frontier.frontier.setHostLimits(lease.host, { delayMs: null });
      await frontier.requeue(lease, endNow());
      return;
    }
    if (robots.kind === "disallow-all") {
      const why = robots.reason ? ` (${robots.reason})` : "";
      const errorClass = robots.errorClass ?? "robots-unavailable";
      await pageLog.append(failureLine(lease, errorClass, `robots.txt could not be fetched${why}: disallow all`, { total: 0 }));
      await frontier.fail(lease, Date.now(), { requested: false, errorClass });
      return;
    }
    if (robots.compiled.crawlDelayTooLong) {
      // Never crawled faster than the site asked: a Crawl-delay above --max-crawl-delay skips the host.
      const asked = robots.compiled.crawlDelayMs ?? 0;
      await pageLog.append(failureLine(lease, "crawl-delay-too-long", `robots.txt asks Crawl-delay ${asked / 1000} s, above --max-crawl-delay ${config.maxCrawlDelayMs} ms`, { total: 0 }));
      await frontier.fail(lease, Date.now(), { requested: false, errorClass: "crawl-delay-too-long" });
      return;
    }
    if (!robots.compiled.isAllowed(lease.url)) {
      await pageLog.append(failureLine(lease, "robots-disallowed", "disallowed by robots.txt", { total: 0 }));
      await frontier.fail(lease, Date.now(), { requested: false, errorClass: "robots-disallowed" });
      return;
    }
    const startedAt = Date.now();
    // No fetch outlives its lease: the reaper would hand the URL out again while we still hold it.
    const totalMs = Math.max(1000, Math.min(config.timeouts.totalMs, lease.expiresAt - startedAt - LEASE_MARGIN_MS));
    const conditional = revisits ? await revisits.headersFor(lease.url, lease.host) : undefined;
    // Drain a cut body's rest only when this host's next turn comes while the connection is
    // still open (its delay under the keep-alive time); at long delays it would be bytes for nothing.
    const hostDelayMs = Math.max(config.delayMs, robots.compiled.crawlDelayMs ?? 0);
    const drainBytes = hostDelayMs + DRAIN_DELAY_MARGIN_MS < DEFAULT_KEEP_ALIVE_MS ? config.cutDrainBytes : 0;
    const res = await client.fetch(lease.url, { totalMs, drainBytes, ...(conditional ? { headers: conditional } : {}) });
    const end = endNow();
    leaseTtl.record(res.timings.total);
    const verdict = decide(res, lease.attempt, retry, Date.now());
    const latencyMs = res.ok ? (res.timings.ttfb ?? res.timings.total) : res.timings.total;
    if (verdict.action === "upstream-pause" || verdict.action === "quota-stop") {
      // About us, not the site: the host's limiter is untouched, the URL goes back uncounted.
      if (verdict.action === "upstream-pause") {
        await frontier.frontier.setFlow({ pauseUntil: verdict.until });
        await frontier.count("upstream:paused", 1);
      } else {
        await frontier.frontier.setFlow({ stop: verdict.message });
        ctx.log(`stopping fetching: ${verdict.message}`);
      }
      await frontier.requeue(lease, end);
      return;
    }
    if (verdict.action === "defer-host") {
      // Retry-After above --max-retry-after: the host waits as long as asked (robots-step.ts deferHostFor).
      const detail = `Retry-After ${Math.round(verdict.retryAfterMs / 1000)} s is above --max-retry-after ${config.maxRetryAfterMs} ms: ${lease.host} waits until ${new Date(verdict.until).toISOString()}, the URL stays queued`;
      await pageLog.append({ ...failureLine(lease, null, detail, res.timings), status: res.ok ? res.status : null, final_url: res.ok ? res.url : lease.url });
      await deferHostFor(frontier, lease, origin, verdict, (m) => ctx.log(m));
      return;
    }
    const feedback = { signal: verdict.signal, latencyMs, startedAt, ...(verdict.notBefore !== undefined ? { notBefore: verdict.notBefore } : {}) };
    if (verdict.action === "retry") {
      // Every attempt is in the page log; the retry itself passes the frontier's admission control.
      const detail = `attempt ${lease.attempt + 1} of ${retry.maxAttempts}: retry in ${verdict.delayMs} ms (${verdict.reason})`;
      const line = res.ok
        ? { ...failureLine(lease, null, detail, res.timings), status: res.status, final_url: res.url }
        : failureLine(lease, res.errorClass, `${res.detail}; ${detail}`, res.timings);
      await pageLog.append(line);
      await frontier.retry(lease, end, { notBefore: verdict.notBefore, reason: verdict.reason, feedback });
      return;
    }
    if (!res.ok) {
      await pageLog.append(failureLine(lease, res.errorClass, res.detail, res.timings));
      await frontier.fail(lease, end, { requested: true, errorClass: res.errorClass, feedback });
      return;
    }
    if (revisits && res.status === 304 && (await revisits.recordNotModified(res))) {
      await pageLog.append({ ...failureLine(lease, null, "not modified since our copy", res.timings), status: 304, fetched_at: res.fetchedAt });
      await frontier.frontier.completeNotModified(lease, end, feedback);
      return;
    }
    const page = fetchedPageMeta(res, { host: lease.host, depth: lease.depth, hops: lease.hops });
    await spool.complete(frontier, lease, end, page, res.bodyPieces ?? res.body, feedback);
  }

  // Fetcher 0 only: the memory governor (Redis under its budget) and, in spill mode, the spill
  // store (shed URLs to disk and back). One loop, once a second; errors are logged, not fatal.
  function startFlowKeeper(): { stop(): Promise<void> } {
    const governor = new MemoryGovernor(frontier.frontier, { budgetBytes: config.redisMemoryBudgetBytes, high: 0.85, low: 0.7 });
    const spill = config.shedMode === "spill" ? new SpillStore(join(config.out, "spill"), frontier.frontier) : undefined;
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
    const p = handle(lease)
      .catch(async (err: unknown) => {
        // A full disk (page log) pauses the node; a bug or a Redis failure: return the URL rather than lose it.
        if (isDiskFull(err)) await pauseForDiskFull(frontier.frontier, `fetcher ${ctx.index}`, err).catch(() => undefined);
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
  }
  let quotaSaid = false;

  const keeper = ctx.index === 0 ? startFlowKeeper() : undefined;
  const sweeper = ctx.index === 0 ? spool.startSweeper(frontier, (m) => ctx.log(m)) : undefined;
  // Our leases are listed under this id: if we die, the supervisor returns them at once.
  const leaseOwner = fetcherLeaseOwner(ctx.index, process.pid);

  while (!ctx.isStopping()) {
    const free = config.fetcherConcurrency - inFlight.size;
    if (free <= 0) {
      await Promise.race([...inFlight, ctx.stopRequested]);
      continue;
    }
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
      await Promise.race([sleep(Math.max(2, Math.min(wait ?? 250, 250))), woken, ctx.stopRequested]);
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
