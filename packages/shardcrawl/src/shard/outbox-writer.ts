// Writes links owned by other nodes to local outbox files, one series per destination node.
// Each batch (one page's cross-shard links) is appended as one gzip member before the page is
// acknowledged, so a crash repeats the page (duplicates, dropped by the owner's Bloom filter) and
// never loses a link. Files rotate by size; close() finishes them (".open" -> ".urls.gz").
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
}

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

export class OutboxWriter {
  readonly stats: OutboxStats = { written: 0, duplicates: 0, filesFinished: 0 };
  private readonly seen: GenerationalSeenSet;
  private readonly files = new Map<string, OpenFile>();
  private seq = 0;
  private chain: Promise<void> = Promise.resolve();

  constructor(private readonly opts: OutboxWriterOptions) {
    this.seen = new GenerationalSeenSet(opts.dedupEntries);
  }

  /**
   * Appends links for one destination; resolves once they are on disk (in the page cache).
   * URLs enter the duplicate filter only after the write succeeded, so a failed write (thrown as
   * StoreWriteError; the caller retries the page) never makes its URLs look already written.
   */
  async append(dest: string, links: readonly OutboxLink[]): Promise<void> {
    let text = "";
    const hashes: number[] = [];
    const inBatch = new Set<number>();
    for (const l of links) {
      const h = urlHash53(l.url);
      if (this.seen.has(h) || inBatch.has(h)) {
        this.stats.duplicates++;
        continue;
      }
      inBatch.add(h);
      hashes.push(h);
      text += formatLine(l);
    }
    if (!text) return;
    // One writer per process, but pages finish concurrently: serialise file operations.
    const op = this.chain.then(() => this.write(dest, gzipSync(text, BATCH_GZIP)));
    this.chain = op.catch(() => undefined);
    try {
      await op;
    } catch (err) {
      throw new StoreWriteError("outbox append", outboxDir(this.opts.out, dest), err, false, "the page is retried");
    }
    for (const h of hashes) this.seen.add(h);
    this.stats.written += hashes.length;
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
    const op = this.chain.then(async () => {
      for (const [dest, f] of [...this.files]) if (now - f.openedAt >= maxAge) await this.finish(dest);
    });
    this.chain = op.catch(() => undefined);
    await op;
  }

  /** Finishes every open file (call at shutdown). */
  async close(): Promise<void> {
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
