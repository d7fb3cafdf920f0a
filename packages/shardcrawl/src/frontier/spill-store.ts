// Spill mode of load shedding: URLs shed from full host queues (lib.lua shed_one pushes them to
// P spill) are moved to compressed files under <out>/spill/ so Redis memory stays bounded, and are
// re-admitted (readmit.lua, without the seen filter) when the frontier has room again.
//
// Files: spill-<epoch ms>-<seq>.txt.gz, each a series of gzip members (one per drain), one entry
// "<host>\t<tier>\t<url + suffix>" per line. One process of a node runs the store (fetcher 0).
// Crash safety, both ways, with Redis as the record of what is done:
// - drain: a member is written and fsynced, then ONE transaction removes its entries from P spill
//   and records the file's committed size (P spillsize). After a crash, bytes beyond the committed
//   size are cut off (those entries are still in P spill), so no entry is on disk twice.
// - re-admission: readmit.lua admits a batch and advances the file's position (P spillpos) in one
//   script; a crash before the file is deleted resumes after the last admitted entry, so no URL
//   is admitted (and fetched) twice.
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, truncateSync, unlinkSync, writeSync } from "node:fs";
import { basename, join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import type { Frontier } from "./frontier.js";

export interface SpillSettings {
  /** Entries moved from Redis to disk per drain call. */
  drainBatch: number;
  /** A file is closed after this many entries (so re-admission reads a bounded file). */
  entriesPerFile: number;
  /** Re-admit only while the frontier holds less than this share of its total cap. */
  readmitBelow: number;
  /** Entries re-admitted per script call (each call is one atomic step). */
  readmitBatch?: number;
  /** Tests only: called between the steps a crash may fall between; throwing simulates the crash. */
  crashPoint?: (step: "drain-written" | "readmit-batch", file: string) => void;
}

export const DEFAULT_SPILL: SpillSettings = { drainBatch: 20_000, entriesPerFile: 200_000, readmitBelow: 0.5, readmitBatch: 5000 };

export interface SpillCounts {
  /** Entries written to disk by this process. */
  written: number;
  readmitted: number;
  /** Files waiting on disk. */
  files: number;
}

const FILE_RE = /^spill-(\d+)-(\d+)\.txt\.gz$/;

export class SpillStore {
  private current: { path: string; fd: number; entries: number; bytes: number } | undefined;
  private seq = 0;
  private recovered: Promise<void> | undefined;
  readonly counts: SpillCounts = { written: 0, readmitted: 0, files: 0 };

  constructor(readonly dir: string, private readonly frontier: Frontier, private readonly s: SpillSettings = DEFAULT_SPILL) {
    mkdirSync(dir, { recursive: true });
  }

  /** Files on disk, oldest first. */
  files(): string[] {
    return readdirSync(this.dir).filter((f) => FILE_RE.test(f)).sort((a, b) => {
      const [, ta, sa] = FILE_RE.exec(a)!;
      const [, tb, sb] = FILE_RE.exec(b)!;
      return Number(ta) - Number(tb) || Number(sa) - Number(sb);
    });
  }

  /**
   * Once per store, before anything else: cuts each file back to its committed size (a crash
   * after writing a member and before removing its entries from Redis), and forgets the records
   * of files that no longer exist. A file Redis has no record of predates this bookkeeping: kept whole.
   */
  private recover(): Promise<void> {
    this.recovered ??= (async () => {
      const sizes = await this.frontier.spillFileSizes();
      const onDisk = new Set(this.files());
      for (const name of onDisk) {
        const committed = sizes.get(name);
        if (committed === undefined) continue;
        const path = join(this.dir, name);
        if (committed === 0) unlinkSync(path);
        else if (statSync(path).size > committed) truncateSync(path, committed);
      }
      for (const name of sizes.keys()) if (!onDisk.has(name) || sizes.get(name) === 0) await this.frontier.forgetSpillFile(name);
    })();
    return this.recovered;
  }

  /** Moves spilled entries from Redis to disk. Returns how many. */
  async drain(): Promise<number> {
    await this.recover();
    const entries = await this.frontier.peekSpilled(this.s.drainBatch);
    if (entries.length === 0) return 0;
    if (!this.current || this.current.entries >= this.s.entriesPerFile) await this.rotate();
    const cur = this.current!;
    const member = gzipSync(Buffer.from(entries.join("\n") + "\n"));
    writeSync(cur.fd, member, 0, member.length, cur.bytes);
    fsyncSync(cur.fd);
    this.s.crashPoint?.("drain-written", basename(cur.path));
    await this.frontier.dropSpilled(entries.length, { name: basename(cur.path), bytes: cur.bytes + member.length });
    cur.bytes += member.length;
    cur.entries += entries.length;
    this.counts.written += entries.length;
    return entries.length;
  }

  private async rotate(): Promise<void> {
    if (this.current) closeSync(this.current.fd);
    this.current = undefined;
    const name = `spill-${Date.now()}-${this.seq++}.txt.gz`;
    // Recorded before the first byte: a file Redis knows at 0 bytes holds nothing committed.
    await this.frontier.startSpillFile(name);
    const path = join(this.dir, name);
    this.current = { path, fd: openSync(path, "w"), entries: 0, bytes: 0 };
  }

  /**
   * When the frontier has room (queued below readmitBelow x its effective total cap) and nothing
   * is waiting in Redis, re-admits the oldest spill file, resuming after the entries an earlier
   * (crashed) run already admitted. Returns how many entries came back.
   */
  async readmitIfRoom(): Promise<number> {
    await this.recover();
    const files = this.files();
    this.counts.files = files.length;
    if (files.length === 0 || (await this.frontier.spilledWaiting()) > 0) return 0;
    const cap = await this.frontier.effectiveTotalCap();
    const queued = (await this.frontier.stats()).queued;
    if (queued >= cap * this.s.readmitBelow) return 0;
    const name = files[0]!;
    const oldest = join(this.dir, name);
    if (this.current?.path === oldest) {
      closeSync(this.current.fd);
      this.current = undefined;
    }
    const lines = statSync(oldest).size === 0 ? [] : gunzipSync(readFileSync(oldest)).toString("utf8").split("\n").filter((l) => l.length > 0);
    const batch = Math.max(1, this.s.readmitBatch ?? 5000);
    let readmitted = 0;
    for (let at = await this.frontier.spillPosition(name); at < lines.length; at += batch) {
      const r = await this.frontier.readmit(lines.slice(at, at + batch), Date.now(), { file: name, start: at });
      if (r.stale) throw new Error(`spill file ${name}: admission position moved under us (another spill store running?)`);
      readmitted += r.readmitted;
      this.s.crashPoint?.("readmit-batch", name);
    }
    if (existsSync(oldest)) unlinkSync(oldest);
    await this.frontier.forgetSpillFile(name);
    this.counts.readmitted += readmitted;
    this.counts.files = files.length - 1;
    return readmitted;
  }

  close(): void {
    if (this.current) closeSync(this.current.fd);
    this.current = undefined;
  }
}
