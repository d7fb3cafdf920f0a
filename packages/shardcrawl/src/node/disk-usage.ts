// Disk use of a node's output (bytes under warc/, pages/, outbox/) and the free space of its file
// system, for /status and `status --cluster`.
import { existsSync, readdirSync, statSync, statfsSync } from "node:fs";
import { join } from "node:path";

export interface DiskUsage {
  outputBytes: number;
  freeBytes: number | null;
}

function dirBytes(dir: string, depth: number): number {
  if (!existsSync(dir) || depth > 3) return 0;
  let total = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) total += dirBytes(p, depth + 1);
    else if (e.isFile()) {
      try {
        total += statSync(p).size;
      } catch {
        // rotated away between readdir and stat
      }
    }
  }
  return total;
}

export function diskUsage(out: string): DiskUsage {
  const outputBytes = ["warc", "pages", "outbox"].reduce((a, d) => a + dirBytes(join(out, d), 0), 0);
  let freeBytes: number | null = null;
  try {
    const s = statfsSync(out);
    freeBytes = s.bavail * s.bsize;
  } catch {
    freeBytes = null;
  }
  return { outputBytes, freeBytes };
}
