// The body spool: fetched page bodies wait for the parser as files under out/spool/, one file
// per page, and the Redis parse queue carries only a reference (file name, size, CRC-32). Moving
// ~140 KB per page through Redis cost about 3 ms of Redis and client CPU per page; a local file
// costs a write and a read from the page cache.
// Crash safety: the file is written before the page enters the parse queue and removed only after
// the page is acknowledged, so a killed process leaves at worst an orphan file (swept later). A
// file that is missing, short or corrupt (a machine crash before the page cache was flushed) is
// reported as SpoolEntryLost, and the parser sends the URL back to the frontier to be fetched again.
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { readdir, stat, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { crc32 } from "node:zlib";

/** Where a spooled body is and what it must look like. */
export interface SpoolRef {
  file: string;
  bytes: number;
  crc: number;
}

/** The spool entry of a page is gone or damaged: the page must be fetched again. */
export class SpoolEntryLost extends Error {
  override name = "SpoolEntryLost";
}

const FILE_RE = /^[A-Za-z0-9._-]{1,128}$/;

export function spoolDir(out: string): string {
  return join(out, "spool");
}

/** "file:bytes:crc" (file names never contain ":"), the form stored in Redis. */
export function formatSpoolRef(ref: SpoolRef): string {
  return `${ref.file}:${ref.bytes}:${ref.crc}`;
}

export function parseSpoolRef(text: string): SpoolRef {
  const [file = "", bytes = "", crc = ""] = text.split(":");
  const ref = { file, bytes: Number(bytes), crc: Number(crc) };
  if (!FILE_RE.test(file) || !Number.isSafeInteger(ref.bytes) || ref.bytes < 0 || !Number.isSafeInteger(ref.crc)) {
    throw new Error(`invalid spool reference ${JSON.stringify(text.slice(0, 200))}`);
  }
  return ref;
}

/** Reads and checks a spooled body (synchronous: called in a parse worker thread). */
export function readSpooled(dir: string, ref: SpoolRef): Buffer {
  let data: Buffer;
  try {
    data = readFileSync(join(dir, ref.file));
  } catch (err) {
    throw new SpoolEntryLost(`spool file ${ref.file}: ${(err as Error).message}`);
  }
  if (data.length !== ref.bytes) throw new SpoolEntryLost(`spool file ${ref.file}: ${data.length} bytes, expected ${ref.bytes}`);
  if (crc32(data) !== ref.crc) throw new SpoolEntryLost(`spool file ${ref.file}: CRC mismatch`);
  return data;
}

/** Writes bodies for one process; names are unique across processes and restarts. */
export class BodySpool {
  private readonly stem: string;
  private seq = 0;

  constructor(
    readonly dir: string,
    prefix: string,
  ) {
    if (!FILE_RE.test(prefix)) throw new RangeError(`spool: invalid prefix ${JSON.stringify(prefix)}`);
    mkdirSync(dir, { recursive: true });
    this.stem = `${prefix}-${process.pid}-${randomBytes(3).toString("hex")}`;
  }

  async put(body: Uint8Array): Promise<SpoolRef> {
    const file = `${this.stem}-${++this.seq}`;
    // "wx": never overwrite (a name clash would hand one page another page's body).
    await writeFile(join(this.dir, file), body, { flag: "wx" });
    return { file, bytes: body.byteLength, crc: crc32(body) };
  }
}

/** Removes a spooled body (after its page is acknowledged); an already missing file is fine. */
export async function removeSpooled(dir: string, ref: SpoolRef): Promise<void> {
  await unlink(join(dir, ref.file)).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== "ENOENT") throw err;
  });
}

/** The pid of the process that wrote a spool file ("<prefix>-<pid>-<random>-<seq>"). */
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
 * Deletes files no page refers to (left by a process killed between writing a body and queueing
 * its page, or between acknowledging a page and removing its file). A file younger than minAgeMs
 * whose writer is still running is kept: its page may be on its way into the queue. Returns how
 * many were removed.
 */
export async function sweepSpool(dir: string, referenced: ReadonlySet<string>, minAgeMs: number, now = Date.now()): Promise<number> {
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
    if (!st?.isFile() || (now - st.mtimeMs < minAgeMs && processAlive(writerPid(name)))) continue;
    await unlink(join(dir, name)).then(() => removed++, () => undefined);
  }
  return removed;
}
