// Disk use of a node's output (bytes under warc/, pages/, outbox/) and the free space of its file
// system, for /status and `status --cluster`. Asynchronous and only on demand (a directory walk
// must never stall the supervisor's loop), cached for maxAgeMs.
import { readdir, stat, statfs } from "node:fs/promises";
import { join } from "node:path";

export interface DiskUsage {
  outputBytes: number;
  freeBytes: number | null;
}

async function dirBytes(dir: string, depth: number): Promise<number> {
  if (depth > 3) return 0;
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return 0;
  }
  let total = 0;
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += await dirBytes(p, depth + 1);
    else if (e.isFile()) total += await stat(p).then((s) => s.size, () => 0);
  }
  return total;
}

export async function diskUsage(out: string): Promise<DiskUsage> {
  let outputBytes = 0;
  for (const d of ["warc", "pages", "outbox"]) outputBytes += await dirBytes(join(out, d), 0);
  const freeBytes = await statfs(out).then((s) => s.bavail * s.bsize, () => null);
  return { outputBytes, freeBytes };
}

/** The last measurement at once; a new one starts in the background when it is older than maxAgeMs. */
export function cachedDiskUsage(out: string, maxAgeMs: number): () => DiskUsage | null {
  let last: DiskUsage | null = null;
  let at = 0;
  let running = false;
  return () => {
    if (!running && Date.now() - at >= maxAgeMs) {
      running = true;
      void diskUsage(out).then((d) => {
        last = d;
        at = Date.now();
      }, () => undefined).finally(() => (running = false));
    }
    return last;
  };
}
