// A parser process: opens what the parse pipeline needs (parse/parse-pipeline.ts: take, read body,
// parse, write, route, ack) and runs it. Pages are parsed inline on this thread by default, or in a
// piscina pool with --parser-threads. The ack queues a page's links in one Redis call. Output is
// written before the ack, so a crash repeats at most the pages in flight, and never loses one.
// Output waiting for the disk is bounded in bytes (writeBufferBytes): slow storage stops the
// parser taking pages.
import { join } from "node:path";
import { childContext, exitFatal, sleep } from "./child-runtime.js";
import { openFrontier } from "./open-frontier.js";
import { PageLogWriter } from "../store/page-log.js";
import { WarcFileWriter } from "../store/warc-file.js";
import { isDiskFull, pauseForDiskFull } from "./disk-pause.js";
import type { WorkerSetup } from "../parse/worker.js";
import { parseRunner } from "../parse/parse-runner.js";
import { ParsePipeline } from "../parse/parse-pipeline.js";
import { PageOutput } from "../parse/page-output.js";
import { LinkRouter } from "../parse/route-links.js";
import { spoolDir } from "../store/body-spool.js";
import { BatchAdmission } from "../admit/index.js";
import { StatsBatch, countingPageLog } from "./stats-batch.js";
import { reportEventLoop } from "./child-telemetry.js";
import { WriteBudget } from "../store/write-budget.js";
import { StorageSignal } from "./storage-signal.js";

/** Pages taken and parsed at once when parsing inline. */
const INLINE_BATCH = 8;

async function main(): Promise<void> {
  const ctx = childContext();
  const { config } = ctx;
  const frontier = await openFrontier(ctx.redis, config, { child: true });
  const consumer = `${config.nodeName}-p${ctx.index}`;
  // A restarted parser first returns whatever its previous life had taken.
  await frontier.recoverParseConsumer(consumer);
  const scope = await frontier.loadScope();
  const warcinfo = { software: "shardcrawl/0.1", operator: config.nodeName, "http-header-user-agent": config.userAgent, robots: "obey" };
  // WET, WAT and the Parquet index are written in the WARC writer's batches and rotate with its files.
  // Loaded only when asked for: the Parquet writer and re-crawl code cost a process start ~80 ms of CPU.
  const derivatives = config.derivatives.length > 0
    ? new (await import("../store/warc-derivatives.js")).WarcDerivatives({
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
    bloom: frontier.bloom,
    ...(config.recrawl ? { contentRules: config.recrawl.contentRules } : {}),
    priorityRules: config.priorityRules,
    spoolDir: spoolDir(config.out),
    ...(derivatives ? { derivatives: { wet: derivatives.enabled.wet, wat: derivatives.enabled.wat } } : {}),
    // Inline, links are hashed at the ack, only those the seen cache does not know (threads hash
    // off the main thread instead).
    hashLinks: config.parserThreads > 0,
  };
  // Continuous mode: every parsed page is recorded in the re-crawl history before its ack.
  const recrawl = config.recrawl ? (await import("../schedule/recrawl/continuous-visits.js")).RecrawlVisits.forConfig(ctx.redis, config) : undefined;
  const runner = await parseRunner(setup, config.parserThreads);
  // In a cluster, links owned by other nodes go to the outbox instead of our frontier (the shard
  // modules are loaded only then).
  const outbox = config.shard ? new (await import("../shard/outbox-writer.js")).OutboxWriter({ out: config.out, writer: consumer, maxFileBytes: config.outboxMaxFileBytes, dedupEntries: config.outboxDedupEntries, maxFileAgeMs: config.outboxMaxFileAgeMs, groupCommitMs: config.outboxGroupCommitMs }) : null;
  // A long-running node hands its links over within outboxMaxFileAgeMs, not only at 64 MB.
  const outboxTimer = outbox ? setInterval(() => void outbox.finishOld().catch((err: unknown) => ctx.log(`outbox rotation failed: ${(err as Error).message}`)), Math.max(1000, Math.min(60_000, config.outboxMaxFileAgeMs / 4))) : null;
  // The admission chain after scope: shard routing, the opt-out list, trap filters.
  const admission = new BatchAdmission({ router: config.shard ? new (await import("../shard/shard-spec.js")).ShardRouter(config.shard) : null, exclusions: frontier.exclusions, urlFilters: config.urlFilters });
  const router = new LinkRouter(admission, outbox);
  // Metrics: page-log lines by outcome go to the Redis stats; event-loop lag over IPC.
  const stats = new StatsBatch(frontier);
  reportEventLoop((m) => ctx.send(m));
  const pageLog = countingPageLog(new PageLogWriter({ dir: join(config.out, "pages"), prefix: consumer, maxFileBytes: config.warcMaxFileBytes }), stats);
  const output = new PageOutput({
    warc: writer, warcinfoId: writer.warcinfoId, pageLog, derivatives: derivatives !== undefined, nodeName: config.nodeName, recrawl: recrawl ?? null, spoolDir: setup.spoolDir, log: (m) => ctx.log(m),
  });
  const budget = new WriteBudget(config.writeBufferBytes);
  // When the write buffer is full the StorageSignal tells the fetchers that is why they wait.
  const storage = new StorageSignal(frontier, consumer, budget, (m) => ctx.log(m));
  storage.start();
  const pipeline = new ParsePipeline({
    queue: {
      take: (max, blockMs) => frontier.takePages(consumer, max, blockMs),
      ack: (id, links, error) => frontier.ackPage(consumer, id, links, { error, unknownOnly: true }),
      refetch: (id) => frontier.refetchPage(consumer, id),
      takeSeenCacheHits: () => frontier.takeSeenCacheHits(),
      unknownLinks: (links) => frontier.unknownLinks(links),
    },
    runner, output, router, budget, pageLog, stats,
    maxInFlight: config.parserThreads > 0 ? config.parserThreads * 2 : INLINE_BATCH,
    threaded: config.parserThreads > 0,
    keepPage: recrawl !== undefined,
    isDiskFull, onDiskFull: (err) => pauseForDiskFull(frontier, consumer, err),
    log: (m) => ctx.log(m), sleep, isStopping: () => ctx.isStopping(), stopRequested: ctx.stopRequested,
  });
  await pipeline.run();
  storage.stop();
  await storage.publish().catch(() => undefined);
  await runner.destroy();
  await writer.close();
  await pageLog.close();
  await stats.close();
  if (outboxTimer) clearInterval(outboxTimer);
  await outbox?.close();
  ctx.redis.disconnect();
  process.exit(0);
}

main().catch((err: unknown) => exitFatal("parser", err));
