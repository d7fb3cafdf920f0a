// One output file being appended to: positional writes that always write every byte, a rollback
// to the last whole append when a write fails (ENOSPC, EIO, EFBIG), and a durable finish
// (fsync, rename from NAME.open to NAME, fsync of the folder).
import { type FileHandle, open, rename } from "node:fs/promises";
import { dirname } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";

/**
 * Fault injection (tests, drills): SHARDCRAWL_FAULT_SLOW_WRITES_MS=<ms> makes every append wait
 * that long before writing, i.e. storage that is slow. Off unless set; see docs/crawling.md "Fault injection".
 */
const SLOW_WRITES_MS = Math.max(0, Number(process.env.SHARDCRAWL_FAULT_SLOW_WRITES_MS ?? 0) || 0);

/**
 * A failed write, with the errno code (ENOSPC, EFBIG, EIO...) for the caller to pause on.
 * `rolledBack` says whether the file was cut back to its last whole append (so it is still valid).
 */
export class StoreWriteError extends Error {
  override name = "StoreWriteError";
  readonly code: string;
  readonly path: string;
  readonly rolledBack: boolean;

  constructor(op: string, path: string, cause: unknown, rolledBack: boolean, note?: string) {
    const code = errnoCode(cause) ?? "EUNKNOWN";
    const reason = cause instanceof Error ? cause.message : String(cause);
    const tail = rolledBack ? "file rolled back to its last complete record; pause output and retry later" : note;
    super(`${op} failed on ${path}: ${reason}${tail ? ` (${tail})` : ""}`, { cause });
    this.code = code;
    this.path = path;
    this.rolledBack = rolledBack;
  }
}

export function errnoCode(err: unknown): string | undefined {
  if (typeof err === "object" && err !== null && "code" in err) {
    const code = (err as { code: unknown }).code;
    if (typeof code === "string") return code;
  }
  return undefined;
}

export class AppendFile {
  #handle: FileHandle;
  #size: number;
  #busy = false;
  /** Set when a failed write could not be rolled back: the file must not grow any more. */
  #broken: StoreWriteError | undefined;
  #closed = false;

  private constructor(
    readonly path: string,
    handle: FileHandle,
    size: number,
  ) {
    this.#handle = handle;
    this.#size = size;
  }

  /** Creates `path`; with `exclusive` (the default) it fails with EEXIST rather than clobber a file. */
  static async create(path: string, opts: { exclusive?: boolean } = {}): Promise<AppendFile> {
    const handle = await open(path, opts.exclusive === false ? "w" : "wx");
    return new AppendFile(path, handle, 0);
  }

  /** Bytes in the file (all appends so far completed). */
  get size(): number {
    return this.#size;
  }

  /**
   * Appends every byte of `data` (fs writes may be short; they are continued) and returns the
   * offset it starts at. Not re-entrant: callers serialize (see BoundedSerialQueue).
   */
  async append(data: Uint8Array): Promise<number> {
    if (this.#closed) throw new Error(`append to closed file ${this.path}`);
    if (this.#broken) throw this.#broken;
    if (this.#busy) throw new Error(`concurrent append to ${this.path} (appends must be serialized)`);
    this.#busy = true;
    const offset = this.#size;
    try {
      if (SLOW_WRITES_MS > 0) await sleep(SLOW_WRITES_MS);
      let done = 0;
      while (done < data.length) {
        const { bytesWritten } = await this.#handle.write(data, done, data.length - done, offset + done);
        if (bytesWritten <= 0) throw new Error("write made no progress");
        done += bytesWritten;
      }
      this.#size = offset + data.length;
      return offset;
    } catch (err) {
      throw await this.#rollback(offset, err);
    } finally {
      this.#busy = false;
    }
  }

  /**
   * Appends `parts` back to back as one append (one vectored write when the kernel takes it all):
   * either every byte lands, or the file is rolled back to where it was. Returns the start offset.
   */
  async appendv(parts: Uint8Array[]): Promise<number> {
    if (parts.length === 1) return this.append(parts[0]!);
    if (this.#closed) throw new Error(`append to closed file ${this.path}`);
    if (this.#broken) throw this.#broken;
    if (this.#busy) throw new Error(`concurrent append to ${this.path} (appends must be serialized)`);
    this.#busy = true;
    const offset = this.#size;
    let total = 0;
    for (const p of parts) total += p.length;
    try {
      if (SLOW_WRITES_MS > 0) await sleep(SLOW_WRITES_MS);
      let done = 0;
      while (done < total) {
        const { bytesWritten } = await this.#handle.writev(partsFrom(parts, done), offset + done);
        if (bytesWritten <= 0) throw new Error("write made no progress");
        done += bytesWritten;
      }
      this.#size = offset + total;
      return offset;
    } catch (err) {
      throw await this.#rollback(offset, err);
    } finally {
      this.#busy = false;
    }
  }

  async #rollback(offset: number, cause: unknown): Promise<StoreWriteError> {
    try {
      await this.#handle.truncate(offset);
      return new StoreWriteError("write", this.path, cause, true);
    } catch {
      this.#broken = new StoreWriteError("write", this.path, cause, false, "rollback failed too; the file is left .open for repair");
      return this.#broken;
    }
  }

  /** fsync, close, rename to `finalPath`, fsync the folder so the rename survives a power cut. */
  async finish(finalPath: string): Promise<void> {
    if (this.#closed) throw new Error(`finish of closed file ${this.path}`);
    this.#closed = true;
    try {
      await this.#handle.sync();
    } catch (err) {
      await this.#handle.close().catch(() => undefined);
      throw new StoreWriteError("fsync", this.path, err, false, "left .open for repair at next start");
    }
    await this.#handle.close();
    await rename(this.path, finalPath);
    await syncDir(dirname(finalPath));
  }

  /** Closes without finishing (the .open file stays for repair). Idempotent. */
  async abandon(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#handle.close();
  }
}

/** At most this many buffers per writev call (Linux's IOV_MAX is 1024). */
const MAX_IOV = 512;

/** The bytes of `parts` from `skip` on, as buffers (no copy), at most MAX_IOV of them. */
function partsFrom(parts: Uint8Array[], skip: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let left = skip;
  for (const p of parts) {
    if (out.length === MAX_IOV) break;
    if (left >= p.length) {
      left -= p.length;
      continue;
    }
    out.push(left > 0 ? p.subarray(left) : p);
    left = 0;
  }
  return out;
}

/** fsync a folder (Linux needs it for a rename to be durable). Best effort on platforms that refuse. */
export async function syncDir(dir: string): Promise<void> {
  let fh: FileHandle | undefined;
  try {
    fh = await open(dir, "r");
    await fh.sync();
  } catch (err) {
    const code = errnoCode(err);
    if (code !== "EISDIR" && code !== "EINVAL" && code !== "EPERM") throw err;
  } finally {
    await fh?.close();
  }
}
