// Writes links owned by other nodes to local outbox files, one series per destination node.
// Each batch (one page's cross-shard links) is on disk as part of a gzip member before the page is
// acknowledged, so a crash repeats the page (duplicates, dropped by the owner's Bloom filter) and
// never loses a link. With groupCommitMs, the batches of one destination gathered over that long
// (from many pages) go out as one member and one write, and their pages are acknowledged together.
// Files rotate by size; close() finishes them (".open" -> ".urls.gz").
import { mkdir } from "node:fs/promises";
import { existsSync, readdirSync, renameSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { GenerationalSeenSet, urlHash53 } from "./seen-set.js";
import { AppendFile, StoreWriteError } from "../store/append-file.js";
import { OPEN_SUFFIX, OUTBOX_SUFFIX, formatLine, outboxDir, type OutboxLink } from "./outbox-format.js";

export interface OutboxWriterOptions {
  out: string;
  /** Unique per writing process (e.g. "node0-p1"), so writers never share a file. */
  writer: string;
  /** Rotate a destination's file beyond this many compressed bytes. */
  maxFileBytes: number;
  /** Entries per generation of the duplicate filter. */
  dedupEntries: number;
  /** Finish a file this old (ms) at finishOld(), so long-running nodes hand links over in time. */
  maxFileAgeMs?: number;
  /**
   * Gather each destination's batches for up to this long (ms) and write them as one member: a
   * batch is a few links, and a member and a write per page and destination cost a parser more
   * than the links themselves. append() resolves when its group is written. 0 (default): each
   * batch is written at once (callers that append one batch at a time and wait: ingest, rehome).
   */
  groupCommitMs?: number;
  /** A destination's gathered text is written at once beyond this many characters. */
  groupCommitChars?: number;
}

/** Batches of one destination waiting for the next write (without group commit: one batch, written at once). */
interface Group {
  text: string;
  /** Hashes of the group's URLs: they enter the duplicate filter once the group is written. */
  hashes: Set<number>;
  done: Promise<void>;
  resolve(): void;
  reject(err: unknown): void;
}

function newGroup(): Group {
  let resolve!: () => void;
  let reject!: (err: unknown) => void;
  const done = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  // Rejections reach every waiting append; one nobody awaited must not be an unhandled rejection.
  done.catch(() => undefined);
  return { text: "", hashes: new Set(), done, resolve, reject };
}

const DEFAULT_GROUP_COMMIT_CHARS = 256 * 1024;

export interface OutboxStats {
  written: number;
  duplicates: number;
  filesFinished: number;
}

interface OpenFile {
  /** Open until the file is finished: one write per batch (not open + write + close), a failed one rolled back. */
  file: AppendFile;
  bytes: number;
  openedAt: number;
}

// A batch is a page's links for one node, a few KB: zlib's default state (~256 KB set up and cleared
// for every member) cost more than compressing them. Level 1 with a 4 KB window: ~2x cheaper per
// member (80 -> 35 us for 40 links), the same size. A page's links can go to every other node of the
// fleet, so this is paid per page and destination.
const BATCH_GZIP = { level: 1, memLevel: 4, windowBits: 12 } as const;
/** A group of many pages' links (or a big ingest batch) is bigger: past this many characters zlib's full window pays for its set-up. */
const GROUP_WINDOW_FROM = 16 * 1024;
const GROUP_GZIP = { level: 1 } as const;

export class OutboxWriter {
  readonly stats: OutboxStats = { written: 0, duplicates: 0, filesFinished: 0 };
  private readonly seen: GenerationalSeenSet;
  private readonly files = new Map<string, OpenFile>();
  private seq = 0;
  private chain: Promise<void> = Promise.resolve();
  private readonly groups = new Map<string, Group>();
  private groupTimer: NodeJS.Timeout | undefined;

  constructor(private readonly opts: OutboxWriterOptions) {
    this.seen = new GenerationalSeenSet(opts.dedupEntries);
  }

  /**
   * Appends links for one destination; resolves once they are on disk (in the page cache): at once
   * as one member, or with groupCommitMs as part of the destination's next group write.
   * URLs enter the duplicate filter only after the write succeeded, so a failed write (thrown as
   * StoreWriteError; the caller retries the page) never makes its URLs look already written.
   */
  async append(dest: string, links: readonly OutboxLink[]): Promise<void> {
    let g = this.groups.get(dest);
    let waits = false;
    for (const l of links) {
      const h = urlHash53(l.url);
      if (this.seen.has(h)) {
        this.stats.duplicates++;
        continue;
      }
      g ??= this.openGroup(dest);
      // Already in the group (this page or another): this page is safe when the group is written.
      if (!g.hashes.has(h)) {
        g.hashes.add(h);
        g.text += formatLine(l);
      } else this.stats.duplicates++;
      waits = true;
    }
    if (!waits || !g) return;
    // Without group commit the group is this batch alone, written now (flushGroup settles the
    // group's waiters itself and never rejects).
    if ((this.opts.groupCommitMs ?? 0) <= 0 || g.text.length >= (this.opts.groupCommitChars ?? DEFAULT_GROUP_COMMIT_CHARS)) void this.flushGroup(dest);
    try {
      await g.done;
    } catch (err) {
      throw new StoreWriteError("outbox append", outboxDir(this.opts.out, dest), err, false, "the page is retried");
    }
  }

  private openGroup(dest: string): Group {
    const g = newGroup();
    this.groups.set(dest, g);
    if ((this.opts.groupCommitMs ?? 0) <= 0) return g;
    // One timer for every destination: a page's batches for several nodes are written together.
    this.groupTimer ??= setTimeout(() => {
      this.groupTimer = undefined;
      for (const d of [...this.groups.keys()]) void this.flushGroup(d);
    }, this.opts.groupCommitMs);
    return g;
  }

  /** Writes a destination's group now (new appends start the next group); settles its waiters (never rejects). */
  private flushGroup(dest: string): Promise<void> {
    const g = this.groups.get(dest);
    if (!g) return Promise.resolve();
    this.groups.delete(dest);
    if (this.groups.size === 0 && this.groupTimer) {
      clearTimeout(this.groupTimer);
      this.groupTimer = undefined;
    }
    // One writer per process, but pages finish concurrently: serialise file operations.
    const op = this.chain.then(() => this.write(dest, gzipSync(g.text, g.text.length > GROUP_WINDOW_FROM ? GROUP_GZIP : BATCH_GZIP)));
    this.chain = op.catch(() => undefined);
    return op.then(
      () => {
        for (const h of g.hashes) this.seen.add(h);
        this.stats.written += g.hashes.size;
        g.resolve();
      },
      (err: unknown) => g.reject(err),
    );
  }

  /** Writes every gathered group now (finishOld and close do; a caller may before a pause). */
  async flush(): Promise<void> {
    await Promise.all([...this.groups.keys()].map((d) => this.flushGroup(d)));
  }

  private async write(dest: string, data: Buffer): Promise<void> {
    let f = this.files.get(dest);
    if (!f) {
      const dir = outboxDir(this.opts.out, dest);
      await mkdir(dir, { recursive: true });
      const name = `${this.opts.writer}-${Date.now()}-${String(this.seq++).padStart(6, "0")}${OUTBOX_SUFFIX}${OPEN_SUFFIX}`;
      f = { file: await AppendFile.create(join(dir, name)), bytes: 0, openedAt: Date.now() };
      this.files.set(dest, f);
    }
    try {
      await f.file.append(data);
    } catch (err) {
      // The batch was cut back out (or, if even that failed, stays the file's cut last member, which
      // the reader skips): the file is finished and the retried page's batch starts a new one.
      await this.finish(dest).catch(() => undefined);
      throw err;
    }
    f.bytes += data.byteLength;
    if (f.bytes >= this.opts.maxFileBytes) await this.finish(dest);
  }

  private async finish(dest: string): Promise<void> {
    const f = this.files.get(dest);
    if (!f) return;
    this.files.delete(dest);
    await f.file.finish(f.file.path.slice(0, -OPEN_SUFFIX.length));
    this.stats.filesFinished++;
  }

  /** Finishes the files opened more than maxFileAgeMs ago (call periodically). */
  async finishOld(now = Date.now()): Promise<void> {
    const maxAge = this.opts.maxFileAgeMs;
    if (maxAge === undefined) return;
    await this.flush();
    const op = this.chain.then(async () => {
      for (const [dest, f] of [...this.files]) if (now - f.openedAt >= maxAge) await this.finish(dest);
    });
    this.chain = op.catch(() => undefined);
    await op;
  }

  /** Finishes every open file (call at shutdown). */
  async close(): Promise<void> {
    await this.flush();
    await this.chain;
    for (const dest of [...this.files.keys()]) await this.finish(dest);
  }
}

/**
 * A crash leaves ".open" outbox files: finish them (the reader skips a cut last member).
 * Call only while no writer of this node runs (the supervisor does it at start).
 */
export function finishAbandonedOutboxFiles(out: string): number {
  const root = outboxDir(out);
  if (!existsSync(root)) return 0;
  let n = 0;
  for (const dest of readdirSync(root)) {
    const dir = join(root, dest);
    for (const f of readdirSync(dir)) {
      if (f.endsWith(OUTBOX_SUFFIX + OPEN_SUFFIX)) {
        renameSync(join(dir, f), join(dir, f.slice(0, -OPEN_SUFFIX.length)));
        n++;
      }
    }
  }
  return n;
}
