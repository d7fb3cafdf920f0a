// The free-space threshold of the output disk (--min-free-disk): a percentage of the file
// system ("5%") or bytes ("2G", "500M", "1073741824"). Leasing pauses below it, before any write
// can fail with ENOSPC, and resumes only once free space is RESUME_FACTOR times the threshold, so a
// node near the line does not flap between paused and running.
import { statfs } from "node:fs/promises";

export type MinFreeDisk = { percent: number } | { bytes: number };

/** Resume once free space reaches this multiple of the pause threshold. */
export const RESUME_FACTOR = 1.5;

const UNITS: Record<string, number> = { "": 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

/** Parses "5%", "2G", "500M", "0" (off); throws a RangeError naming the bad value. */
export function parseMinFreeDisk(spec: string): MinFreeDisk {
  const s = spec.trim().toUpperCase();
  const pct = /^(\d+(?:\.\d+)?)%$/.exec(s);
  if (pct) {
    const percent = Number(pct[1]);
    if (percent >= 100) throw new RangeError(`min-free-disk: ${spec}: a percentage must be below 100`);
    return { percent };
  }
  const b = /^(\d+(?:\.\d+)?)([KMGT]?)I?B?$/.exec(s);
  if (!b) throw new RangeError(`min-free-disk: ${JSON.stringify(spec)}: expected a percentage ("5%") or bytes ("2G", "500M", "1048576")`);
  return { bytes: Math.round(Number(b[1]) * UNITS[b[2]!]!) };
}

/** The threshold in bytes for a file system of `totalBytes`. */
export function thresholdBytes(min: MinFreeDisk, totalBytes: number): number {
  return "percent" in min ? Math.round((totalBytes * min.percent) / 100) : min.bytes;
}

export interface FreeSpace {
  freeBytes: number;
  totalBytes: number;
}

/** Space available to us (bavail: without the root reserve) on the file system holding `path`. */
export async function freeSpace(path: string): Promise<FreeSpace> {
  const s = await statfs(path);
  return { freeBytes: s.bavail * s.bsize, totalBytes: s.blocks * s.bsize };
}
