// The supervisor of one node: repairs output left by a crash, starts (or re-attaches to) the
// node's Redis, recovers work a dead run held, loads seeds, forks fetchers and parsers, reaps
// expired leases, serves /status and /metrics, shows progress, and decides when the crawl is done.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "../shared/cjs-ioredis.js";
import { ChildGroup, type ChildSpec } from "./children.js";
import type { NodeConfig } from "./config.js";
import { openFrontier, type NodeFrontier, type NodeStats } from "./open-frontier.js";
import { TerminalProgress, formatDuration } from "./progress.js";
import { startNodeRedis, type RedisHandle } from "./redis-server.js";
import { startStatusServer, type StatusServer } from "./status-server.js";
import { loadExcludeFile } from "./exclude-file.js";
import { preflight, seedRejectionLines } from "./preflight.js";
import { loadSeeds, type SeedReport } from "./seed-loading.js";
import { repairOutputDir, repairsByWriter } from "../store/repair.js";
import { ShardRouter } from "../shard/shard-spec.js";
import { OutboxWriter, finishAbandonedOutboxFiles } from "../shard/outbox-writer.js";
import { emptyIngestReport, ingestInbox, type IngestReport } from "../shard/ingest.js";
import { cachedDiskUsage } from "./disk-usage.js";
import { exitCodeFor, type EndReason } from "./exit-codes.js";
import { UrlPrioritizer } from "../schedule/priority.js";
import type { QueueSizing } from "./queue-sizing.js";
import { NodeObserver } from "./node-observer.js";
import { openSupervisorLog } from "./node-logs.js";
import { releaseDeadFetcher } from "./lease-owner.js";
import { DiskPauseWatch } from "./disk-pause.js";
import { DeferredEndWatch, formatDeferred, type DeferredReport } from "./deferred-end.js";
import { checkUserAgentContact } from "./user-agent-contact.js";
import { parseMinFreeDisk } from "./disk-space.js";
import { FileShipper } from "./file-shipper.js";

/** At the end of a crawl, shipping of the last closed files is waited for this long. */
const SHIP_DRAIN_MS = 10 * 60_000;
/** How often the loop reads the whole flow-control pressure (~10 Redis calls): as often as the observer samples. */
const PRESSURE_EVERY_MS = 2_000;

export interface CrawlSummary {
  node: string;
  out: string;
  startedAt: string;
  finishedAt: string;
  elapsedMs: number;
  reason: EndReason;
  /** Why fetching stopped early (reason "quota": the upstream's message). */
  stopMessage?: string;
  stats: NodeStats;
  pagesPerSecond: number;
  restarts: number;
  repaired: unknown;
  seeds: { read: number; accepted: number; rejected: number; otherShards: number };
  /** Cluster only: this node's shard, what it ingested from out/inbox/, what it sent to its outbox. */
  shard?: { self: string; nodes: number; key: string };
  ingested?: Omit<IngestReport, "problems"> & { problems: number };
  /** The queue bounds in force and where each came from (derived from rate x wait, explicit, default). */
  queueSizing?: QueueSizing;
  /** Hosts still waiting out a robots.txt outage at the end (their URLs stay queued for the next run). */
  deferred?: DeferredReport;
}

export interface RunOptions {
  /** Stream for progress and messages (stderr by default). */
  stream?: NodeJS.WriteStream;
  /** Called once the status server listens (tests and the cluster scripts use the port). */
  onListening?: (port: number) => void;
}

const DIST_NODE = new URL(".", import.meta.url);

export async function runNode(config: NodeConfig, opts: RunOptions = {}): Promise<CrawlSummary> {
  const stream = opts.stream ?? process.stderr;
  // Before anything is created: a node that cannot tell site owners who runs it does not start.
  checkUserAgentContact(config);
  const startedAt = Date.now();
  // Seeds, --out, the status port and --redis are checked before anything starts.
  await preflight(config);
  mkdirSync(config.out, { recursive: true });
  // Operator messages go to the terminal and, as structured lines, to <out>/logs/supervisor.<n>.log.
  const log = openSupervisorLog(config);
  const say = (m: string) => {
    log.logger.info(m);
    stream.write(`${m}\n`);
  };
  for (const d of ["warc", "pages"]) mkdirSync(join(config.out, d), { recursive: true });

  // A crash leaves .open files behind; make them whole before anyone writes again.
  const repaired = await repairOutputDir(config.out);
  // What this node runs with (prefix, shard), for `shardcrawl ingest` on a stopped node.
  writeFileSync(join(config.out, "node-config.json"), JSON.stringify(config, null, 2));

  let redisHandle: RedisHandle | null = null;
  let redisUrl = config.redis;
  if (!redisUrl) {
    redisHandle = await startNodeRedis(config.out, {
      ...(config.redisMaxMemoryBytes > 0 ? { maxmemoryBytes: config.redisMaxMemoryBytes } : {}),
      ...(config.redisDir ? { dataDir: config.redisDir } : {}),
    });
    redisUrl = redisHandle.url;
    redisHandle.watch(say);
  }
  const redis = new Redis(redisUrl, { maxRetriesPerRequest: null, connectionName: "supervisor" });
  // Until the crawl runs, a failed start (nothing to crawl or resume, a filter built by other code,
  // a bad exclude or seed file) stops the Redis this node started: no process is left behind.
  const prepare = async () => {
    const frontier: NodeFrontier = await openFrontier(redis, config);
    // Every lease and in-flight page in Redis now belongs to a dead run: give it back.
    const recovered = await frontier.recoverAll();
    if (recovered.leases || recovered.pages) say(`recovered ${recovered.leases} leased URLs and ${recovered.pages} unparsed pages from the previous run`);
    // A new run is the operator saying the quota is back: lift the previous run's quota stop.
    const previousStop = await frontier.clearQuotaStop();
    if (previousStop) say(`the previous run stopped on "${previousStop}"; fetching again`);
    // Hosts the previous run left waiting out a robots.txt outage: a new run tries them now.
    const woken = await frontier.outages.wakeAll(Date.now());
    if (woken) say(`${woken} hosts were waiting for robots.txt (outage); trying them again now`);

    // In a cluster: finish outbox files a crash left open, and get ready to ingest other nodes' links.
    const router = config.shard ? new ShardRouter(config.shard) : null;
    if (router) {
      const finished = finishAbandonedOutboxFiles(config.out);
      if (finished) say(`finished ${finished} outbox files left open by the previous run`);
    }
    const ingestOutbox = router ? new OutboxWriter({ out: config.out, writer: `${config.nodeName}-ingest`, maxFileBytes: config.outboxMaxFileBytes, dedupEntries: config.outboxDedupEntries }) : undefined;
    const ingestCtx = { frontier, exclusions: frontier.exclusions, urlFilters: config.urlFilters, maxUrlLength: config.maxUrlLength, priority: new UrlPrioritizer(config.priorityRules), ...(router ? { router } : {}), ...(ingestOutbox ? { outbox: ingestOutbox } : {}) };
    const ingestReport = emptyIngestReport();

    // The site owners' opt-out list from --exclude-file, before any seed is admitted.
    if (config.excludeFile) {
      const ex = await loadExcludeFile(frontier, config.excludeFile);
      say(`exclude file ${config.excludeFile}: ${ex.entries} entries, ${ex.removed} queued URLs removed`);
    }
    let seedReport: SeedReport = { read: 0, accepted: 0, rejected: 0, otherShards: 0 };
    if (config.seeds) {
      // Streamed: a seed file of millions of lines is never held whole; the admission chain keeps
      // our share (shard filter) and refuses excluded sites and traps.
      const t = Date.now();
      const loaded = await loadSeeds(frontier, {
        file: config.seeds, scope: config.scope, maxUrlLength: config.maxUrlLength, stripParams: config.stripParams, router, urlFilters: config.urlFilters,
        onProgress: (tally, added) => say(`loading seeds: ${tally.accepted} read, ${added} new so far (${formatDuration(Date.now() - t)})`),
      });
      seedReport = loaded.report;
      for (const line of seedRejectionLines(config.seeds, loaded.tally)) say(line);
      const read = loaded.tally.accepted;
      if (router) say(`shard ${config.shard!.self}: ${read - seedReport.otherShards} of ${read} seeds are ours; the other nodes own the rest`);
    } else if (!(await frontier.hasScope())) {
      throw new Error(`no --seeds given and ${config.out} holds no crawl to resume`);
    }
    return { frontier, router, ingestOutbox, ingestCtx, ingestReport, seedReport };
  };
  const { frontier, router, ingestOutbox, ingestCtx, ingestReport, seedReport } = await prepare().catch(async (err: unknown) => {
    redis.disconnect();
    if (redisHandle) await redisHandle.stop().catch(() => undefined);
    throw err;
  });

  // Links from other nodes, exchanged into out/inbox/ between rounds (or while we run).
  if (await ingestInbox(ingestCtx, config.out, ingestReport)) say(`ingested ${ingestReport.files} inbox files: ${ingestReport.added} new URLs, ${ingestReport.seen} already seen, ${ingestReport.rerouted} re-routed to their owners`);

  // History, CPU/memory per process, event-loop lag (children report it over IPC) and the bottleneck.
  const observer: NodeObserver = new NodeObserver(config, () => [
    { process: "supervisor", pid: process.pid },
    ...children.pids().map((c) => ({ process: `${c.role}-${c.index}`, pid: c.pid })),
    ...(redisHandle ? [{ process: "redis", pid: redisHandle.pid }] : []),
  ]);
  // A child that dies mid-run leaves its .open WARC and page-log files behind: they are repaired
  // once it is gone (files of live writers are left alone), not only at the next start, so a crawl
  // that finishes in this run leaves every file whole. One repair at a time, awaited at the end. A
  // child that exits cleanly has closed its files: no scan of the output folder for it. A scan
  // repairs every dead writer's files (two children killed together: the first scan finds both),
  // so each is reported under its writer, known by the pid in the file name.
  let repairs: Promise<void> = Promise.resolve();
  const deadChildren = new Map<number, string>();
  const repairAfterExit = (spec: ChildSpec, pid: number) => {
    deadChildren.set(pid, `${spec.role} ${spec.index}`);
    repairs = repairs.then(async () => {
      const r = await repairOutputDir(config.out);
      for (const [writer, t] of repairsByWriter(r)) {
        say(`repaired ${t.files} files left by ${deadChildren.get(writer) ?? "a process"} (pid ${writer}): ${t.recordsKept} WARC records and ${t.linesKept} page-log lines kept, ${t.bytesDropped} bytes of cut tail dropped`);
      }
      for (const e of r.errors) say(`repair of ${e.path} failed: ${e.error}`);
    }).catch((err: unknown) => say(`repair after ${spec.role} ${spec.index} exited failed: ${String(err)}`));
  };
  // A fetcher that dies gives its leases back at once (not after the lease TTL).
  const children: ChildGroup = new ChildGroup(config, redisUrl, observer.eventLoop.onChildMessage, say, (spec, pid, clean) => {
    if (spec.role === "fetcher") void releaseDeadFetcher(frontier, spec.index, pid, say);
    if (!clean) repairAfterExit(spec, pid);
  });
  const specs: ChildSpec[] = [];
  for (let i = 0; i < config.fetchers; i++) specs.push({ role: "fetcher", index: i, script: new URL("fetcher-process.js", DIST_NODE).pathname });
  for (let i = 0; i < config.parsers; i++) specs.push({ role: "parser", index: i, script: new URL("parser-process.js", DIST_NODE).pathname });
  children.start(specs);
  // Continuous mode: the re-crawl scheduler plans revisits within the budget (docs/recrawl.md).
  // Loaded only then: the re-crawl engine and its HTML parser are ~30 modules.
  const recrawl = config.recrawl ? await (await import("../schedule/recrawl/continuous-loop.js")).RecrawlLoop.start(redis, frontier, config, say) : undefined;

  let lastStats: NodeStats = await frontier.stats();
  let pressureAt = Date.now();
  // pages/s over the last ~10 s; disk use measured only when /status is asked, at most every 10 s.
  const rate = { t: Date.now(), fetched: lastStats.fetched, perSecond: 0 };
  const disk = cachedDiskUsage(config.out, 10_000);
  // Hosts waiting out a robots.txt outage hold their URLs queued: counted by the watch that ends a
  // crawl whose only work left is theirs, and shown on /status.
  const deferWatch = new DeferredEndWatch(frontier.outages, config.maxDeferWaitMs);
  const status: StatusServer = await startStatusServer(config, () => ({
    node: config.nodeName, stats: lastStats, pagesPerSecond: rate.perSecond, disk: disk(), children: children.pids(), startedAt,
    ...(config.queueSizing ? { queueSizing: config.queueSizing } : {}),
    ...(config.shard ? { shard: { self: config.shard.self, nodes: config.shard.nodes.length, key: config.shard.key } } : {}),
    restarts: children.restarts, ...observer.extras(),
    robotsWaiting: deferWatch.waiting,
    ...(recrawl ? { recrawl: recrawl.snapshot() } : {}),
  }), () => observer.samples());
  opts.onListening?.(status.port);
  writeFileSync(join(config.out, "status.json"), JSON.stringify({ pid: process.pid, statusPort: status.port, node: config.nodeName }));

  const showProgress = config.progress === "on" || (config.progress === "auto" && Boolean(stream.isTTY));
  const progress = new TerminalProgress(stream, showProgress, startedAt);
  let reason = "done" as CrawlSummary["reason"];
  let stopMessage: string | undefined;
  let stopRequested = false;
  const onSignal = () => {
    if (stopRequested) return;
    stopRequested = true;
    reason = "signal";
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);

  // A full output disk pauses fetching; this says so and resumes once space is back.
  // With --min-free-disk it pauses before the disk is full, and resumes with hysteresis.
  const minFree = parseMinFreeDisk(config.minFreeDisk);
  const diskWatch = new DiskPauseWatch(frontier, config.out, say, ("bytes" in minFree && minFree.bytes === 0) || ("percent" in minFree && minFree.percent === 0) ? {} : { minFree });
  // Closed WARC, CDXJ and page-log files go to the operator's shipping command.
  const shipper = config.onFileClosed
    ? new FileShipper({
      out: config.out, command: config.onFileClosed, deleteShipped: config.deleteShipped, log: say,
      count: (field, by) => void frontier.count(field, by).catch(() => undefined),
    })
    : null;
  // The loop: reap, sample, decide. Done = nothing queued, leased, or waiting to be parsed.
  let idleChecks = 0;
  let lastInboxCheck = Date.now();
  for (;;) {
    await new Promise((r) => setTimeout(r, 500));
    await frontier.reap(Date.now());
    await diskWatch.tick();
    shipper?.tick();
    if (Date.now() - lastInboxCheck >= config.inboxPollMs) {
      lastInboxCheck = Date.now();
      // Ingest while running: a bad file is reported and left in the inbox, never fatal.
      await ingestInbox(ingestCtx, config.out, ingestReport).catch((err: unknown) => say(`inbox ingest failed: ${(err as Error).message}`));
    }
    const now = Date.now();
    // The full pressure as often as the observer samples it; its stop and disk flags every turn.
    const freshPressure = now - pressureAt >= PRESSURE_EVERY_MS;
    lastStats = await frontier.stats(freshPressure ? undefined : lastStats.pressure);
    if (freshPressure) pressureAt = now;
    observer.update(lastStats);
    await deferWatch.refresh(lastStats.queued, now);
    if (now - rate.t >= 10_000) {
      rate.perSecond = (lastStats.fetched - rate.fetched) / ((now - rate.t) / 1000);
      rate.t = now;
      rate.fetched = lastStats.fetched;
    }
    progress.update({
      t: Date.now(), fetched: lastStats.fetched, parsed: lastStats.parsed, errors: lastStats.errors, failed: lastStats.failed,
      queued: lastStats.queued, hosts: lastStats.hostsQueued, leases: lastStats.leases, parseQueue: lastStats.parseQueue + lastStats.parseInFlight,
      maxPages: config.maxPages,
    });
    if (stopRequested) break;
    // Our upstream quota is exhausted: fetchers already stopped leasing; end the run (also a
    // long-running node), leaving the frontier intact for a rerun once the quota is restored.
    if (lastStats.pressure?.stopped !== undefined) {
      reason = "quota";
      stopMessage = lastStats.pressure.stopped;
      break;
    }
    if (!config.exitWhenDone) continue;
    const budgetSpent = config.maxPages !== undefined && lastStats.fetched + lastStats.failed >= config.maxPages;
    const drained = lastStats.leases === 0 && lastStats.parseQueue === 0 && lastStats.parseInFlight === 0;
    // Two quiet checks in a row, so a page between "acked" and "links queued" is never missed.
    if (drained && (lastStats.queued === 0 || budgetSpent)) {
      if (++idleChecks >= 2) {
        reason = budgetSpent ? "max-pages" : "done";
        break;
      }
    } else idleChecks = 0;
    if (!budgetSpent && (await deferWatch.shouldEnd(lastStats, Date.now()))) {
      reason = "done";
      break;
    }
  }
  progress.done();
  say(reason === "signal" ? "stopping: finishing what is in flight…"
    : reason === "quota" ? `stopping: ${stopMessage ?? "upstream quota exhausted"}; finishing what is in flight…`
    : "crawl finished; stopping processes…");
  await recrawl?.stop();
  // Fetchers first (their pages go to the parse queue), then parsers drain it.
  await children.stop(config.timeouts.totalMs + 5_000, ["fetcher"]);
  await frontier.reap(Date.now());
  await children.stop(60_000, ["parser"]);
  await repairs;
  if (shipper) {
    // Every file is closed now: ship what is left (what fails stays pending for the next start).
    const left = await shipper.drain(SHIP_DRAIN_MS);
    if (left.length > 0) say(`${left.length} closed files not shipped yet (${left.slice(0, 3).join(", ")}${left.length > 3 ? ", ..." : ""}): shipped at the next start`);
  }
  lastStats = await frontier.stats();
  const deferred = await deferWatch.report();
  await ingestOutbox?.close();
  await status.close();
  observer.close();
  process.off("SIGINT", onSignal);
  process.off("SIGTERM", onSignal);
  const elapsedMs = Date.now() - startedAt;
  const summary: CrawlSummary = {
    node: config.nodeName,
    out: config.out,
    startedAt: new Date(startedAt).toISOString(),
    finishedAt: new Date().toISOString(),
    elapsedMs,
    reason,
    ...(stopMessage !== undefined ? { stopMessage } : {}),
    stats: lastStats,
    pagesPerSecond: lastStats.fetched / Math.max(0.001, elapsedMs / 1000),
    restarts: children.restarts,
    repaired,
    seeds: seedReport,
    ...(config.shard ? { shard: { self: config.shard.self, nodes: config.shard.nodes.length, key: config.shard.key } } : {}),
    ...(router ? { ingested: { ...ingestReport, problems: ingestReport.problems.length } } : {}),
    ...(config.queueSizing ? { queueSizing: config.queueSizing } : {}),
    ...(deferred ? { deferred } : {}),
  };
  for (const p of ingestReport.problems.slice(0, 5)) say(`ingest problem in ${p.file}: ${p.damaged ?? ""} ${JSON.stringify(p.rejected.slice(0, 3))}`);
  writeFileSync(join(config.out, "summary.json"), JSON.stringify(summary, null, 2));
  redis.disconnect();
  // A finished crawl stops its own Redis (the AOF keeps the state); an interrupted one too.
  if (redisHandle) await redisHandle.stop();
  say(formatSummary(summary));
  if (reason === "quota") {
    say(`shardcrawl: STOPPED, upstream quota exhausted (${stopMessage ?? ""}). ${lastStats.queued} URLs are still queued in ${config.out}; ` +
      `run the same command again once the quota is restored to continue (exit code ${exitCodeFor("quota")}).`);
  }
  log.logger.info({ summary: { reason, elapsedMs, stats: { fetched: lastStats.fetched, failed: lastStats.failed, queued: lastStats.queued }, restarts: children.restarts } }, "node stopped");
  log.close();
  return summary;
}

export function formatSummary(s: CrawlSummary): string {
  const st = s.stats;
  return [
    `shardcrawl ${s.node}: ${s.reason} after ${formatDuration(s.elapsedMs)}`,
    `  pages fetched ${st.fetched} (${s.pagesPerSecond.toFixed(1)}/s), parsed ${st.parsed}, fetch errors ${st.errors}, refused by robots.txt ${st.robotsDisallowed}`,
    `  URLs discovered ${st.discovered}, still queued ${st.queued} in ${st.hostsQueued} hosts, out of scope ${st.outOfScope}`,
    ...(s.shard ? [`  shard ${s.shard.self} of ${s.shard.nodes} (by ${s.shard.key}): links sent to other nodes' outboxes ${st.counters.outboxLinks ?? 0}, ingested ${s.ingested?.added ?? 0} new URLs from ${s.ingested?.files ?? 0} inbox files`] : []),
    ...(s.deferred ? formatDeferred(s.deferred) : []),
    `  child restarts ${s.restarts}; output in ${s.out} (warc/, pages/, summary.json)`,
  ].join("\n");
}
