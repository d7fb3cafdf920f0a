// Finds page-log lines (store/page-log.ts) of a URL or a host, newest first, reading the newest
// files backwards and stopping at a byte budget: the page log is the record of every outcome,
// but it grows without end, so an inspection reads only its recent part and says so.
import { closeSync, existsSync, openSync, readSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import type { PageLogLine } from "../../shared/types.js";
import { hostOf } from "../../url/normalize.js";

const CHUNK = 1024 * 1024;

export interface PageLogScan {
  lines: PageLogLine[];
  /** Bytes read; complete = the byte budget did not cut the scan short. */
  scannedBytes: number;
  totalBytes: number;
  complete: boolean;
}

export interface ScanOptions {
  /** Stop after this many matching lines (the newest ones). */
  limit: number;
  /** Read at most this many bytes over all files. */
  maxBytes: number;
  /** Read size (default 1 MiB; tests use tiny ones to cross line boundaries). */
  chunkBytes?: number;
}

interface LogFile {
  path: string;
  size: number;
  mtimeMs: number;
}

function pageLogFiles(out: string): LogFile[] {
  const dir = join(out, "pages");
  if (!existsSync(dir)) return [];
  return readdirSync(dir)
    .filter((f) => /\.jsonl(\.open)?$/.test(f))
    .map((f) => {
      const st = statSync(join(dir, f));
      return { path: join(dir, f), size: st.size, mtimeMs: st.mtimeMs };
    })
    .sort((a, b) => b.mtimeMs - a.mtimeMs);
}

/** Calls `onLine` for each line of a file from the last to the first, until it returns false or `budget` bytes are read. Returns bytes read. */
function readBackwards(path: string, size: number, budget: number, chunk: number, onLine: (line: string) => boolean): number {
  const fd = openSync(path, "r");
  try {
    let pos = size;
    let carry = Buffer.alloc(0);
    let read = 0;
    while (pos > 0 && read < budget) {
      const n = Math.min(chunk, pos, budget - read);
      pos -= n;
      const buf = Buffer.allocUnsafe(n);
      readSync(fd, buf, 0, n, pos);
      read += n;
      const data = Buffer.concat([buf, carry]);
      // Lines split at "\n" bytes (never inside a UTF-8 sequence); the first part may be incomplete.
      let end = data.length;
      for (let i = data.length - 1; i >= 0; i--) {
        if (data[i] !== 0x0a) continue;
        if (end > i + 1 && !onLine(data.toString("utf8", i + 1, end))) return read;
        end = i;
      }
      carry = data.subarray(0, end);
    }
    if (pos === 0 && carry.length > 0) onLine(carry.toString("utf8"));
    return read;
  } finally {
    closeSync(fd);
  }
}

/** Newest page-log lines for which `match` holds; `quick` is a cheap substring pre-filter on the raw line. */
export function scanPageLog(out: string, quick: string, match: (l: PageLogLine) => boolean, opts: ScanOptions): PageLogScan {
  const files = pageLogFiles(out);
  const totalBytes = files.reduce((a, f) => a + f.size, 0);
  const found: PageLogLine[] = [];
  let scanned = 0;
  for (const f of files) {
    // Every line of an older file is older than its last write: once we hold `limit` lines newer than that, stop.
    if (found.length >= opts.limit && found.every((l) => Date.parse(l.fetched_at) >= f.mtimeMs)) break;
    if (scanned >= opts.maxBytes) break;
    let fromThisFile = 0;
    scanned += readBackwards(f.path, f.size, opts.maxBytes - scanned, opts.chunkBytes ?? CHUNK, (raw) => {
      if (!raw.includes(quick)) return true;
      let l: PageLogLine;
      try {
        l = JSON.parse(raw) as PageLogLine;
      } catch {
        return true; // a cut last line of a killed writer
      }
      if (!match(l)) return true;
      found.push(l);
      return ++fromThisFile < opts.limit;
    });
  }
  found.sort((a, b) => Date.parse(b.fetched_at) - Date.parse(a.fetched_at));
  return { lines: found.slice(0, opts.limit), scannedBytes: scanned, totalBytes, complete: scanned < opts.maxBytes || scanned >= totalBytes };
}

export function pageLogLinesOfUrl(out: string, url: string, opts: ScanOptions): PageLogScan {
  return scanPageLog(out, `"url":${JSON.stringify(url)}`, (l) => l.url === url, opts);
}

export function pageLogLinesOfHost(out: string, host: string, opts: ScanOptions): PageLogScan {
  return scanPageLog(out, host, (l) => hostOf(l.url) === host, opts);
}
