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
import { closeSync, mkdirSync, openSync, readSync, writeSync, writevSync } from "node:fs";
import { readdir, stat, unlink } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";
import { StoreWriteError } from "./append-file.js";
import { processAlive } from "./process-alive.js";

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
  fd: number;
  size: number;
  lastPut: number;
}

/** writev takes at most this many pieces per call (Linux IOV_MAX is 1024); more are joined first. */
const MAX_PIECES = 256;

/**
 * Appends bodies for one process; segment names are unique across processes and restarts.
 * Writes are synchronous pwritev calls of the pieces as received: a write into the page cache is
 * a copy, cheaper on the event loop than handing each body to the libuv thread pool (a thread
 * wake-up and a promise per write), and the body is never joined into one buffer first.
 */
export class BodySpool {
  private readonly stem: string;
  private seq = 0;
  private current: Segment | null = null;
  // Closes an idle writer's segment: once swept, its space is free only when its descriptor is
  // closed, and a paused fetcher (low disk space) puts nothing that would rotate it.
  private readonly idleTimer: NodeJS.Timeout;

  constructor(
    readonly dir: string,
    prefix: string,
    private readonly segmentBytes = SEGMENT_BYTES,
  ) {
    if (!FILE_RE.test(prefix)) throw new RangeError(`spool: invalid prefix ${JSON.stringify(prefix)}`);
    mkdirSync(dir, { recursive: true });
    this.stem = `${prefix}-${process.pid}-${randomBytes(3).toString("hex")}`;
    this.idleTimer = setInterval(() => {
      const seg = this.current;
      if (seg && Date.now() - seg.lastPut >= ROTATE_IDLE_MS) this.retire(seg);
    }, ROTATE_IDLE_MS);
    this.idleTimer.unref();
  }

  /** Appends one body, given whole or as the pieces it arrived in (in order). */
  put(body: Uint8Array | readonly Uint8Array[]): Promise<SpoolRef> {
    try {
      return Promise.resolve(this.putSync(body));
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  private putSync(body: Uint8Array | readonly Uint8Array[]): SpoolRef {
    let pieces: readonly Uint8Array[] = body instanceof Uint8Array ? [body] : body;
    if (pieces.length > MAX_PIECES) pieces = [Buffer.concat(pieces)];
    let bytes = 0;
    let crc = 0;
    for (const piece of pieces) {
      bytes += piece.byteLength;
      crc = crc32(piece, crc);
    }
    const now = Date.now();
    let seg = this.current;
    let name = seg?.name ?? "";
    try {
      if (!seg || seg.size >= this.segmentBytes || now - seg.lastPut >= ROTATE_IDLE_MS) {
        if (seg) this.retire(seg);
        name = `${this.stem}-${++this.seq}`;
        // "wx": never reuse a name (a clash would hand one page another page's body).
        seg = { name, fd: openSync(join(this.dir, name), "wx"), size: 0, lastPut: now };
        this.current = seg;
      }
      writeAllAt(seg.fd, pieces, bytes, seg.size);
    } catch (err) {
      // A full disk (or a broken one): the next put starts a new segment rather than retrying a
      // descriptor that failed, and the error is a StoreWriteError, so the fetcher pauses the node
      // on ENOSPC (node/disk-pause.ts); node/page-spool.ts then sends that body inline through Redis.
      if (seg && seg === this.current) this.retire(seg);
      throw new StoreWriteError("spool write", join(this.dir, name), err, false);
    }
    const offset = seg.size;
    seg.size += bytes;
    seg.lastPut = now;
    return { file: seg.name, offset, bytes, crc };
  }

  /** Closes the current segment (the process is stopping). */
  close(): Promise<void> {
    clearInterval(this.idleTimer);
    if (this.current) this.retire(this.current);
    return Promise.resolve();
  }

  /** A segment that takes no more bodies is closed (every write to it has returned). */
  private retire(seg: Segment): void {
    if (this.current === seg) this.current = null;
    try {
      closeSync(seg.fd);
    } catch {
      // nothing to do: the bodies written are in the page cache or were reported lost
    }
  }
}

/** pwritev of every piece at `position`, resuming after short writes. */
function writeAllAt(fd: number, pieces: readonly Uint8Array[], bytes: number, position: number): void {
  let done = writevSync(fd, pieces, position);
  if (done === bytes) return;
  // A short write (rare: a signal or a nearly full disk): the rest piece by piece.
  let skip = done;
  for (const piece of pieces) {
    if (skip >= piece.byteLength) {
      skip -= piece.byteLength;
      continue;
    }
    for (let at = skip; at < piece.byteLength; ) {
      const n = writeSync(fd, piece, at, piece.byteLength - at, position + done);
      if (n === 0) throw new Error(`spool write made no progress at offset ${position + done}`);
      at += n;
      done += n;
    }
    skip = 0;
  }
}

/** The pid of the process that wrote a segment ("<prefix>-<pid>-<random>-<seq>"). */
function writerPid(file: string): number | undefined {
  const parts = file.split("-");
  const pid = Number(parts[parts.length - 3]);
  return Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
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
    // A writer we cannot name (pid undefined) counts as alive: the age rule still applies.
    if (!st?.isFile() || (now - st.mtimeMs < SEGMENT_MIN_IDLE_MS && pid !== opts.finishedPid && (pid === undefined || processAlive(pid)))) continue;
    await unlink(join(dir, name)).then(() => removed++, () => undefined);
  }
  return removed;
}
