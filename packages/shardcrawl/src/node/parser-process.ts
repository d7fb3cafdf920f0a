// A parser process: takes fetched pages off the node's reliable parse queue, runs them through a
// piscina pool (decode, links, digests, WARC records), appends WARC and page-log output, then
// acknowledges the page and queues its links in one Redis call. Output is written before the ack,
// so a crash repeats at most the pages in flight, and never loses one.
import { join } from "node:path";
import { Piscina } from "piscina";
import { childContext, sleep } from "./child-runtime.js";
import { openFrontier } from "./open-frontier.js";
import { PageLogWriter } from "../store/page-log.js";
import { WarcFileWriter } from "../store/warc-file.js";
import { StoreWriteError } from "../store/append-file.js";
import type { WorkerLost, WorkerResult, WorkerSetup, WorkerTask } from "../parse/worker.js";
import { unpackWorkerLinks } from "../parse/worker-transfer.js";
import { spoolDir, type SpoolRef } from "../store/body-spool.js";
import type { FetchedPage, PageLogLine } from "../shared/types.js";
import type { HashedLink } from "../frontier/index.js";
import { OutboxWriter } from "../shard/outbox-writer.js";
import { ShardRouter } from "../shard/shard-spec.js";
import type { OutboxLink } from "../shard/outbox-format.js";

async function main(): Promise<void> {
  const ctx = childContext();
  const { config } = ctx;
  const frontier = await openFrontier(ctx.redis, config);
  const consumer = `${config.nodeName}-p${ctx.index}`;
  // A restarted parser first returns whatever its previous life had taken.
  await frontier.recoverParseConsumer(consumer);
  const scope = await frontier.loadScope();
  const writer = new WarcFileWriter({
    dir: join(config.out, "warc"),
    prefix: consumer,
    maxFileBytes: config.warcMaxFileBytes,
    gzipLevel: config.warcGzipLevel,
    warcinfo: { software: "shardcrawl/0.1", operator: config.nodeName, "http-header-user-agent": config.userAgent, robots: "obey" },
  });
  const setup: WorkerSetup = {
    userAgent: config.userAgent,
    maxLinksPerPage: config.maxLinksPerPage,
    maxUrlLength: config.maxUrlLength,
    maxDecodedBytes: config.maxDecodedBytes,
    honourNofollow: config.honourNofollow,
    maxRedirects: config.maxRedirects,
    gzipLevel: config.warcGzipLevel,
    warcinfoId: writer.warcinfoId,
    scope,
    bloom: frontier.frontier.bloom,
    spoolDir: spoolDir(config.out),
  };
  const pool = new Piscina({
    filename: new URL("../parse/worker.js", import.meta.url).href,
    workerData: setup,
    minThreads: config.parserThreads,
    maxThreads: config.parserThreads,
  });
  // In a cluster, links owned by other nodes go to the outbox instead of our frontier.
  const router = config.shard ? new ShardRouter(config.shard) : null;
  const outbox = router ? new OutboxWriter({ out: config.out, writer: consumer, maxFileBytes: config.outboxMaxFileBytes, dedupEntries: config.outboxDedupEntries, maxFileAgeMs: config.outboxMaxFileAgeMs }) : null;
  // A long-running node hands its links over within outboxMaxFileAgeMs, not only at 64 MB.
  const outboxTimer = outbox ? setInterval(() => void outbox.finishOld().catch((err: unknown) => ctx.log(`outbox rotation failed: ${(err as Error).message}`)), Math.max(1000, Math.min(60_000, config.outboxMaxFileAgeMs / 4))) : null;

  /** Keeps our own links; appends the others to the outbox (before the page is acknowledged). */
  async function routeLinks(links: HashedLink[]): Promise<HashedLink[]> {
    if (!router || !outbox) return links;
    const own: HashedLink[] = [];
    const elsewhere = new Map<string, OutboxLink[]>();
    for (const l of links) {
      const owner = router.ownerOfHost(l.host);
      if (owner === router.spec.self) {
        own.push(l);
        continue;
      }
      const list = elsewhere.get(owner) ?? [];
      list.push({ url: l.url, depth: l.depth });
      elsewhere.set(owner, list);
    }
    let routed = 0;
    for (const [owner, list] of elsewhere) {
      await outbox.append(owner, list);
      routed += list.length;
    }
    if (routed) await ctx.redis.hincrby(frontier.frontier.keys.stats, "outboxLinks", routed);
    return own;
  }

  const pageLog = new PageLogWriter({ dir: join(config.out, "pages"), prefix: consumer, maxFileBytes: config.warcMaxFileBytes });
  const maxInFlight = config.parserThreads * 2;
  const inFlight = new Set<Promise<void>>();

  async function handle(id: string, page: FetchedPage, spool: SpoolRef | undefined): Promise<void> {
    const { body, ...meta } = page;
    const task: WorkerTask = spool ? { meta, spool } : { meta, body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) };
    const res = (await pool.run(task)) as WorkerResult | WorkerLost;
    if (res.lost !== undefined) {
      ctx.log(`${page.url}: ${res.lost}; fetching it again`);
      await frontier.refetchPage(consumer, id);
      return;
    }
    const loc = await writer.append({
      data: res.warc,
      warcinfoId: setup.warcinfoId,
      responseOffset: res.responseOffset,
      responseLength: res.responseLength,
      cdx: res.cdx,
    });
    const facts = res.facts;
    const line: PageLogLine = {
      url: page.url,
      final_url: page.redirectTo ?? page.url,
      status: page.status,
      error: res.error ?? null,
      ...(res.errorDetail ? { error_detail: res.errorDetail } : {}),
      content_type: res.contentType,
      bytes: res.bodyBytes,
      truncated: Boolean(page.truncated),
      digest: res.payloadDigest,
      text_digest: facts?.textDigest ?? null,
      fetched_at: page.fetchedAt,
      timings: page.timings,
      outlinks: res.links.urls.length,
      depth: page.depth,
      ...(page.redirectTo ? { redirect_to: page.redirectTo } : {}),
      ...(facts?.title ? { title: facts.title } : {}),
      ...(facts?.canonical ? { canonical: facts.canonical } : {}),
      ...(facts?.lang ? { lang: facts.lang } : {}),
      ...(facts ? { charset: facts.charset, noindex: facts.noindex } : {}),
      warc: loc,
    };
    await pageLog.append(line);
    const ownLinks = await routeLinks(unpackWorkerLinks(res.links));
    await frontier.ackPage(consumer, id, ownLinks, { outOfScope: res.outOfScope, error: res.error ?? null });
  }

  // Output that cannot be written (disk full, I/O error) pauses this page until it can: the page
  // stays in our in-flight list, so nothing is lost even if we are killed meanwhile. Any other
  // failure is a bug or a poisoned page: record it and move on rather than stall the crawl.
  async function handleWithRetry(id: string, page: FetchedPage, spool: SpoolRef | undefined): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await handle(id, page, spool);
        return;
      } catch (err) {
        if (err instanceof StoreWriteError) {
          ctx.log(`output write failed (${err.message}); paused, retrying in 5 s`);
          await sleep(5000);
          continue;
        }
        ctx.log(`parse of ${page.url} failed: ${(err as Error).stack ?? String(err)}`);
        await pageLog.append({
          url: page.url, final_url: page.url, status: page.status, error: "other",
          error_detail: `internal parse failure: ${(err as Error).message}`, content_type: null,
          bytes: spool?.bytes ?? page.body.byteLength, truncated: Boolean(page.truncated), digest: null,
          fetched_at: page.fetchedAt, timings: page.timings, outlinks: 0, depth: page.depth,
        }).catch(() => undefined);
        await frontier.ackPage(consumer, id, [], { outOfScope: 0, error: "other" });
        return;
      }
    }
  }

  while (!ctx.isStopping()) {
    const room = maxInFlight - inFlight.size;
    if (room <= 0) {
      await Promise.race([...inFlight, ctx.stopRequested]);
      continue;
    }
    const batch = await frontier.takePages(consumer, room, 500);
    if (batch.length === 0) {
      if (ctx.isStopping()) break;
      await sleep(5);
      continue;
    }
    for (const taken of batch) {
      const { id, page } = taken;
      if (!page) {
        // A damaged page record: say so and acknowledge it, so the crawl is not stuck on it.
        ctx.log(`page ${id} in the parse queue is damaged: ${"error" in taken ? taken.error : "unknown"}`);
        await frontier.ackPage(consumer, id, [], { outOfScope: 0, error: "other" });
        continue;
      }
      const p = handleWithRetry(id, page, taken.spool).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  }
  await Promise.all([...inFlight]);
  await pool.destroy();
  await writer.close();
  await pageLog.close();
  if (outboxTimer) clearInterval(outboxTimer);
  await outbox?.close();
  ctx.redis.disconnect();
  process.exit(0);
}

main().catch((err: unknown) => {
  console.error(`[parser] fatal: ${(err as Error).stack ?? String(err)}`);
  process.exit(1);
});
