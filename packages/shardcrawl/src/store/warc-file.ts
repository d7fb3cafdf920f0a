// Appends pre-built WARC records (see warc-record.ts) to size-rotated files of one process:
// NAME.warc.gz.open while written; on rotation or close() it is fsynced, its CDXJ index is
// written, and it is renamed to NAME.warc.gz. Every file starts with its own warcinfo record.
import { mkdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import { type AppendFile, StoreWriteError } from "./append-file.js";
import { type CdxFields, cdxjLine, cdxjNameFor, writeCdxjFile } from "./cdxj.js";
import { checkPrefix, type CreatedOutputFile, createOutputFile } from "./file-names.js";
import { GroupCommit, type PendingAppend } from "./group-commit.js";
import { BoundedSerialQueue } from "./serial-queue.js";
import { buildWarcinfo, newRecordId } from "./warc-record.js";
import type { DerivativeAppend, WarcDerivatives } from "./warc-derivatives.js";

export interface WarcFileWriterOptions {
  /** Folder for .warc.gz and .cdxj files (created if missing). */
  dir: string;
  /** File name prefix, [A-Za-z0-9._-]. */
  prefix: string;
  /** A file is finished once it reaches this size (it may exceed it by the records built for it already). */
  maxFileBytes: number;
  /** Fields of the warcinfo record at the start of each file (software, operator, robots...). */
  warcinfo: Record<string, string | number | boolean | undefined>;
  /** gzip level of the warcinfo records (page records are compressed by whoever builds them). */
  gzipLevel?: number;
  /** Bound on appends waiting for the disk (default 64 MiB). */
  maxQueuedBytes?: number;
  /** Index lines held for the open file before it is rotated anyway (default 200 000, ~50 MB). */
  maxIndexEntries?: number;
  /** Called after each file is finished (fsynced, indexed, renamed). */
  onFileFinished?: (file: FinishedWarcFile) => void;
  /** WET, WAT and Parquet index files opened, written and finished with each WARC file. */
  derivatives?: WarcDerivatives;
}

/** Something to append: one or more whole gzip members (PageRecords fits). */
export interface WarcAppend {
  data: Uint8Array;
  /** The warcinfo ID the records name (WarcFileWriter.warcinfoId when they were built). */
  warcinfoId?: string;
  /** When `data` holds a response record to locate and index: its byte range and index fields. */
  responseOffset?: number;
  responseLength?: number;
  cdx?: CdxFields;
  /** What the append adds to the WARC file's WET, WAT and index files (with options.derivatives). */
  derivatives?: DerivativeAppend;
}

/** Where a record landed: final file name (no folder), offset and length of its gzip member. */
export interface WarcLocation {
  file: string;
  offset: number;
  length: number;
}

export interface FinishedWarcFile {
  path: string;
  cdxjPath: string;
  name: string;
  bytes: number;
  /** Response records indexed. */
  responses: number;
}

export interface WarcWriterStats {
  filesFinished: number;
  bytesWritten: number;
  queuedBytes: number;
  currentFile: string | null;
  /** Appends whose records name the warcinfo of an earlier file of this writer (built across a rotation). */
  staleWarcinfoRefs: number;
  /** Writes of appended records (appends made together share one). */
  writes: number;
}

interface OpenWarc extends CreatedOutputFile {
  file: AppendFile;
  warcinfoId: string;
  index: string[];
}

/** Index lines an append adds: one for a located response with index fields. */
function indexLines(a: WarcAppend): number {
  return a.cdx && a.responseOffset !== undefined && a.responseLength !== undefined ? 1 : 0;
}

const DEFAULT_MAX_QUEUED_BYTES = 64 * 1024 * 1024;
const DEFAULT_MAX_INDEX_ENTRIES = 200_000;

export class WarcFileWriter {
  readonly #opts: WarcFileWriterOptions;
  readonly #queue: BoundedSerialQueue;
  /** Appends made while a write is under way (or in the same turn) go to the disk in one write. */
  readonly #appends: GroupCommit<WarcAppend, WarcLocation>;
  readonly #maxIndexEntries: number;
  /** How far a full file may still grow for records that were built naming its warcinfo. */
  readonly #overshootBytes: number;
  #current: OpenWarc | null = null;
  /** ID of the warcinfo record the next file will start with; handed out before that file exists. */
  #nextWarcinfoId = newRecordId();
  #closed = false;
  #dirReady = false;
  #stats = { filesFinished: 0, bytesWritten: 0, staleWarcinfoRefs: 0, writes: 0 };

  constructor(opts: WarcFileWriterOptions) {
    if (!(opts.maxFileBytes > 0)) throw new RangeError(`maxFileBytes must be > 0, got ${opts.maxFileBytes}`);
    checkPrefix(opts.prefix);
    this.#opts = opts;
    const maxQueuedBytes = opts.maxQueuedBytes ?? DEFAULT_MAX_QUEUED_BYTES;
    this.#queue = new BoundedSerialQueue(maxQueuedBytes, `WARC writer ${opts.prefix}`);
    this.#appends = new GroupCommit(this.#queue, maxQueuedBytes, `WARC writer ${opts.prefix}`, (batch) => this.#writeBatch(batch));
    this.#maxIndexEntries = opts.maxIndexEntries ?? DEFAULT_MAX_INDEX_ENTRIES;
    this.#overshootBytes = Math.min(opts.maxFileBytes, 64 * 1024 * 1024);
  }

  /**
   * The warcinfo record ID to build the next page's records with: the open file's while it has
   * room, else the next file's (the file rotates when the first record naming it arrives, so
   * records built just before a rotation still land in the file whose warcinfo they name).
   */
  get warcinfoId(): string {
    const cur = this.#current;
    return cur !== null && !this.#isFull(cur) ? cur.warcinfoId : this.#nextWarcinfoId;
  }

  get stats(): WarcWriterStats {
    return {
      ...this.#stats,
      queuedBytes: this.#appends.queuedBytes,
      currentFile: this.#current?.name ?? null,
    };
  }

  /**
   * Appends whole records; resolves once they are written (not yet fsynced) with the location of
   * the response record (or of `data` when it holds none). Rejects with StoreWriteError (the file
   * was rolled back; pause and retry), StoreBusyError (caller did not await), or a plain Error for
   * bad input or a closed writer.
   */
  append(input: WarcAppend): Promise<WarcLocation> {
    const { data, responseOffset, responseLength } = input;
    if (!(data instanceof Uint8Array) || data.length === 0) return Promise.reject(new TypeError("append needs non-empty record bytes"));
    if (
      (responseOffset !== undefined || responseLength !== undefined) &&
      !(
        responseOffset !== undefined &&
        responseLength !== undefined &&
        Number.isInteger(responseOffset) &&
        Number.isInteger(responseLength) &&
        responseOffset >= 0 &&
        responseLength > 0 &&
        responseOffset + responseLength <= data.length
      )
    ) {
      return Promise.reject(new RangeError(`response range ${responseOffset}+${responseLength} is outside the ${data.length} appended bytes`));
    }
    return this.#appends.add(input, data.length);
  }

  /**
   * Writes a batch of appends in order: each run of appends that one file takes (no rotation
   * between them) as one write. An append resolves once its write is done; a failed write rejects
   * its run and the rest of the batch (nothing of them was acknowledged: callers retry).
   */
  async #writeBatch(batch: Array<PendingAppend<WarcAppend, WarcLocation>>): Promise<void> {
    if (this.#closed) throw new Error(`WARC writer ${this.#opts.prefix} is closed`);
    let i = 0;
    while (i < batch.length) {
      const first = batch[i]!;
      const target = await this.#fileFor(first.input.warcinfoId);
      let size = target.file.size + first.bytes;
      let entries = target.index.length + indexLines(first.input);
      let j = i + 1;
      for (; j < batch.length; j++) {
        const next = batch[j]!;
        if (!this.#takes(target, next.input.warcinfoId, size, entries)) break;
        size += next.bytes;
        entries += indexLines(next.input);
      }
      const run = batch.slice(i, j);
      const start = await target.file.appendv(run.map((p) => p.input.data)).catch((err: unknown) => this.#dropIfBroken(target, err));
      this.#stats.writes += 1;
      let offset = start;
      const locations: WarcLocation[] = [];
      for (const p of run) {
        const { data, responseOffset, responseLength, cdx } = p.input;
        this.#stats.bytesWritten += data.length;
        if (responseOffset !== undefined && responseLength !== undefined) {
          const location = { file: target.name, offset: offset + responseOffset, length: responseLength };
          if (cdx) target.index.push(cdxjLine({ ...cdx, ...location, filename: target.name }));
          locations.push(location);
        } else {
          locations.push({ file: target.name, offset, length: data.length });
        }
        offset += data.length;
      }
      // Derivatives go in the same batch, before the appends resolve (and their pages are acked).
      const derivatives = this.#opts.derivatives;
      if (derivatives) {
        const items = run.flatMap((p, k) => (p.input.derivatives ? [{ derivatives: p.input.derivatives, location: locations[k]! }] : []));
        if (items.length > 0) await derivatives.written(target.name, items);
      }
      run.forEach((p, k) => p.resolve(locations[k]!));
      i = j;
    }
  }

  /**
   * Would #fileFor hand out `cur` (no rotation) for an append naming `warcinfoId`, once the
   * appends before it in the batch (`size` bytes, `entries` index lines) are in? Counts a stale
   * warcinfo reference as #fileFor does.
   */
  #takes(cur: OpenWarc, warcinfoId: string | undefined, size: number, entries: number): boolean {
    if (size < this.#opts.maxFileBytes && entries < this.#maxIndexEntries) {
      if (warcinfoId !== undefined && warcinfoId !== cur.warcinfoId) this.#stats.staleWarcinfoRefs += 1;
      return true;
    }
    return warcinfoId === cur.warcinfoId && size < this.#opts.maxFileBytes + this.#overshootBytes;
  }

  /** Finishes the open file now (if any); the next append starts a new one. */
  rotate(): Promise<FinishedWarcFile | null> {
    this.#appends.kick();
    return this.#queue.run(0, () => this.#finishCurrent());
  }

  /** Finishes the open file after the queued appends; later appends are rejected. */
  close(): Promise<FinishedWarcFile | null> {
    this.#appends.kick();
    return this.#queue.run(0, async () => {
      this.#closed = true;
      return this.#finishCurrent();
    });
  }

  /** A file that could not be rolled back after a failed write is left .open for repair; the next append starts a new one. */
  async #dropIfBroken(target: OpenWarc, err: unknown): Promise<never> {
    if (err instanceof StoreWriteError && !err.rolledBack && this.#current === target) {
      this.#current = null;
      await target.file.abandon().catch(() => undefined);
    }
    throw err;
  }

  #isFull(cur: OpenWarc): boolean {
    return cur.file.size >= this.#opts.maxFileBytes || cur.index.length >= this.#maxIndexEntries;
  }

  async #fileFor(warcinfoId: string | undefined): Promise<OpenWarc> {
    const cur = this.#current;
    if (cur !== null) {
      if (!this.#isFull(cur)) {
        if (warcinfoId !== undefined && warcinfoId !== cur.warcinfoId) this.#stats.staleWarcinfoRefs += 1;
        return cur;
      }
      // Full: keep taking records built for this file (bounded overshoot); the next file's ID rotates.
      const hardFull = cur.file.size >= this.#opts.maxFileBytes + this.#overshootBytes;
      if (warcinfoId === cur.warcinfoId && !hardFull) return cur;
      await this.#finishCurrent();
    }
    const opened = await this.#openNext();
    if (warcinfoId !== undefined && warcinfoId !== opened.warcinfoId) this.#stats.staleWarcinfoRefs += 1;
    return opened;
  }

  async #openNext(): Promise<OpenWarc> {
    if (!this.#dirReady) {
      await mkdir(this.#opts.dir, { recursive: true });
      this.#dirReady = true;
    }
    const created = await createOutputFile(this.#opts.dir, this.#opts.prefix, ".warc.gz");
    const warcinfoId = this.#nextWarcinfoId;
    try {
      const info = buildWarcinfo(this.#opts.warcinfo, {
        filename: created.name,
        recordId: warcinfoId,
        ...(this.#opts.gzipLevel !== undefined ? { gzipLevel: this.#opts.gzipLevel } : {}),
      });
      await created.file.append(info.data);
    } catch (err) {
      // Nothing usable in it: drop the file; the ID was never written, so it stays the next one.
      await created.file.abandon().catch(() => undefined);
      await unlink(created.file.path).catch(() => undefined);
      throw err;
    }
    this.#stats.bytesWritten += created.file.size;
    this.#nextWarcinfoId = newRecordId();
    this.#current = { ...created, warcinfoId, index: [] };
    await this.#opts.derivatives?.opened(created.name);
    return this.#current;
  }

  async #finishCurrent(): Promise<FinishedWarcFile | null> {
    const cur = this.#current;
    if (cur === null) return null;
    // Whatever happens next, this file is done: a failed finish leaves NAME.warc.gz.open for repair.
    this.#current = null;
    const cdxjPath = join(this.#opts.dir, cdxjNameFor(cur.name));
    try {
      // Index first: a crash between the two leaves an .open WARC, whose index repair rebuilds.
      await writeCdxjFile(cdxjPath, cur.index);
      await cur.file.finish(cur.finalPath);
    } catch (err) {
      await cur.file.abandon().catch(() => undefined);
      await this.#opts.derivatives?.finished(cur.name);
      if (err instanceof StoreWriteError) throw err;
      throw new StoreWriteError(`finishing ${cur.name}`, cur.file.path, err, false, "left .open for repair at next start");
    }
    const finished: FinishedWarcFile = {
      path: cur.finalPath,
      cdxjPath,
      name: cur.name,
      bytes: cur.file.size,
      responses: cur.index.length,
    };
    // After the WARC: the index then names only records that are on disk under their final name.
    await this.#opts.derivatives?.finished(cur.name);
    this.#stats.filesFinished += 1;
    this.#opts.onFileFinished?.(finished);
    return finished;
  }
}
