// Output file names: <prefix>-<yyyymmddhhmmss>-<pid>-<seq><ext>, unique per process (pid + a
// per-process sequence) and sorted by creation time, so several parser processes can write into
// one folder and a directory listing reads in crawl order.
import { access } from "node:fs/promises";
import { join } from "node:path";
import { AppendFile, errnoCode } from "./append-file.js";

export const OPEN_SUFFIX = ".open";

/** Shared by every writer in this process, so two writers with one prefix never collide. */
let sequence = 0;

/** Letters, digits, dot, underscore and dash only; a prefix never contains a path separator. */
export function checkPrefix(prefix: string): string {
  if (!/^[A-Za-z0-9._-]{1,64}$/.test(prefix) || prefix.startsWith(".")) {
    throw new RangeError(`output file prefix must be 1-64 chars of [A-Za-z0-9._-], not starting with ".": ${JSON.stringify(prefix)}`);
  }
  return prefix;
}

/** 14-digit UTC timestamp. */
export function utcStamp14(date: Date = new Date()): string {
  return date.toISOString().replace(/[-:T]/g, "").slice(0, 14);
}

export interface ParsedOutputName {
  prefix: string;
  stamp: string;
  pid: number;
  seq: number;
  ext: string;
  open: boolean;
}

/** Parses a name this module produced (any extension), or returns undefined. */
export function parseOutputName(name: string): ParsedOutputName | undefined {
  const m = /^(.+)-(\d{14})-(\d+)-(\d+)(\.[A-Za-z0-9.]+?)(\.open)?$/.exec(name);
  if (!m) return undefined;
  return { prefix: m[1]!, stamp: m[2]!, pid: Number(m[3]), seq: Number(m[4]), ext: m[5]!, open: m[6] !== undefined };
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

export interface CreatedOutputFile {
  file: AppendFile;
  /** Final name, e.g. crawl-20240506070809-4242-00003.warc.gz */
  name: string;
  finalPath: string;
}

/** Creates `<dir>/<name><ext>.open` exclusively, skipping names already used (also by finished files). */
export async function createOutputFile(dir: string, prefix: string, ext: string, now: Date = new Date()): Promise<CreatedOutputFile> {
  checkPrefix(prefix);
  const stamp = utcStamp14(now);
  for (let attempt = 0; attempt < 1000; attempt++) {
    sequence += 1;
    const name = `${prefix}-${stamp}-${process.pid}-${String(sequence).padStart(5, "0")}${ext}`;
    const finalPath = join(dir, name);
    if (await exists(finalPath)) continue;
    try {
      const file = await AppendFile.create(finalPath + OPEN_SUFFIX);
      return { file, name, finalPath };
    } catch (err) {
      if (errnoCode(err) === "EEXIST") continue;
      throw err;
    }
  }
  throw new Error(`could not find a free output file name in ${dir} for prefix ${prefix}`);
}
