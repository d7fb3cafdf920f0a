// Crash repair at node start, before any writer opens: every unfinished output file (*.open) is cut
// back to its last whole record, indexed, and given its final name, so the output folder only holds
// files that standard tools read completely. Some data loss at the tail is accepted by design.
import { type FileHandle, open, readdir, rename, stat, unlink } from "node:fs/promises";
import { dirname, join } from "node:path";
import { errnoCode, syncDir } from "./append-file.js";
import { processAlive } from "./process-alive.js";
import { cdxjLine, cdxjNameFor, cdxTimestamp, mimeOf, surtKey, writeCdxjFile } from "./cdxj.js";
import { OPEN_SUFFIX, parseOutputName } from "./file-names.js";
import { type ScanOptions, type WarcRecordView, parseHttpHead, scanWarcFile, warcHeader } from "./warc-reader.js";

export interface RepairedFile {
  /** The .open file found. */
  path: string;
  /** Its final path, or null when nothing whole was left and it was deleted. */
  finalPath: string | null;
  /** WARC records, or page log lines, kept. */
  kept: number;
  bytesDropped: number;
  /** WARC only: the regenerated index and its number of lines. */
  cdxjPath?: string;
  indexed?: number;
  /** Why the tail was dropped (WARC only), e.g. "file ends inside a gzip member". */
  cutReason?: string;
}

export interface RepairReport {
  warcFiles: RepairedFile[];
  pageLogs: RepairedFile[];
  /** Files left alone, e.g. still being written by a live process. */
  skipped: Array<{ path: string; reason: string }>;
  errors: Array<{ path: string; error: string }>;
  filesRepaired: number;
  filesRemoved: number;
  recordsKept: number;
  linesKept: number;
  bytesDropped: number;
}

/** Totals of a repair by the pid of the process that wrote the files (from their names; -1: a name without one). */
export interface RepairByWriter {
  files: number;
  recordsKept: number;
  linesKept: number;
  bytesDropped: number;
}

export function repairsByWriter(report: RepairReport): Map<number, RepairByWriter> {
  const out = new Map<number, RepairByWriter>();
  for (const [files, isWarc] of [[report.warcFiles, true], [report.pageLogs, false]] as const) {
    for (const f of files) {
      const pid = parseOutputName(f.path.slice(dirname(f.path).length + 1))?.pid ?? -1;
      let t = out.get(pid);
      if (t === undefined) out.set(pid, (t = { files: 0, recordsKept: 0, linesKept: 0, bytesDropped: 0 }));
      t.files++;
      if (isWarc) t.recordsKept += f.kept;
      else t.linesKept += f.kept;
      t.bytesDropped += f.bytesDropped;
    }
  }
  return out;
}

export interface RepairOptions extends ScanOptions {
  /**
   * Leave alone files whose name carries the pid of another live process (default true), so a
   * repair started while other writers run never cuts a file under them.
   */
  skipLiveWriters?: boolean;
  /** Folder depth searched below outDir (default 3: out/, out/warc/, out/pages/...). */
  maxDepth?: number;
}

/** Repairs every *.warc.gz.open and *.jsonl.open under `outDir`; a missing outDir is an empty report. */
export async function repairOutputDir(outDir: string, opts: RepairOptions = {}): Promise<RepairReport> {
  const report: RepairReport = {
    warcFiles: [],
    pageLogs: [],
    skipped: [],
    errors: [],
    filesRepaired: 0,
    filesRemoved: 0,
    recordsKept: 0,
    linesKept: 0,
    bytesDropped: 0,
  };
  const skipLive = opts.skipLiveWriters ?? true;
  for (const path of await findFiles(outDir, opts.maxDepth ?? 3)) {
    const name = path.slice(dirname(path).length + 1);
    const isWarc = name.endsWith(`.warc.gz${OPEN_SUFFIX}`);
    const isLog = name.endsWith(`.jsonl${OPEN_SUFFIX}`);
    const isTmpIndex = name.endsWith(".cdxj.tmp");
    if (!isWarc && !isLog && !isTmpIndex) continue;
    const pid = parseOutputName(name.replace(/\.tmp$/, ""))?.pid;
    if (skipLive && pid !== undefined && pid !== process.pid && processAlive(pid)) {
      report.skipped.push({ path, reason: `writer process ${pid} is alive` });
      continue;
    }
    try {
      if (isTmpIndex) {
        await unlink(path); // an index write cut short; the WARC it belongs to gets a fresh one
        continue;
      }
      const fixed = isWarc ? await repairWarcFile(path, opts) : await repairPageLog(path);
      (isWarc ? report.warcFiles : report.pageLogs).push(fixed);
      report.bytesDropped += fixed.bytesDropped;
      if (fixed.finalPath === null) report.filesRemoved += 1;
      else report.filesRepaired += 1;
      if (isWarc) report.recordsKept += fixed.kept;
      else report.linesKept += fixed.kept;
    } catch (err) {
      report.errors.push({ path, error: err instanceof Error ? err.message : String(err) });
    }
  }
  return report;
}

async function findFiles(dir: string, depth: number): Promise<string[]> {
  let entries;
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return [];
    throw err;
  }
  const out: string[] = [];
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isFile()) out.push(p);
    else if (e.isDirectory() && depth > 0) out.push(...(await findFiles(p, depth - 1)));
  }
  return out.sort();
}

function finalPathOf(openPath: string): string {
  if (!openPath.endsWith(OPEN_SUFFIX)) throw new Error(`not an .open file: ${openPath}`);
  return openPath.slice(0, -OPEN_SUFFIX.length);
}

async function refuseToOverwrite(finalPath: string): Promise<void> {
  try {
    await stat(finalPath);
  } catch (err) {
    if (errnoCode(err) === "ENOENT") return;
    throw err;
  }
  throw new Error(`${finalPath} already exists; left the .open file alone`);
}

/** The CDXJ line of a response record read back from a file (same fields the writer indexes). */
function indexLineOf(rec: WarcRecordView, filename: string): string | undefined {
  if (rec.type !== "response") return undefined;
  const url = warcHeader(rec, "WARC-Target-URI");
  const date = warcHeader(rec, "WARC-Date");
  const digest = warcHeader(rec, "WARC-Payload-Digest");
  const head = parseHttpHead(rec.block);
  const status = head?.startLine.split(" ")[1];
  if (url === undefined || date === undefined || digest === undefined || status === undefined) return undefined;
  const contentType = head?.headers.find(([n]) => n.toLowerCase() === "content-type")?.[1];
  const mime = mimeOf(contentType);
  return cdxjLine({
    urlkey: surtKey(url),
    timestamp: cdxTimestamp(date),
    url,
    ...(mime !== undefined ? { mime } : {}),
    status,
    digest,
    offset: rec.memberOffset,
    length: rec.memberLength,
    filename,
  });
}

/**
 * Cuts a WARC .open file after its last gzip member that holds whole records, writes its CDXJ,
 * and renames it to its final name (or deletes it when no whole record is left).
 */
export async function repairWarcFile(openPath: string, opts: ScanOptions = {}): Promise<RepairedFile> {
  const finalPath = finalPathOf(openPath);
  await refuseToOverwrite(finalPath);
  const filename = finalPath.slice(dirname(finalPath).length + 1);
  const size = (await stat(openPath)).size;
  let keptBytes = 0;
  let kept = 0;
  let cutReason: string | undefined;
  const index: string[] = [];
  for await (const m of scanWarcFile(openPath, opts)) {
    if (m.kind === "bad") {
      cutReason = m.reason;
      break;
    }
    keptBytes = m.offset + m.length;
    kept += m.records.length;
    // A member with several records cannot be pointed at one record; ours hold one each.
    if (m.records.length === 1) {
      const line = indexLineOf(m.records[0]!, filename);
      if (line !== undefined) index.push(line);
    }
  }
  const result: RepairedFile = { path: openPath, finalPath, kept, bytesDropped: size - keptBytes };
  if (cutReason !== undefined) result.cutReason = cutReason;
  if (keptBytes === 0) {
    await unlink(openPath);
    return { ...result, finalPath: null };
  }
  await truncateAndSync(openPath, keptBytes);
  const cdxjPath = join(dirname(finalPath), cdxjNameFor(filename));
  await writeCdxjFile(cdxjPath, index);
  await rename(openPath, finalPath);
  await syncDir(dirname(finalPath));
  return { ...result, cdxjPath, indexed: index.length };
}

/** Cuts a page log .open file after its last complete line and renames it (or deletes it if none). */
export async function repairPageLog(openPath: string): Promise<RepairedFile> {
  const finalPath = finalPathOf(openPath);
  await refuseToOverwrite(finalPath);
  const fh = await open(openPath, "r");
  let size: number;
  let keptBytes: number;
  let lines: number;
  try {
    size = (await fh.stat()).size;
    keptBytes = await endOfLastLine(fh, size);
    lines = await countNewlines(fh, keptBytes);
  } finally {
    await fh.close();
  }
  const result: RepairedFile = { path: openPath, finalPath, kept: lines, bytesDropped: size - keptBytes };
  if (keptBytes === 0) {
    await unlink(openPath);
    return { ...result, finalPath: null };
  }
  await truncateAndSync(openPath, keptBytes);
  await rename(openPath, finalPath);
  await syncDir(dirname(finalPath));
  return result;
}

const CHUNK = 1024 * 1024;

/** Offset just after the last "\n", searching backwards a chunk at a time. */
async function endOfLastLine(fh: FileHandle, size: number): Promise<number> {
  const buf = Buffer.allocUnsafe(CHUNK);
  let end = size;
  while (end > 0) {
    const start = Math.max(0, end - CHUNK);
    const { bytesRead } = await fh.read(buf, 0, end - start, start);
    const nl = buf.subarray(0, bytesRead).lastIndexOf(0x0a);
    if (nl >= 0) return start + nl + 1;
    end = start;
  }
  return 0;
}

async function countNewlines(fh: FileHandle, upTo: number): Promise<number> {
  const buf = Buffer.allocUnsafe(CHUNK);
  let count = 0;
  for (let pos = 0; pos < upTo; ) {
    const { bytesRead } = await fh.read(buf, 0, Math.min(CHUNK, upTo - pos), pos);
    if (bytesRead === 0) break;
    for (let i = buf.indexOf(0x0a, 0); i >= 0 && i < bytesRead; i = buf.indexOf(0x0a, i + 1)) count += 1;
    pos += bytesRead;
  }
  return count;
}

async function truncateAndSync(path: string, length: number): Promise<void> {
  const fh = await open(path, "r+");
  try {
    await fh.truncate(length);
    await fh.sync();
  } finally {
    await fh.close();
  }
}
