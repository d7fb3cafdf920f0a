// The parser as a pipeline of small stages: take > read body + parse (parse-runner, worker.ts) >
// write (page-output.ts) > route (route-links.ts) > ack. Two bounds: at most maxInFlight pages in
// the parse stage, and the write buffer (bytes of output not yet on disk): when storage is slow the
// buffer fills and no new page is taken. Inline (no threads), pages taken together are parsed back
// to back and written together (one WARC write, one page-log write: store/group-commit.ts).
import { StoreWriteError } from "../store/append-file.js";
import type { WriteBudget } from "../store/write-budget.js";
import type { FetchedPage, PageLogLine } from "../shared/types.js";
import type { SpoolRef } from "../store/body-spool.js";
import type { HashedLink, TakenPage } from "../frontier/index.js";
import { processAdmissionCounts } from "../admit/admission-counts.js";
import type { ParseRunner } from "./parse-runner.js";
import type { WorkerTask } from "./worker.js";
import { baseLine, internalFailureLine, parsedLine, type ParsedLine } from "./page-line.js";
import type { PageOutput, ParsedPage } from "./page-output.js";
import type { LinkRouter } from "./route-links.js";

/** Write-buffer bytes counted per page beyond its WARC records (page-log line, outbox links). */
const OUTPUT_OVERHEAD_BYTES = 2048;
/** Output that cannot be written is retried this often. */
const WRITE_RETRY_MS = 5000;

/** The parse queue as one consumer sees it (node/open-frontier.ts NodeFrontier with the consumer bound). */
export interface ParseQueueSide {
  take(max: number, blockMs: number): Promise<TakenPage[]>;
  /** False when the page was no longer ours. `links` are those unknownLinks returned (and the chain admitted). */
  ack(id: string, links: HashedLink[], error: string | null): Promise<boolean>;
  /** A page whose spooled body is lost goes back to be fetched again. */
  refetch(id: string): Promise<boolean>;
  /** Links the seen cache answered since the last call. */
  takeSeenCacheHits(): number;
  /** The links the seen cache does not know (the others are duplicates: counted, not routed). */
  unknownLinks<L extends { url: string }>(links: readonly L[]): L[];
}

export interface ParsePipelineDeps {
  queue: ParseQueueSide;
  runner: ParseRunner;
  output: PageOutput;
  router: LinkRouter;
  budget: WriteBudget;
  pageLog: { append(line: PageLogLine): Promise<void> };
  stats: { add(field: string, by: number): void };
  maxInFlight: number;
  /** Parsing runs in threads: their admission counts stay there, so scope refusals are counted here. */
  threaded: boolean;
  /** Continuous mode: keep the fetched page for the re-crawl history. */
  keepPage: boolean;
  /** Output failed for want of disk: pause the node's fetching. */
  onDiskFull(err: StoreWriteError): Promise<void>;
  isDiskFull(err: unknown): err is StoreWriteError;
  log(msg: string): void;
  sleep(ms: number): Promise<void>;
  isStopping(): boolean;
  stopRequested: Promise<void>;
}

export class ParsePipeline {
  private readonly inFlight = new Set<Promise<void>>();
  private readonly writes = new Set<Promise<void>>();

  constructor(private readonly d: ParsePipelineDeps) {}

  /** Runs until stop is requested, then finishes what is in flight. */
  async run(): Promise<void> {
    const d = this.d;
    while (!d.isStopping()) {
      const room = d.maxInFlight - this.inFlight.size;
      if (room <= 0) {
        await Promise.race([...this.inFlight, d.stopRequested]);
        continue;
      }
      if (d.budget.full) {
        // Storage is behind: take nothing until the write buffer drains.
        await Promise.race([...this.writes, d.sleep(50), d.stopRequested]);
        continue;
      }
      const batch = await d.queue.take(room, 500);
      if (batch.length === 0) {
        if (d.isStopping()) break;
        await d.sleep(5);
        continue;
      }
      for (const taken of batch) await this.start(taken);
    }
    await Promise.all([...this.inFlight]);
    await Promise.all([...this.writes]);
  }

  /** Take stage: one taken page into the parse stage (a damaged record is acknowledged at once). */
  private async start(taken: TakenPage): Promise<void> {
    const { id, page } = taken;
    if (!page) {
      // A damaged page record: say so and acknowledge it, so the crawl is not stuck on it.
      this.d.log(`page ${id} in the parse queue is damaged: ${"error" in taken ? taken.error : "unknown"}`);
      await this.d.queue.ack(id, [], "other");
      return;
    }
    const p = this.handle(id, page, taken.spool).finally(() => this.inFlight.delete(p));
    this.inFlight.add(p);
  }

  private async handle(id: string, page: FetchedPage, spool: SpoolRef | undefined): Promise<void> {
    let parsed: ParsedPage | "lost";
    try {
      parsed = await this.parse(id, page, spool);
    } catch (err) {
      await this.recordFailure(id, baseLine(page, spool), err);
      return;
    }
    if (parsed === "lost") return;
    // The page's output enters the write buffer when it fits (the parse slot is held until then).
    const bytes = parsed.res.warc.byteLength + (parsed.res.wet?.byteLength ?? 0) + (parsed.res.wat?.byteLength ?? 0) + OUTPUT_OVERHEAD_BYTES;
    await this.d.budget.acquire(bytes);
    const w = this.writeWithRetry(parsed).finally(() => {
      this.d.budget.release(bytes);
      this.writes.delete(w);
    });
    this.writes.add(w);
  }

  /** Parse stage: decode, links, digests and WARC records; the body is not kept. */
  async parse(id: string, page: FetchedPage, spool: SpoolRef | undefined): Promise<ParsedPage | "lost"> {
    const { body, ...meta } = page;
    const task: WorkerTask = spool ? { meta, spool } : { meta, body: new Uint8Array(body.buffer, body.byteOffset, body.byteLength) };
    const res = await this.d.runner.run(task);
    if (res.lost !== undefined) {
      this.d.log(`${page.url}: ${res.lost}; fetching it again`);
      await this.d.queue.refetch(id);
      return "lost";
    }
    return { id, res, line: parsedLine(page, spool, res), ...(this.d.keepPage ? { page } : {}), ...(spool ? { spool } : {}) };
  }

  /** Write, route and ack: output first, so a crash repeats a page and never loses one. */
  async finish(p: ParsedPage): Promise<void> {
    const { d } = this;
    await d.output.write(p);
    // Known-seen links first: most of a page's links repeat earlier pages' and need no routing.
    const { own, routed } = await d.router.route(d.queue.unknownLinks(p.res.links));
    await d.queue.ack(p.id, own, p.res.error ?? null);
    // Metrics: batched with the other counters (one MULTI a second), not a round trip per page.
    if (routed) d.stats.add("outboxLinks", routed);
    d.stats.add("outOfScope", p.res.outOfScope);
    if (d.threaded) processAdmissionCounts.refused("scope", p.res.outOfScope);
    processAdmissionCounts.drainInto(d.stats);
    if (p.res.paramsStripped) d.stats.add("trap:params-stripped", p.res.paramsStripped);
    const cached = d.queue.takeSeenCacheHits();
    if (cached > 0) {
      d.stats.add("duplicates", cached);
      d.stats.add("seenCached", cached);
    }
  }

  // Output that cannot be written (disk full, I/O error) pauses this page until it can: the page
  // stays in our in-flight list, so nothing is lost even if we are killed meanwhile.
  private async writeWithRetry(p: ParsedPage): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.finish(p);
        return;
      } catch (err) {
        if (err instanceof StoreWriteError) {
          // A full disk pauses the whole node (no new fetching) until the supervisor sees space again.
          if (this.d.isDiskFull(err)) await this.d.onDiskFull(err).catch(() => undefined);
          if (attempt === 0) this.d.log(`output write failed (${err.message}); paused, retrying every 5 s`);
          await this.d.sleep(WRITE_RETRY_MS);
          continue;
        }
        await this.recordFailure(p.id, p.line, err);
        return;
      }
    }
  }

  // A bug or a poisoned page: record it and move on rather than stall the crawl.
  private async recordFailure(id: string, line: ParsedLine, err: unknown): Promise<void> {
    this.d.log(`parse of ${line.url} failed: ${(err as Error).stack ?? String(err)}`);
    await this.d.pageLog.append(internalFailureLine(line, err)).catch(() => undefined);
    await this.d.queue.ack(id, [], "other");
  }
}
