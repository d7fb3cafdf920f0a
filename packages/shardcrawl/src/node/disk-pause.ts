// A full output disk pauses the whole node instead of failing pages. The first process whose write
// fails with ENOSPC (or a quota/file-size limit) sets P flow disk with the reason; lease.lua then
// hands out no work ({'disk-full'}), so fetching stops. Pages already fetched wait in the parse
// queue or in a parser's in-flight list (nothing is acknowledged before it is written), and a page
// whose write failed is retried by its parser. The supervisor probes the disk every few seconds
// with a real write and clears the flag once one succeeds: fetching resumes, and nothing was lost.
import { randomBytes } from "node:crypto";
import { unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Frontier } from "../frontier/index.js";
import { StoreWriteError } from "../store/append-file.js";

/** errno codes that mean "no room", as opposed to a broken disk or a bug. */
const NO_ROOM_CODES = new Set(["ENOSPC", "EDQUOT", "EFBIG"]);

export function isDiskFull(err: unknown): err is StoreWriteError {
  return err instanceof StoreWriteError && NO_ROOM_CODES.has(err.code);
}

/** Pauses all fetching of the node with the reason (the first reason stays). */
export async function pauseForDiskFull(frontier: Frontier, who: string, err: StoreWriteError): Promise<void> {
  await frontier.setFlow({ diskFull: `${who}: ${err.code}: ${err.message}` });
}

export interface DiskPauseOptions {
  /** Bytes the probe writes: room for at least this much means writers can go on. Default 1 MiB. */
  probeBytes?: number;
  /** Time between probes while paused. Default 2 s. */
  probeEveryMs?: number;
}

/** The supervisor's side: says when the node pauses, probes the disk, and resumes fetching. */
export class DiskPauseWatch {
  private pausedSince: number | null = null;
  private lastProbe = 0;
  private readonly probeBytes: number;
  private readonly probeEveryMs: number;

  constructor(private readonly frontier: Frontier, private readonly out: string, private readonly log: (m: string) => void, opts: DiskPauseOptions = {}) {
    this.probeBytes = opts.probeBytes ?? 1024 * 1024;
    this.probeEveryMs = opts.probeEveryMs ?? 2000;
  }

  /** One check; call it from the supervisor's loop. Never throws. */
  async tick(now: number = Date.now()): Promise<void> {
    try {
      const { diskFull } = await this.frontier.flowState();
      if (diskFull === undefined) {
        this.pausedSince = null;
        return;
      }
      if (this.pausedSince === null) {
        this.pausedSince = now;
        this.log(`fetching paused: output disk full (${diskFull}); resuming when space returns`);
      }
      if (now - this.lastProbe < this.probeEveryMs) return;
      this.lastProbe = now;
      if (!(await this.probe())) return;
      await this.frontier.setFlow({ diskFull: null });
      await this.frontier.redis.hincrby(this.frontier.keys.stats, "diskPauses", 1);
      this.log(`disk space is back after ${Math.round((now - this.pausedSince) / 1000)} s: fetching resumed`);
      this.pausedSince = null;
    } catch (err) {
      this.log(`disk pause check failed: ${(err as Error).message}`);
    }
  }

  /** True when probeBytes could be written (and removed again) in the output folder. */
  private async probe(): Promise<boolean> {
    const file = join(this.out, `.disk-probe-${process.pid}`);
    try {
      // Random bytes: a compressing file system must not make a full disk look empty.
      await writeFile(file, randomBytes(this.probeBytes));
      return true;
    } catch {
      return false;
    } finally {
      await unlink(file).catch(() => undefined);
    }
  }
}
