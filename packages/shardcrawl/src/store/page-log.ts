// The per-page metadata log: one PageLogLine as JSON per line, in size-rotated files
// <prefix>-<yyyymmddhhmmss>-<pid>-<seq>.jsonl, written as .jsonl.open and finished like WARC files.
import { mkdir, unlink } from "node:fs/promises";
import { StoreWriteError } from "./append-file.js";
import { checkPrefix, type CreatedOutputFile, createOutputFile } from "./file-names.js";
import { GroupCommit, type PendingAppend } from "./group-commit.js";
import { BoundedSerialQueue } from "./serial-queue.js";
import type { PageLogLine } from "../shared/types.js";

export interface PageLogWriterOptions {
  /** Folder for the .jsonl files (by convention <out>/pages; created if missing). */
  dir: string;
  prefix: string;
  /** A file is finished once it reaches this size. */
  maxFileBytes: number;
  /** Bound on lines waiting for the disk (default 16 MiB). */
  maxQueuedBytes?: number;
  /** Longest line written (default 64 KiB); longer free-text fields are shortened to fit. */
  maxLineBytes?: number;
  onFileFinished?: (file: FinishedPageLog) => void;
}

export interface FinishedPageLog {
  path: string;
  name: string;
  bytes: number;
  lines: number;
}

/** Free-text fields that may be shortened (never the URLs, status or digests a reader joins on). */
const SHORTENABLE: Array<keyof PageLogLine> = ["title", "error_detail", "canonical", "redirect_to"];
const SHORTENED_CHARS = 1024;

/**
 * One JSON line. U+2028/2029 are escaped too: valid JSON, but some line splitters (Python's
 * str.splitlines) treat them as line ends.
 */
export function serializePageLogLine(line: PageLogLine, maxLineBytes = 64 * 1024): string {
  let text = toJsonLine(line);
  if (Buffer.byteLength(text) > maxLineBytes) {
    const shortened: Record<string, unknown> = { ...line };
    for (const key of SHORTENABLE) {
      const v = shortened[key];
      if (typeof v === "string" && v.length > SHORTENED_CHARS) shortened[key] = `${v.slice(0, SHORTENED_CHARS)}…`;
    }
    text = toJsonLine(shortened);
    const bytes = Buffer.byteLength(text);
    if (bytes > maxLineBytes) {
      throw new RangeError(`page log line for ${String(line.url).slice(0, 200)} is ${bytes} bytes, over the ${maxLineBytes}-byte cap`);
    }
  }
  return text;
}

function toJsonLine(value: unknown): string {
  return JSON.stringify(value).replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029") + "\n";
}

export class PageLogWriter {
  readonly #opts: PageLogWriterOptions;
  readonly #queue: BoundedSerialQueue;
  /** Lines appended while a write is under way (or in the same turn) go to the disk in one write. */
  readonly #appends: GroupCommit<{ data: Buffer; lines: number }, void>;
  #current: (CreatedOutputFile & { lines: number }) | null = null;
  #closed = false;
  #dirReady = false;
  #stats = { filesFinished: 0, linesWritten: 0, bytesWritten: 0, writes: 0 };

  constructor(opts: PageLogWriterOptions) {
    if (!(opts.maxFileBytes > 0)) throw new RangeError(`maxFileBytes must be > 0, got ${opts.maxFileBytes}`);
    checkPrefix(opts.prefix);
    this.#opts = opts;
    const maxQueuedBytes = opts.maxQueuedBytes ?? 16 * 1024 * 1024;
    this.#queue = new BoundedSerialQueue(maxQueuedBytes, `page log ${opts.prefix}`);
    this.#appends = new GroupCommit(this.#queue, maxQueuedBytes, `page log ${opts.prefix}`, (batch) => this.#writeBatch(batch));
  }

  get stats(): { filesFinished: number; linesWritten: number; bytesWritten: number; writes: number; queuedBytes: number; currentFile: string | null } {
    return { ...this.#stats, queuedBytes: this.#appends.queuedBytes, currentFile: this.#current?.name ?? null };
  }

  /** Appends one line; resolves when written. Same errors as WarcFileWriter.append. */
  append(line: PageLogLine): Promise<void> {
    return this.appendMany([line]);
  }

  /** Appends lines in one write (they land in one file, in order). */
  appendMany(lines: PageLogLine[]): Promise<void> {
    let data: Buffer;
    try {
      data = Buffer.from(lines.map((l) => serializePageLogLine(l, this.#opts.maxLineBytes)).join(""), "utf8");
    } catch (err) {
      return Promise.reject(err instanceof Error ? err : new Error(String(err)));
    }
    if (data.length === 0) return Promise.resolve();
    return this.#appends.add({ data, lines: lines.length }, data.length);
  }

  /** Writes a batch of appends in order, as one write to one file; they resolve or fail together. */
  async #writeBatch(batch: Array<PendingAppend<{ data: Buffer; lines: number }, void>>): Promise<void> {
    if (this.#closed) throw new Error(`page log ${this.#opts.prefix} is closed`);
    const cur = await this.#fileWithRoom();
    const data = batch.length === 1 ? batch[0]!.input.data : Buffer.concat(batch.map((p) => p.input.data));
    try {
      await cur.file.append(data);
    } catch (err) {
      // Not rolled back: leave that file .open for repair and start a new one next time.
      if (err instanceof StoreWriteError && !err.rolledBack && this.#current === cur) {
        this.#current = null;
        await cur.file.abandon().catch(() => undefined);
      }
      throw err;
    }
    for (const p of batch) {
      cur.lines += p.input.lines;
      this.#stats.linesWritten += p.input.lines;
    }
    this.#stats.bytesWritten += data.length;
    this.#stats.writes += 1;
    for (const p of batch) p.resolve();
  }

  rotate(): Promise<FinishedPageLog | null> {
    this.#appends.kick();
    return this.#queue.run(0, () => this.#finishCurrent());
  }

  close(): Promise<FinishedPageLog | null> {
    this.#appends.kick();
    return this.#queue.run(0, async () => {
      this.#closed = true;
      return this.#finishCurrent();
    });
  }

  async #fileWithRoom(): Promise<CreatedOutputFile & { lines: number }> {
    if (this.#current !== null && this.#current.file.size < this.#opts.maxFileBytes) return this.#current;
    await this.#finishCurrent();
    if (!this.#dirReady) {
      await mkdir(this.#opts.dir, { recursive: true });
      this.#dirReady = true;
    }
    this.#current = { ...(await createOutputFile(this.#opts.dir, this.#opts.prefix, ".jsonl")), lines: 0 };
    return this.#current;
  }

  async #finishCurrent(): Promise<FinishedPageLog | null> {
    const cur = this.#current;
    if (cur === null) return null;
    this.#current = null;
    if (cur.file.size === 0) {
      // Its first write failed: nothing to keep.
      await cur.file.abandon();
      await unlink(cur.file.path);
      return null;
    }
    try {
      await cur.file.finish(cur.finalPath);
    } catch (err) {
      await cur.file.abandon().catch(() => undefined);
      if (err instanceof StoreWriteError) throw err;
      throw new StoreWriteError(`finishing ${cur.name}`, cur.file.path, err, false, "left .open for repair at next start");
    }
    const finished = { path: cur.finalPath, name: cur.name, bytes: cur.file.size, lines: cur.lines };
    this.#stats.filesFinished += 1;
    this.#opts.onFileFinished?.(finished);
    return finished;
  }
}
