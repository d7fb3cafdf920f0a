// Spill mode of load shedding: URLs shed from full host queues (lib.lua shed_one pushes them to
// P spill) are moved to compressed files under <out>/spill/ so Redis memory stays bounded, and are
// re-admitted (readmit.lua, without the seen filter) when the frontier has room again.
//
// Files: spill-<epoch ms>-<seq>.txt.gz, each a series of gzip members (one per drain), one entry
// "<host>\t<tier>\t<url + suffix>" per line. One process of a node runs the store (fetcher 0).
// Order of steps so that a crash loses nothing: entries are written and fsynced before they are
// removed from Redis; a file is deleted only after all its entries were re-admitted (a crash in
// between may re-admit some URLs twice: a duplicate fetch, never a lost URL).
import { closeSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import type { Frontier } from "./frontier.js";

export interface SpillSettings {
  /** Entries moved from Redis to disk per drain call. */
  drainBatch: number;
  /** A file is closed after this many entries (so re-admission reads a bounded file). */
  entriesPerFile: number;
  /** Re-admit only while the frontier holds less than this share of its total cap. */
  readmitBelow: number;
}

export const DEFAULT_SPILL: SpillSettings = { drainBatch: 20_000, entriesPerFile: 200_000, readmitBelow: 0.5 };

export interface SpillCounts {
  /** Entries written to disk by this process. */
  written: number;
  readmitted: number;
  /** Files waiting on disk. */
  files: number;
}

export class SpillStore {
  private current: { path: string; fd: number; entries: number } | undefined;
  private seq = 0;
  readonly counts: SpillCounts = { written: 0, readmitted: 0, files: 0 };

  constructor(readonly dir: string, private readonly frontier: Frontier, private readonly s: SpillSettings = DEFAULT_SPILL) {
    mkdirSync(dir, { recursive: true });
  }

  /** Files on disk, oldest first. */
  files(): string[] {
    return readdirSync(this.dir).filter((f) => /^spill-\d+-\d+\.txt\.gz$/.test(f)).sort((a, b) => {
      const [, ta, sa] = /^spill-(\d+)-(\d+)/.exec(a)!;
      const [, tb, sb] = /^spill-(\d+)-(\d+)/.exec(b)!;
      return Number(ta) - Number(tb) || Number(sa) - Number(sb);
    });
  }

  /** Moves spilled entries from Redis to disk. Returns how many. */
  async drain(): Promise<number> {
    const entries = await this.frontier.peekSpilled(this.s.drainBatch);
    if (entries.length === 0) return 0;
    if (!this.current || this.current.entries >= this.s.entriesPerFile) this.rotate();
    const cur = this.current!;
    const member = gzipSync(Buffer.from(entries.join("\n") + "\n"));
    writeSync(cur.fd, member);
    fsyncSync(cur.fd);
    cur.entries += entries.length;
    await this.frontier.dropSpilled(entries.length);
    this.counts.written += entries.length;
    return entries.length;
  }

  private rotate(): void {
    if (this.current) closeSync(this.current.fd);
    const path = join(this.dir, `spill-${Date.now()}-${this.seq++}.txt.gz`);
    this.current = { path, fd: openSync(path, "a"), entries: 0 };
  }

  /**
   * When the frontier has room (queued below readmitBelow x its effective total cap) and nothing
   * is waiting in Redis, re-admits the oldest spill file. Returns how many entries came back.
   */
  async readmitIfRoom(): Promise<number> {
    const files = this.files();
    this.counts.files = files.length;
    if (files.length === 0 || (await this.frontier.spilledWaiting()) > 0) return 0;
    const cap = await this.frontier.effectiveTotalCap();
    const queued = (await this.frontier.stats()).queued;
    if (queued >= cap * this.s.readmitBelow) return 0;
    const oldest = join(this.dir, files[0]!);
    if (this.current?.path === oldest) {
      closeSync(this.current.fd);
      this.current = undefined;
    }
    if (statSync(oldest).size === 0) {
      unlinkSync(oldest);
      return 0;
    }
    const lines = gunzipSync(readFileSync(oldest)).toString("utf8").split("\n").filter((l) => l.length > 0);
    const r = await this.frontier.readmit(lines, Date.now(), true);
    unlinkSync(oldest);
    this.counts.readmitted += r.readmitted;
    this.counts.files = files.length - 1;
    return r.readmitted;
  }

  close(): void {
    if (this.current) closeSync(this.current.fd);
    this.current = undefined;
  }
}
