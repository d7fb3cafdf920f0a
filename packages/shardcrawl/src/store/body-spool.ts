// The body spool: fetched page bodies wait for the parser in append-only segment files under
// out/spool/, and the Redis parse queue carries only a reference (segment, offset, size, CRC-32).
// Moving ~140 KB per page through Redis cost about 3 ms of Redis and client CPU per page; one file
// per page still cost ~0.5 ms of kernel time to create and delete; appending to a segment costs
// a write and a read from the page cache.
// Crash safety: a body is written before its page enters the parse queue, and a segment is deleted
// only when no queued or taken page refers to it (sweepSpool), so a killed process leaves at worst
// an unreferenced segment (swept later). A body that is missing, short or corrupt (a machine crash
// before the page cache was flushed) is reported as SpoolEntryLost, and the parser sends the URL
// back to the frontier to be fetched again.
import { randomBytes } from "node:crypto";
import { closeSync, mkdirSync, openSync, readSync } from "node:fs";
import { open, readdir, stat, unlink, type FileHandle } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { StoreWriteError } from "./append-file.js";

/** Where a spooled body is and what it must look like. */
export interface SpoolRef {
  /** Segment file name. */
  file: string;
  offset: number;
  bytes: number;
  crc: number;
}

/** The spool entry of a page is gone or damaged: the page must be fetched again. */
export class SpoolEntryLost extends Error {
  override name = "SpoolEntryLost";
}

const FILE_RE = /^[A-Za-z0-9._-]{1,128}$/;
/** A segment takes no more bodies once it holds this many bytes. */
export const SEGMENT_BYTES = 16 * 1024 * 1024;
/**
 * A writer starts a new segment when its current one had no write for this long, so a segment
 * that is idle for SEGMENT_MIN_IDLE_MS (the sweeper's rule) never receives another body.
 */
const ROTATE_IDLE_MS = 2_000;
/** Unreferenced segments idle this long are deleted even while their writer runs. */
export const SEGMENT_MIN_IDLE_MS = 10_000;

export function spoolDir(out: string): string {
  return join(out, "spool");
}

/** "file:offset:bytes:crc" (file names never contain ":"), the form stored in Redis. */
export function formatSpoolRef(ref: SpoolRef): string {
  return `${ref.file}:${ref.offset}:${ref.bytes}:${ref.crc}`;
}

export function parseSpoolRef(text: string): SpoolRef {
  const [file = "", offset = "", bytes = "", crc = ""] = text.split(":");
  const ref = { file, offset: Number(offset), bytes: Number(bytes), crc: Number(crc) };
  const count = (n: number) => Number.isSafeInteger(n) && n >= 0;
  if (!FILE_RE.test(file) || !count(ref.offset) || !count(ref.bytes) || !count(ref.crc)) {
    throw new Error(`invalid spool reference ${JSON.stringify(text.slice(0, 200))}`);
  }
  return ref;
}

/** Reads and checks a spooled body (synchronous: called in a parse worker thread). */
export function readSpooled(dir: string, ref: SpoolRef): Buffer {
  const data = Buffer.allocUnsafe(ref.bytes);
  let got = 0;
  let fd: number | undefined;
  try {
    fd = openSync(join(dir, ref.file), "r");
    while (got < ref.bytes) {
      const n = readSync(fd, data, got, ref.bytes - got, ref.offset + got);
      if (n === 0) break;
      got += n;
    }
  } catch (err) {
    throw new SpoolEntryLost(`spool segment ${ref.file}: ${(err as Error).message}`);
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
  if (got !== ref.bytes) throw new SpoolEntryLost(`spool segment ${ref.file}: ${got} of ${ref.bytes} bytes at offset ${ref.offset}`);
  if (crc32(data) !== ref.crc) throw new SpoolEntryLost(`spool segment ${ref.file}: CRC mismatch at offset ${ref.offset}`);
  return data;
}

interface Segment {
  name: string;
  handle: Promise<FileHandle>;
  size: number;
  pending: number;
  lastPut: number;
}

/** Appends bodies for one process; segment names are unique across processes and restarts. */
export class BodySpool {
  private readonly stem: string;
  private seq = 0;
  private current: Segment | null = null;

  constructor(
    readonly dir: string,
    prefix: string,
    private readonly segmentBytes = SEGMENT_BYTES,
  ) {
    if (!FILE_RE.test(prefix)) throw new RangeError(`spool: invalid prefix ${JSON.stringify(prefix)}`);
    mkdirSync(dir, { recursive: true });
    this.stem = `${prefix}-${process.pid}-${randomBytes(3).toString("hex")}`;
  }

  async put(body: Uint8Array): Promise<SpoolRef> {
    const now = Date.now();
    let seg = this.current;
    if (!seg || seg.size >= this.segmentBytes || now - seg.lastPut >= ROTATE_IDLE_MS) {
      if (seg) this.retire(seg);
      const name = `${this.stem}-${++this.seq}`;
      // "wx": never reuse a name (a clash would hand one page another page's body).
      seg = { name, handle: open(join(this.dir, name), "wx"), size: 0, pending: 0, lastPut: now };
      seg.handle.catch(() => undefined); // the error surfaces in the put that awaits it
      this.current = seg;
    }
    // The offset is taken before any await, so concurrent puts write disjoint ranges (pwrite).
    const offset = seg.size;
    seg.size += body.byteLength;
    seg.lastPut = now;
    seg.pending++;
    try {
      const fh = await seg.handle;
      for (let done = 0; done < body.byteLength; ) {
        const { bytesWritten } = await fh.write(body, done, body.byteLength - done, offset + done);
        done += bytesWritten;
      }
    } catch (err) {
      // A full disk (or a broken one): the next put starts a new segment rather than retrying a
      // handle that failed, and the error is a StoreWriteError, so the fetcher pauses the node on
      // ENOSPC (node/disk-pause.ts); node/page-spool.ts then sends that body inline through Redis.
      if (seg === this.current) this.current = null;
      throw new StoreWriteError("spool write", join(this.dir, seg.name), err, false);
    } finally {
      seg.pending--;
      if (seg !== this.current) this.retire(seg);
    }
    return { file: seg.name, offset, bytes: body.byteLength, crc: crc32(body) };
  }

  /** Closes the current segment (the process is stopping). */
  async close(): Promise<void> {
    const seg = this.current;
    this.current = null;
    if (seg) await seg.handle.then((fh) => fh.close(), () => undefined);
  }

  /** A segment that takes no more bodies is closed once its last write is done. */
  private retire(seg: Segment): void {
    if (seg.pending === 0) void seg.handle.then((fh) => fh.close(), () => undefined);
  }
}

/** The pid of the process that wrote a segment ("<prefix>-<pid>-<random>-<seq>"). */
function writerPid(file: string): number | undefined {
  const parts = file.split("-");
  const pid = Number(parts[parts.length - 3]);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

function processAlive(pid: number | undefined): boolean {
  if (pid === undefined) return true; // unknown: assume alive, the age rule still applies
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * Deletes segments no queued or taken page refers to. A segment whose writer still runs is kept
 * until it has been idle SEGMENT_MIN_IDLE_MS: it may still receive bodies, or hold one whose page
 * is on its way into the queue. `finishedPid`: a running writer that will write no more (this
 * process at exit). Returns how many were removed.
 */
export async function sweepSpool(dir: string, referenced: ReadonlySet<string>, opts: { now?: number; finishedPid?: number } = {}): Promise<number> {
  const now = opts.now ?? Date.now();
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    return 0;
  }
  let removed = 0;
  for (const name of names) {
    if (referenced.has(name) || !FILE_RE.test(name)) continue;
    const st = await stat(join(dir, name)).catch(() => null);
    const pid = writerPid(name);
    if (!st?.isFile() || (now - st.mtimeMs < SEGMENT_MIN_IDLE_MS && pid !== opts.finishedPid && processAlive(pid))) continue;
    await unlink(join(dir, name)).then(() => removed++, () => undefined);
  }
  return removed;
}
