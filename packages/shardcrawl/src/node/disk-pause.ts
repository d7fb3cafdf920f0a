// A full output disk pauses the whole node instead of failing pages. The first process whose write
// fails with ENOSPC (or a quota/file-size limit) sets P flow disk with the reason; lease.lua then
// hands out no work ({'disk-full'}), so fetching stops. Pages already fetched wait in the parse
// queue or in a parser's in-flight list (nothing is acknowledged before it is written), and a page
// whose write failed is retried by its parser. The supervisor probes the disk every few seconds
// with a real write and clears the flag once one succeeds: fetching resumes, and nothing was lost.
// With a free-space threshold (--min-free-disk, disk-space.ts) the supervisor pauses the same way
// BEFORE a write fails: when free space drops below it; it resumes once free space is back above
// the threshold times RESUME_FACTOR (hysteresis) and the probe succeeds. What is already fetched
// is still written while paused, so the threshold must hold the parse stage's bytes.
import { randomBytes } from "node:crypto";
import { unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { NodeFrontier } from "./open-frontier.js";
import { StoreWriteError } from "../store/append-file.js";
import { freeSpace, parseMinFreeDisk, RESUME_FACTOR, thresholdBytes, type FreeSpace, type MinFreeDisk } from "./disk-space.js";

/** errno codes that mean "no room", as opposed to a broken disk or a bug. */
const NO_ROOM_CODES = new Set(["ENOSPC", "EDQUOT", "EFBIG"]);

export function isDiskFull(err: unknown): err is StoreWriteError {
  return err instanceof StoreWriteError && NO_ROOM_CODES.has(err.code);
}

/** Pauses all fetching of the node with the reason (the first reason stays). */
export async function pauseForDiskFull(frontier: Pick<NodeFrontier, "setFlow">, who: string, err: StoreWriteError): Promise<void> {
  await frontier.setFlow({ diskFull: `${who}: ${err.code}: ${err.message}` });
}

export interface DiskPauseOptions {
  /** Bytes the probe writes: room for at least this much means writers can go on. Default 1 MiB. */
  probeBytes?: number;
  /** Time between probes while paused. Default 2 s. */
  probeEveryMs?: number;
  /** Pause below this free space (absent: only a failed write pauses). */
  minFree?: MinFreeDisk;
  /** Time between free-space checks while running. Default 1 s. */
  checkEveryMs?: number;
  /** Reads free space (tests); default statfs of the output folder. */
  readFree?: (dir: string) => Promise<FreeSpace>;
}

/** The supervisor's side: says when the node pauses, probes the disk, and resumes fetching. */
export class DiskPauseWatch {
  private pausedSince: number | null = null;
  private lastProbe = 0;
  private readonly probeBytes: number;
  private readonly probeEveryMs: number;
  private readonly checkEveryMs: number;
  private lastCheck = 0;
  private lastFree: FreeSpace | null = null;

  constructor(private readonly frontier: Pick<NodeFrontier, "setFlow" | "flowState" | "count">, private readonly out: string, private readonly log: (m: string) => void, private readonly opts: DiskPauseOptions = {}) {
    this.probeBytes = opts.probeBytes ?? 1024 * 1024;
    this.probeEveryMs = opts.probeEveryMs ?? 2000;
    this.checkEveryMs = opts.checkEveryMs ?? 1000;
  }

  /** The last free-space reading and the thresholds (status), or null before the first. */
  get freeSpace(): (FreeSpace & { pauseBelow: number; resumeAt: number }) | null {
    if (!this.lastFree || !this.opts.minFree) return null;
    const pauseBelow = thresholdBytes(this.opts.minFree, this.lastFree.totalBytes);
    return { ...this.lastFree, pauseBelow, resumeAt: Math.round(pauseBelow * RESUME_FACTOR) };
  }

  /** Reads free space (throttled); null when there is no threshold or it was read recently. */
  private async readFree(now: number, force: boolean): Promise<FreeSpace | null> {
    if (!this.opts.minFree || (!force && now - this.lastCheck < this.checkEveryMs)) return null;
    this.lastCheck = now;
    this.lastFree = await (this.opts.readFree ?? freeSpace)(this.out);
    return this.lastFree;
  }

  /** One check; call it from the supervisor's loop. Never throws. */
  async tick(now: number = Date.now()): Promise<void> {
    try {
      const { diskFull } = await this.frontier.flowState();
      if (diskFull === undefined) {
        this.pausedSince = null;
        const free = await this.readFree(now, false);
        if (free && this.opts.minFree && free.freeBytes < thresholdBytes(this.opts.minFree, free.totalBytes)) {
          const need = thresholdBytes(this.opts.minFree, free.totalBytes);
          await this.frontier.setFlow({ diskFull: `supervisor: low disk space: ${free.freeBytes} bytes free < ${need} (--min-free-disk)` });
          await this.frontier.count("lowDiskPauses", 1);
          this.pausedSince = now;
          this.log(`fetching paused: ${free.freeBytes} bytes free on the output disk, below --min-free-disk (${need}); resuming above ${Math.round(need * RESUME_FACTOR)}`);
        }
        return;
      }
      if (this.pausedSince === null) {
        this.pausedSince = now;
        this.log(`fetching paused: output disk full (${diskFull}); resuming when space returns`);
      }
      if (now - this.lastProbe < this.probeEveryMs) return;
      this.lastProbe = now;
      const free = await this.readFree(now, true);
      if (free && this.opts.minFree && free.freeBytes < thresholdBytes(this.opts.minFree, free.totalBytes) * RESUME_FACTOR) return;
      if (!(await this.probe())) return;
      await this.frontier.setFlow({ diskFull: null });
      await this.frontier.count("diskPauses", 1);
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

/** The --min-free-disk threshold, or undefined when it is 0 (pause only when a write fails). */
export function minFreeOf(spec: string): MinFreeDisk | undefined {
  const m = parseMinFreeDisk(spec);
  return ("bytes" in m && m.bytes === 0) || ("percent" in m && m.percent === 0) ? undefined : m;
}

/**
 * The fastest a node is taken to fill its disk (body spool, WARC, page logs): a lease-time check is
 * skipped while the last one left room for this rate until now.
 */
const ASSUMED_WRITE_BYTES_PER_S = 256 * 1024 * 1024;
/** Free space is read at least this often while leasing. */
const MAX_CHECK_GAP_MS = 1_000;

/**
 * The fetcher's side of --min-free-disk: free space is read (one statfs) before a lease batch, so
 * a fast crawl cannot write past the threshold between two of the supervisor's timed checks; not
 * before every batch (a fetcher leases hundreds of times a second, and a statfs each time cost 3%
 * of its CPU) but as often as the room left above the threshold requires at ASSUMED_WRITE_BYTES_PER_S:
 * once a second with gigabytes to spare, every batch near the threshold. Below the threshold it
 * pauses the node as the supervisor would; the supervisor alone resumes it, with hysteresis
 * (DiskPauseWatch).
 */
export class LeaseTimeDiskCheck {
  private pausedByUs = false;
  private nextCheckAt = 0;

  constructor(
    private readonly frontier: Pick<NodeFrontier, "setFlow" | "count">, private readonly out: string, private readonly who: string,
    private readonly minFree: MinFreeDisk | undefined, private readonly readFree: (dir: string) => Promise<FreeSpace> = freeSpace,
    private readonly now: () => number = Date.now,
  ) {}

  /** Never throws: a failed statfs leaves the decision to the supervisor's check. */
  async beforeLease(): Promise<void> {
    if (!this.minFree || this.now() < this.nextCheckAt) return;
    try {
      const free = await this.readFree(this.out);
      const need = thresholdBytes(this.minFree, free.totalBytes);
      if (free.freeBytes >= need) {
        this.pausedByUs = false;
        this.nextCheckAt = this.now() + Math.min(MAX_CHECK_GAP_MS, ((free.freeBytes - need) / ASSUMED_WRITE_BYTES_PER_S) * 1000);
        return;
      }
      // Already paused: lease.lua answers disk-full until the supervisor resumes.
      if (this.pausedByUs) return;
      this.pausedByUs = true;
      await this.frontier.setFlow({ diskFull: `${this.who}: low disk space: ${free.freeBytes} bytes free < ${need} (--min-free-disk)` });
      await this.frontier.count("lowDiskPauses", 1);
    } catch {
      // (statfs or Redis failed: the supervisor's timed check still runs)
    }
  }
}
