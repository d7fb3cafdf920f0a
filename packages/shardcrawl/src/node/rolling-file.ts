// A log file rolled by size: <base>.<n>.log, n counting up, the newest `keep` rotated files kept
// besides the active one. Synchronous writes, so a process that exits right after a fatal line
// does not lose it. Written here rather than taken from pino-roll, whose require("date-fns") cost
// ~100 ms of CPU at every process start for date-based rolling we do not use.
import { closeSync, mkdirSync, openSync, readdirSync, fstatSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

export interface RollingFileOptions {
  dir: string;
  /** File base name: files are <base>.<n>.log. */
  base: string;
  /** A file is rolled once it reaches this many bytes. */
  maxBytes: number;
  /** Rotated files kept besides the active one. */
  keep: number;
}

export class RollingFile {
  private fd: number;
  private number: number;
  private size: number;

  /** Opens (appending to) the newest existing file of `base`, or <base>.1.log. Throws when it cannot. */
  constructor(private readonly opts: RollingFileOptions) {
    mkdirSync(opts.dir, { recursive: true });
    this.number = Math.max(1, ...existingNumbers(opts.dir, opts.base));
    this.fd = openSync(this.path(this.number), "a");
    this.size = fstatSync(this.fd).size;
  }

  /** Appends `line`; rolls to the next file once this one reached maxBytes. Write errors (a full disk) are dropped. */
  write(line: string): void {
    try {
      this.size += writeSync(this.fd, line);
      if (this.size >= this.opts.maxBytes) this.roll();
    } catch {
      // A full disk must not crash the crawl through its logger (the page log and WARC writers report it).
    }
  }

  close(): void {
    closeSync(this.fd);
  }

  private roll(): void {
    closeSync(this.fd);
    this.number++;
    this.fd = openSync(this.path(this.number), "a");
    this.size = 0;
    const old = this.number - this.opts.keep - 1;
    if (old >= 1) {
      try {
        unlinkSync(this.path(old));
      } catch {
        // already gone
      }
    }
  }

  private path(n: number): string {
    return join(this.opts.dir, `${this.opts.base}.${n}.log`);
  }
}

function existingNumbers(dir: string, base: string): number[] {
  const prefix = `${base}.`;
  const numbers: number[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.startsWith(prefix) || !name.endsWith(".log")) continue;
    const n = Number(name.slice(prefix.length, -".log".length));
    if (Number.isSafeInteger(n) && n > 0) numbers.push(n);
  }
  return numbers;
}
