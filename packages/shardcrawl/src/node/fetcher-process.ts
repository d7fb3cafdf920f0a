// A fetcher process: a pull loop that leases ready (host, URL) pairs from the node's Redis, checks
// robots.txt (fetching it first when the cache has none), fetches under the host's politeness
// limits and hands the raw response to the parse queue. Failures become page-log lines.
import { join } from "node:path";
import { childContext, sleep } from "./child-runtime.js";
import { openFrontier } from "./open-frontier.js";
import { createHttpClient, toFetchedPage, type HttpClient } from "../fetch/http-client.js";
import { compileRobots, fetchRobots, type CompiledRobots, type RobotsEntry } from "../fetch/robots.js";
import { PageLogWriter } from "../store/page-log.js";
import type { FetchedPage, Lease, PageLogLine } from "../shared/types.js";

const ROBOTS_MEMO_MAX = 10_000;

async function main(): Promise<void> {
  const ctx = childContext();
  const { config } = ctx;
  const frontier = await openFrontier(ctx.redis, config);
  const client: HttpClient = createHttpClient({
    userAgent: config.userAgent,
    connectTo: config.connectTo,
    resolve: config.resolve,
    allowPrivate: config.allowPrivate,
    caFile: config.caFile,
    timeouts: config.timeouts,
    maxBodyBytes: config.maxPageBytes,
    connectionsPerOrigin: Math.max(1, config.hostConcurrency),
  });
  const pageLog = new PageLogWriter({ dir: join(config.out, "pages"), prefix: `${config.nodeName}-f${ctx.index}`, maxFileBytes: config.warcMaxFileBytes });
  // Compiled robots per origin, so the hot path does not re-parse robots.txt for every URL.
  const robotsMemo = new Map<string, { compiled: CompiledRobots; kind: RobotsEntry["kind"]; expires: number }>();
  const inFlight = new Set<Promise<void>>();
  // The end of a response, as the host's politeness clock should see it (see politenessMarginMs).
  const endNow = () => Date.now() + config.politenessMarginMs;
  // Wakes the pull loop when a fetch completes: its host may be due again soon.
  let wake: () => void = () => undefined;
  const nextWake = () => new Promise<void>((r) => (wake = r));

  async function robotsFor(origin: string): Promise<{ compiled: CompiledRobots; kind: RobotsEntry["kind"] } | null> {
    const memo = robotsMemo.get(origin);
    if (memo && memo.expires > Date.now()) return memo;
    const entry = await frontier.getRobots(origin);
    if (!entry) return null;
    const compiled = compileRobots(entry, config.userAgent, { maxCrawlDelayMs: config.maxCrawlDelayMs });
    if (robotsMemo.size >= ROBOTS_MEMO_MAX) robotsMemo.delete(robotsMemo.keys().next().value!);
    const fresh = { compiled, kind: entry.kind, expires: Date.now() + 60_000 };
    robotsMemo.set(origin, fresh);
    return fresh;
  }

  function failureLine(lease: Lease, error: PageLogLine["error"], detail: string, timings: PageLogLine["timings"]): PageLogLine {
    return {
      url: lease.url, final_url: lease.url, status: null, error, error_detail: detail, content_type: null,
      bytes: 0, truncated: false, digest: null, fetched_at: new Date().toISOString(), timings, outlinks: 0,
      depth: lease.depth, attempt: lease.attempt,
    };
  }

  async function handle(lease: Lease): Promise<void> {
    const origin = new URL(lease.url).origin;
    const robots = await robotsFor(origin);
    if (!robots) {
      // robots.txt is this slot's request; the page waits for the host's next turn.
      const { entry, ttlMs } = await fetchRobots(client, origin, config.userAgent, {
        redirectDelayMs: config.delayMs + config.politenessMarginMs,
      });
      await frontier.setRobots(origin, entry, ttlMs);
      const compiled = compileRobots(entry, config.userAgent, { maxCrawlDelayMs: config.maxCrawlDelayMs });
      if (compiled.crawlDelayMs !== undefined) await frontier.setHostDelay(lease.host, compiled.crawlDelayMs);
      await frontier.requeue(lease, endNow());
      return;
    }
    if (robots.kind === "disallow-all") {
      await pageLog.append(failureLine(lease, "robots-unavailable", "robots.txt was unreachable or 5xx: disallow all", { total: 0 }));
      await frontier.fail(lease, Date.now(), { requested: false, errorClass: "robots-unavailable" });
      return;
    }
    if (!robots.compiled.isAllowed(lease.url)) {
      await pageLog.append(failureLine(lease, "robots-disallowed", "disallowed by robots.txt", { total: 0 }));
      await frontier.fail(lease, Date.now(), { requested: false, errorClass: "robots-disallowed" });
      return;
    }
    const res = await client.fetch(lease.url);
    const end = endNow();
    if (!res.ok) {
      await pageLog.append(failureLine(lease, res.errorClass, res.detail, res.timings));
      await frontier.fail(lease, end, { requested: true, errorClass: res.errorClass });
      return;
    }
    const page: FetchedPage = toFetchedPage(res, { host: lease.host, depth: lease.depth, hops: lease.hops });
    await frontier.completeWithPage(lease, end, page);
  }

  function track(lease: Lease): void {
    const p = handle(lease)
      .catch(async (err: unknown) => {
        // A bug or a Redis failure: return the URL rather than lose it.
        ctx.log(`fetch of ${lease.url} failed unexpectedly: ${(err as Error).stack ?? String(err)}`);
        await frontier.requeue(lease, endNow()).catch(() => undefined);
      })
      .finally(() => {
        inFlight.delete(p);
        wake();
      });
    inFlight.add(p);
  }

  while (!ctx.isStopping()) {
    const free = config.fetcherConcurrency - inFlight.size;
    if (free <= 0) {
      await Promise.race([...inFlight, ctx.stopRequested]);
      continue;
    }
    if (!(await frontier.parseQueueHasRoom())) {
      // Pull, don't push: a full parse queue stops leasing until parsers catch up.
      await Promise.race([sleep(50), ctx.stopRequested]);
      continue;
    }
    const leases = await frontier.lease(Math.min(free, 64), Date.now());
    for (const l of leases) track(l);
    if (leases.length === 0) {
      const woken = nextWake();
      const wait = await frontier.msUntilNextDue(Date.now());
      await Promise.race([sleep(Math.max(2, Math.min(wait ?? 250, 250))), woken, ctx.stopRequested]);
    }
  }
  // Graceful stop: finish what is in flight (each fetch is bounded by its total timeout).
  await Promise.all([...inFlight]);
  await pageLog.close();
  await client.close();
  ctx.redis.disconnect();
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(`[fetcher] fatal: ${(err as Error).stack ?? String(err)}`);
  process.exit(1);
});
