// The parse queue: a bounded reliable queue of fetched pages. Fetchers push pages as part of
// completing a lease (Frontier.completeWithPage); a consumer (parser process) takes ids into its
// own in-flight list (LMOVE/BLMOVE, atomic), and acknowledges each page in ONE script that also
// deletes the page and adds its links. A consumer that dies leaves its pages in its in-flight list;
// recover() puts them back. The bound is enforced where work enters: Frontier.lease refuses to
// lease while the queue is at its bound, so the queue holds at most parseQueueMax pages plus the
// pages of leases already in flight.
import type { Redis } from "ioredis";
import type { FetchedPage } from "../shared/types.js";
import type { FrontierKeys } from "./keys.js";
import { MAX_LINKS_PER_CALL, type HashedLink, type PackedLinks } from "./links.js";
import { decodePage } from "./page-codec.js";
import type { ScriptArg, Scripts } from "./scripts.js";
import { parseSpoolRef, type SpoolRef } from "../store/body-spool.js";

/**
 * A taken page. With `spool`, the body waits in the node's spool and `page.body` is empty: read
 * it with store/body-spool.ts readSpooled, and when it is lost call refetch() instead of ack().
 */
export type TakenPage = { id: string; page: FetchedPage; spool?: SpoolRef } | { id: string; page: null; error: string };

export interface AckResult {
  /** False when the page was no longer in this consumer's in-flight list (recovered meanwhile): nothing was changed. */
  acked: boolean;
  added: number;
  seen: number;
  dropped: number;
  invalid: number;
  /** The URLs sent to the script (the valid ones), in order. */
  sentUrls: string[];
}

export interface ParseQueueDeps {
  parseQueueMax: number;
  /** ARGV[1..4] of host-touching scripts (prefix, now, default delay, default concurrency). */
  common: (now: number) => ScriptArg[];
  packLinks: (links: readonly HashedLink[]) => PackedLinks;
  /** Domain politeness: the "pk" argument naming each link host's registrable domain (politeness-key.ts). */
  politenessDomains?: (links: readonly HashedLink[]) => string;
}

/** A blocking take waits at most this long per call. */
export const MAX_BLOCK_MS = 10_000;
const MAX_TAKE = 1000;
const EMPTY = Buffer.alloc(0);
const CONSUMER_RE = /^[A-Za-z0-9_.:-]{1,64}$/;
const ERROR_CLASS_RE = /^[a-z0-9-]{1,40}$/;

function checkConsumer(consumer: string): string {
  if (!CONSUMER_RE.test(consumer)) throw new RangeError(`parse queue: invalid consumer name ${JSON.stringify(consumer)}`);
  return consumer;
}

export class ParseQueue {
  /** Dedicated connection for BLMOVE (a blocked connection cannot serve other commands). */
  private blocking: Redis | undefined;
  private closed = false;

  constructor(
    private readonly redis: Redis,
    private readonly keys: FrontierKeys,
    private readonly scripts: Scripts,
    private readonly deps: ParseQueueDeps,
  ) {}

  get max(): number {
    return this.deps.parseQueueMax;
  }

  /** Pages waiting to be taken. */
  depth(): Promise<number> {
    return this.redis.llen(this.keys.parseQueue);
  }

  /** True while the queue is below its bound (fetchers check this before leasing). */
  async hasRoom(): Promise<boolean> {
    return (await this.depth()) < this.deps.parseQueueMax;
  }

  /**
   * Takes up to `max` pages for `consumer`, oldest first, moving their ids into its in-flight list.
   * With blockMs > 0 and an empty queue, waits up to blockMs (at most MAX_BLOCK_MS) for one page.
   * Use one take loop per consumer name.
   */
  async take(consumer: string, max: number, opts: { blockMs?: number } = {}): Promise<TakenPage[]> {
    checkConsumer(consumer);
    const n = Math.min(Math.max(1, Math.floor(max)), MAX_TAKE);
    const first = await this.takeNow(consumer, n);
    const blockMs = Math.min(opts.blockMs ?? 0, MAX_BLOCK_MS);
    if (first.length > 0 || !(blockMs > 0)) return first;

    if (this.closed) return [];
    this.blocking ??= this.redis.duplicate({ commandTimeout: MAX_BLOCK_MS + 5000 });
    let id: string | null;
    try {
      id = await this.blocking.blmove(this.keys.parseQueue, this.keys.parseInFlight(consumer), "RIGHT", "LEFT", blockMs / 1000);
    } catch (e) {
      // close() during a wait: an id moved at that instant stays in flight and recover() returns it.
      if (this.closed) return [];
      throw e;
    }
    if (id === null) return [];
    const [meta, body, spool] = await this.redis.hmgetBuffer(this.keys.page(id), "m", "b", "s");
    const out: TakenPage[] = [];
    if (meta && (body || spool)) {
      out.push(this.decode(id, meta, body ?? EMPTY, spool ?? EMPTY));
    } else {
      await this.redis.lrem(this.keys.parseInFlight(consumer), 1, id);
      await this.redis.hincrby(this.keys.stats, "parseMissing", 1);
    }
    if (n > 1) out.push(...(await this.takeNow(consumer, n - 1)));
    return out;
  }

  private async takeNow(consumer: string, n: number): Promise<TakenPage[]> {
    const r = (await this.scripts.runBuffer("take_pages", [this.keys.prefix, consumer, n])) as Buffer[];
    const out: TakenPage[] = [];
    for (let i = 0; i + 3 < r.length; i += 4) out.push(this.decode(r[i]!.toString(), r[i + 1]!, r[i + 2]!, r[i + 3]!));
    return out;
  }

  private decode(id: string, meta: Buffer, body: Buffer, spool: Buffer): TakenPage {
    try {
      const page = decodePage(meta.toString("utf8"), body);
      return spool.length > 0 ? { id, page, spool: parseSpoolRef(spool.toString("latin1")) } : { id, page };
    } catch (e) {
      // A damaged page is handed over with the reason, so the consumer can record it and ack it.
      return { id, page: null, error: (e as Error).message };
    }
  }

  /**
   * Acknowledges a page taken by `consumer`: removes it from the in-flight list, deletes it, adds
   * its links (Bloom test-and-set + host queues) and bumps counters, in ONE script. `parseError`
   * is counted as stats "parseErr:<class>". Links beyond MAX_LINKS_PER_CALL are counted invalid.
   */
  async ack(consumer: string, pageId: string, links: readonly HashedLink[], opts: { now?: number; parseError?: string } = {}): Promise<AckResult> {
    checkConsumer(consumer);
    const err = opts.parseError ?? "";
    if (err !== "" && !ERROR_CLASS_RE.test(err)) throw new RangeError(`parse queue: invalid parse error class ${JSON.stringify(err)}`);
    const over = Math.max(0, links.length - MAX_LINKS_PER_CALL);
    const sent = over > 0 ? links.slice(0, MAX_LINKS_PER_CALL) : links;
    const packed = this.deps.packLinks(sent);
    // Hosts first met on a parsed page join their domain's clock here, as seeds do in add_links.
    const pk = this.deps.politenessDomains ? [this.deps.politenessDomains(sent)] : [];
    const r = (await this.scripts.run("ack_page", [
      ...this.deps.common(opts.now ?? Date.now()), consumer, pageId, err, ...packed.args, ...pk,
    ])) as unknown[];
    return {
      acked: Number(r[0]) === 1,
      added: Number(r[1]),
      seen: Number(r[2]),
      dropped: Number(r[3]),
      invalid: packed.invalid + over,
      sentUrls: packed.sentUrls,
    };
  }

  /**
   * A taken page whose spooled body is lost: deletes it and puts its URL back at the head of its
   * host's queue (uncounting the fetch), in one script. False when the page was no longer in this
   * consumer's in-flight list (recovered meanwhile): nothing was changed.
   */
  async refetch(consumer: string, pageId: string, now: number = Date.now()): Promise<boolean> {
    checkConsumer(consumer);
    return Number(await this.scripts.run("refetch_page", [...this.deps.common(now), consumer, pageId])) !== 0;
  }

  /** Spool references of every page in the parse stage (queued or taken), for sweeping orphan files. */
  async spooledFiles(): Promise<Set<string>> {
    // The stage's pages: the queue, every consumer's in-flight list, and pages listed only in P pqb
    // (queued by a version that kept their bytes there). All bounded by the parse stage's bound.
    const consumers = await this.redis.smembers(this.keys.parseConsumers);
    const lists = await Promise.all([this.keys.parseQueue, ...consumers.map((c) => this.keys.parseInFlight(c))].map((k) => this.redis.lrange(k, 0, -1)));
    const ids = [...new Set([...lists.flat(), ...(await this.redis.hkeys(this.keys.parseQueueBytes))])];
    const files = new Set<string>();
    for (let i = 0; i < ids.length; i += 500) {
      const pipe = this.redis.pipeline();
      for (const id of ids.slice(i, i + 500)) pipe.hget(this.keys.page(id), "s");
      for (const [, ref] of (await pipe.exec()) ?? []) {
        if (typeof ref === "string" && ref !== "") files.add(ref.split(":")[0]!);
      }
    }
    return files;
  }

  /** Returns one consumer's (or, without a name, every consumer's) in-flight pages to the queue. */
  async recover(consumer?: string): Promise<number> {
    if (consumer !== undefined) checkConsumer(consumer);
    return Number(await this.scripts.run("recover_parse", [this.keys.prefix, consumer ?? ""]));
  }

  /** Ids in a consumer's in-flight list (newest first). */
  inFlight(consumer: string): Promise<string[]> {
    return this.redis.lrange(this.keys.parseInFlight(checkConsumer(consumer)), 0, -1);
  }

  /** Closes the blocking connection (a pending blocking take returns []). */
  close(): Promise<void> {
    this.closed = true;
    this.blocking?.disconnect();
    this.blocking = undefined;
    return Promise.resolve();
  }
}
