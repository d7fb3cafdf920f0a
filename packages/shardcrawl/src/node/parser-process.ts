// A parser process: takes fetched pages off the node's reliable parse queue, parses them (decode,
// links, digests, WARC records) on its own main thread by default, or in a piscina pool of
// --parser-threads worker threads, appends WARC and page-log output, then acknowledges the page and
// queues its links in one Redis call. Output is written before the ack, so a crash repeats at most
// the pages in flight, and never loses one. Output waiting for the disk is bounded in bytes
// (writeBufferBytes): slow storage stops the parser taking pages.
import { join } from "node:path";
import { childContext, exitFatal, sleep } from "./child-runtime.js";
import { openFrontier } from "./open-frontier.js";
import { PageLogWriter } from "../store/page-log.js";
import { WarcFileWriter } from "../store/warc-file.js";
import { StoreWriteError } from "../store/append-file.js";
import { isDiskFull, pauseForDiskFull } from "./disk-pause.js";
import type { WorkerResult, WorkerSetup, WorkerTask } from "../parse/worker.js";
import { parseRunner } from "../parse/parse-runner.js";
import { readSpooled, spoolDir, type SpoolRef } from "../store/body-spool.js";
import type { FetchedPage, PageLogLine } from "../shared/types.js";
import type { HashedLink } from "../frontier/index.js";
import { OutboxWriter } from "../shard/outbox-writer.js";
import { ShardRouter } from "../shard/shard-spec.js";
import type { OutboxLink } from "../shard/outbox-format.js";
import { RecrawlVisits } from "./recrawl-visits.js";
import { StatsBatch, countingPageLog } from "./stats-batch.js";
import { reportEventLoop } from "./child-telemetry.js";
import { WriteBudget } from "../store/write-budget.js";
import { StorageSignal } from "./storage-signal.js";
import { WarcDerivatives } from "../store/warc-derivatives.js";
import type { CaptureFields } from "../store/capture-index.js";

/** Write-buffer bytes counted per page beyond its WARC records (page-log line, outbox links). */
const OUTPUT_OVERHEAD_BYTES = 2048;

/** Pages taken and parsed at once when parsing inline. */
const INLINE_BATCH = 8;

async function main(): Promise<void> {
  const ctx = childContext();
  const { config } = ctx;
  const frontier = await openFrontier(ctx.redis, config);
  const consumer = `${config.nodeName}-p${ctx.index}`;
  // A restarted parser first returns whatever its previous life had taken.
  await frontier.recoverParseConsumer(consumer);
  const scope = await frontier.loadScope();
  const warcinfo = { software: "shardcrawl/0.1", operator: config.nodeName, "http-header-user-agent": config.userAgent, robots: "obey" };
  // WET, WAT and the Parquet index are written in the WARC writer's batches and rotate with its files.
  const derivatives = config.derivatives.length > 0
    ? new WarcDerivatives({
      dir: join(config.out, "warc"), wet: config.derivatives.includes("wet"), wat: config.derivatives.includes("wat"), index: config.derivatives.includes("index"),
      warcinfo, gzipLevel: config.warcGzipLevel, onError: (m) => ctx.log(m),
    })
    : undefined;
  const writer = new WarcFileWriter({
    dir: join(config.out, "warc"),
    prefix: consumer,
    maxFileBytes: config.warcMaxFileBytes,
    gzipLevel: config.warcGzipLevel,
    // The write budget keeps queued WARC bytes under writeBufferBytes; this is the writer's own guard.
    maxQueuedBytes: config.writeBufferBytes,
    warcinfo,
    ...(derivatives ? { derivatives } : {}),
  });
  const setup: WorkerSetup = {
    userAgent: config.userAgent,
    maxLinksPerPage: config.maxLinksPerPage,
    maxUrlLength: config.maxUrlLength,
    stripParams: config.stripParams,
    maxDecodedBytes: config.maxDecodedBytes,
    honourNofollow: config.honourNofollow,
    maxRedirects: config.maxRedirects,
    gzipLevel: config.warcGzipLevel,
    warcinfoId: writer.warcinfoId,
    scope,
    bloom: frontier.frontier.bloom,
    ...(config.recrawl ? { contentRules: config.recrawl.contentRules } : {}),
    priorityRules: config.priorityRules,
    spoolDir: spoolDir(config.out),
    ...(derivatives ? { derivatives: { wet: derivatives.enabled.wet, wat: derivatives.enabled.wat } } : {}),
    // Inline, links are hashed at the ack, only those the seen cache does not know (threads hash
    // off the main thread instead).
    hashLinks: config.parserThreads > 0,
  };
  // Continuous mode: every parsed page is recorded in the re-crawl history before its ack.
  const recrawl = RecrawlVisits.forConfig(ctx.redis, config);
  const pool = await parseRunner(setup, config.parserThreads);
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

  // Metrics: page-log lines by outcome go to the Redis stats; event-loop lag over IPC.
  const stats = new StatsBatch(ctx.redis, frontier.frontier.keys.stats);
  reportEventLoop((m) => ctx.send(m));
  const pageLog = countingPageLog(new PageLogWriter({ dir: join(config.out, "pages"), prefix: consumer, maxFileBytes: config.warcMaxFileBytes }), stats);
  // Two stages: parsing (CPU, in the pool, at most maxInFlight pages) and writing (WARC, page log,
  // outbox, then the ack), bounded in bytes by the write buffer. When storage is slow the buffer
  // fills and no new page is taken; the StorageSignal tells the fetchers that is why they wait.
  // Inline (parserThreads 0), pages taken together are parsed back to back and written together
  // (one WARC write, one page-log write: store/group-commit.ts), and one take script brings several.
  const maxInFlight = config.parserThreads > 0 ? config.parserThreads * 2 : INLINE_BATCH;
  const inFlight = new Set<Promise<void>>();
  const writes = new Set<Promise<void>>();
  const budget = new WriteBudget(config.writeBufferBytes);
  const storage = new StorageSignal(ctx.redis, frontier.frontier.keys.flow, consumer, budget, (m) => ctx.log(m));
  storage.start();

  interface Parsed {
    id: string;
    res: WorkerResult;
    line: Omit<PageLogLine, "warc">;
    /** Continuous mode only: the fetched page, recorded in the re-crawl history after the write. */
    page?: FetchedPage;
    /** Where the page's body waits (the parse queue then carries none). */
    spool?: SpoolRef;
  }

  function baseLine(page: FetchedPage, spool: SpoolRef | undefined): Omit<PageLogLine, "warc"> {
    return {
      url: page.url, final_url: page.redirectTo ?? page.url, status: page.status, error: null, content_type: null,
      bytes: spool?.bytes ?? page.body.byteLength, truncated: Boolean(page.truncated), digest: null, fetched_at: page.fetchedAt,
      timings: page.timings, outlinks: 0, depth: page.depth,
    };
  }

  /**
   * Parse stage: decode, links, digests and WARC records in the pool; the body is not kept. A
   * spooled body the worker cannot read back (lost, short, corrupt) gives "lost".
   */
  async function parse(id: string, page: FetchedPage, spool: SpoolRef | undefined): Promise<Parsed | "lost"> {
    const { body, ...meta } = page;
    const task: WorkerTask = spool ? { meta, spool } : { meta, body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) };
    const res = await pool.run(task);
    if (res.lost !== undefined) {
      ctx.log(`${page.url}: ${res.lost}; fetching it again`);
      await frontier.refetchPage(consumer, id);
      return "lost";
    }
    const facts = res.facts;
    const line: Omit<PageLogLine, "warc"> = {
      ...baseLine(page, spool),
      bytes: res.bodyBytes,
      error: res.error ?? null,
      ...(res.errorDetail ? { error_detail: res.errorDetail } : page.truncated === "time" ? { error_detail: "body cut at the fetch time cap (WARC-Truncated: time)" } : {}),
      content_type: res.contentType,
      digest: res.payloadDigest,
      text_digest: facts?.textDigest ?? null,
      outlinks: res.links.length,
      ...(page.redirectTo ? { redirect_to: page.redirectTo } : {}),
      ...(facts?.title ? { title: facts.title } : {}),
      ...(facts?.canonical ? { canonical: facts.canonical } : {}),
      ...(facts?.lang ? { lang: facts.lang } : {}),
      ...(facts ? { charset: facts.charset, noindex: facts.noindex } : {}),
    };
    return { id, res, line, ...(recrawl ? { page } : {}), ...(spool ? { spool } : {}) };
  }

  /** Write stage: output first, then the ack, so a crash repeats a page and never loses one. */
  async function write(p: Parsed): Promise<void> {
    const { res } = p;
    const loc = await writer.append({
      data: res.warc,
      warcinfoId: setup.warcinfoId,
      responseOffset: res.responseOffset,
      responseLength: res.responseLength,
      cdx: res.cdx,
      ...(derivatives ? { derivatives: { ...(res.wet ? { wet: res.wet } : {}), ...(res.wat ? { wat: res.wat } : {}), capture: captureFields(p.line, config.nodeName) } } : {}),
    });
    await pageLog.append({ ...p.line, warc: loc });
    if (recrawl && p.page) {
      // A lost history update costs one observation, never the page: log it and go on.
      const facts = res.facts;
      const kept = facts?.contentDigest !== undefined
        ? recrawl.recordPage(p.page, facts.contentDigest, res.bodyBytes)
        : res.contentType?.includes("xml") ? Promise.resolve().then(() => recrawl.recordSitemap(withBody(p.page!, p.spool))) : null; // sitemap lastmod: change hints
      await kept?.catch((err: unknown) => ctx.log(`re-crawl history of ${p.line.url} not recorded: ${(err as Error).message}`));
    }
    const ownLinks = await routeLinks(res.links);
    await frontier.ackPage(consumer, p.id, ownLinks, { error: res.error ?? null });
    // A metric: batched with the other counters (one MULTI a second), not a round trip per page.
    stats.add("outOfScope", res.outOfScope);
    if (res.paramsStripped) stats.add("trap:params-stripped", res.paramsStripped);
    const cached = frontier.takeSeenCacheHits();
    if (cached > 0) {
      stats.add("duplicates", cached);
      stats.add("seenCached", cached);
    }
  }

  /** The page with its body read back from the spool (still referenced: the page is not acked yet). */
  function withBody(page: FetchedPage, spool: SpoolRef | undefined): FetchedPage {
    return spool ? { ...page, body: readSpooled(setup.spoolDir, spool) } : page;
  }

  // A bug or a poisoned page: record it and move on rather than stall the crawl.
  async function recordFailure(id: string, line: Omit<PageLogLine, "warc">, err: unknown): Promise<void> {
    ctx.log(`parse of ${line.url} failed: ${(err as Error).stack ?? String(err)}`);
    await pageLog.append({
      ...line, error: "other", error_detail: `internal parse failure: ${(err as Error).message}`, outlinks: 0,
    }).catch(() => undefined);
    await frontier.ackPage(consumer, id, [], { error: "other" });
  }

  // Output that cannot be written (disk full, I/O error) pauses this page until it can: the page
  // stays in our in-flight list, so nothing is lost even if we are killed meanwhile.
  async function writeWithRetry(p: Parsed): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await write(p);
        return;
      } catch (err) {
        if (err instanceof StoreWriteError) {
          // A full disk pauses the whole node (no new fetching) until the supervisor sees space again.
          if (isDiskFull(err)) await pauseForDiskFull(frontier.frontier, consumer, err).catch(() => undefined);
          if (attempt === 0) ctx.log(`output write failed (${err.message}); paused, retrying every 5 s`);
          await sleep(5000);
          continue;
        }
        await recordFailure(p.id, p.line, err);
        return;
      }
    }
  }

  async function handle(id: string, page: FetchedPage, spool: SpoolRef | undefined): Promise<void> {
    let parsed: Parsed | "lost";
    try {
      parsed = await parse(id, page, spool);
    } catch (err) {
      await recordFailure(id, baseLine(page, spool), err);
      return;
    }
    if (parsed === "lost") return;
    // The page's output enters the write buffer when it fits (the parse slot is held until then).
    const bytes = parsed.res.warc.byteLength + (parsed.res.wet?.byteLength ?? 0) + (parsed.res.wat?.byteLength ?? 0) + OUTPUT_OVERHEAD_BYTES;
    await budget.acquire(bytes);
    const w = writeWithRetry(parsed).finally(() => {
      budget.release(bytes);
      writes.delete(w);
    });
    writes.add(w);
  }

  while (!ctx.isStopping()) {
    const room = maxInFlight - inFlight.size;
    if (room <= 0) {
      await Promise.race([...inFlight, ctx.stopRequested]);
      continue;
    }
    if (budget.full) {
      // Storage is behind: take nothing until the write buffer drains.
      await Promise.race([...writes, sleep(50), ctx.stopRequested]);
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
        await frontier.ackPage(consumer, id, [], { error: "other" });
        continue;
      }
      const p = handle(id, page, taken.spool).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
  }
  await Promise.all([...inFlight]);
  await Promise.all([...writes]);
  storage.stop();
  await storage.publish().catch(() => undefined);
  await pool.destroy();
  await writer.close();
  await pageLog.close();
  await stats.close();
  if (outboxTimer) clearInterval(outboxTimer);
  await outbox?.close();
  ctx.redis.disconnect();
  process.exit(0);
}

/** The capture index row of a page, from its page-log line. */
function captureFields(line: Omit<PageLogLine, "warc">, node: string): CaptureFields {
  return {
    url: line.url, fetchTime: line.fetched_at, status: line.status, mime: line.content_type, charset: line.charset && line.charset !== "none" ? line.charset : null, language: line.lang ?? null,
    digest: line.digest, truncated: line.truncated, error: line.error, depth: line.depth, node,
  };
}

main().catch((err: unknown) => exitFatal("parser", err));
