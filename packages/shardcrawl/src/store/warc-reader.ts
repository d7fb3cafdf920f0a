// A small WARC reader for our own files, gzip member by member, used by crash repair and
// verification. It must say exactly where each member ends and whether a member holds whole
// records, which a streaming reader (warcio's) hides; hand-written on node:zlib for that reason.
// Memory is bounded: a window of the file is read at a time, grown only for a member larger than it.
import { type FileHandle, open } from "node:fs/promises";
import { crc32, inflateRawSync } from "node:zlib";
import { errnoCode } from "./append-file.js";
import { sha1Base32 } from "./digest.js";

const CRLFCRLF = Buffer.from("\r\n\r\n", "latin1");
/** Longest WARC or HTTP header block we accept before calling the record malformed. */
const MAX_HEAD_BYTES = 1024 * 1024;

export interface WarcRecordView {
  /** Offset and compressed length of the gzip member holding the record. */
  memberOffset: number;
  memberLength: number;
  /** "WARC/1.1" or "WARC/1.0". */
  version: string;
  headers: Array<[string, string]>;
  type: string;
  block: Buffer;
}

/** First value of a WARC header, case-insensitive. */
export function warcHeader(rec: { headers: Array<[string, string]> }, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [n, v] of rec.headers) if (n.toLowerCase() === lower) return v;
  return undefined;
}

export type MemberResult =
  | { kind: "ok"; end: number; data: Buffer }
  | { kind: "need-more" }
  | { kind: "corrupt"; reason: string };

/**
 * Inflates the gzip member starting at `start` in `buf` and checks its CRC32 and length trailer.
 * "need-more" means the member runs past the end of `buf` (a cut file, or a window too small).
 */
export function inflateMember(buf: Buffer, start: number, maxOutputBytes: number): MemberResult {
  if (buf.length - start < 10) return { kind: "need-more" };
  if (buf[start] !== 0x1f || buf[start + 1] !== 0x8b) return { kind: "corrupt", reason: "not a gzip member (bad magic bytes)" };
  if (buf[start + 2] !== 8) return { kind: "corrupt", reason: "gzip member with unknown compression method" };
  const flags = buf[start + 3]!;
  if ((flags & 0xe0) !== 0) return { kind: "corrupt", reason: "gzip member with reserved flags set" };
  let p = start + 10;
  if (flags & 0x04) {
    if (p + 2 > buf.length) return { kind: "need-more" };
    p += 2 + buf.readUInt16LE(p);
  }
  for (const bit of [0x08, 0x10]) {
    if (flags & bit) {
      const nul = buf.indexOf(0, p);
      if (nul < 0) return { kind: "need-more" };
      p = nul + 1;
    }
  }
  if (flags & 0x02) p += 2;
  if (p >= buf.length) return { kind: "need-more" };

  let data: Buffer;
  let consumed: number;
  try {
    // With info, zlib stops at the end of the deflate stream and reports the input it consumed.
    const r = inflateRawSync(buf.subarray(p), { info: true, maxOutputLength: maxOutputBytes }) as unknown as {
      buffer: Buffer;
      engine: { bytesWritten: number };
    };
    data = r.buffer;
    consumed = r.engine.bytesWritten;
  } catch (err) {
    const code = errnoCode(err);
    if (code === "Z_BUF_ERROR") return { kind: "need-more" };
    if (code === "ERR_BUFFER_TOO_LARGE") return { kind: "corrupt", reason: `gzip member inflates to more than ${maxOutputBytes} bytes` };
    return { kind: "corrupt", reason: `bad deflate data: ${err instanceof Error ? err.message : String(err)}` };
  }
  const trailer = p + consumed;
  if (trailer + 8 > buf.length) return { kind: "need-more" };
  if (crc32(data) >>> 0 !== buf.readUInt32LE(trailer)) return { kind: "corrupt", reason: "gzip member CRC32 mismatch" };
  if (data.length >>> 0 !== buf.readUInt32LE(trailer + 4)) return { kind: "corrupt", reason: "gzip member length mismatch" };
  return { kind: "ok", end: trailer + 8, data };
}

/** Splits a decompressed member into whole WARC records; any partial or malformed record is an error. */
export function parseWarcRecords(
  data: Buffer,
  memberOffset: number,
  memberLength: number,
): { records: WarcRecordView[] } | { error: string } {
  const records: WarcRecordView[] = [];
  let pos = 0;
  while (pos < data.length) {
    const headEnd = data.indexOf(CRLFCRLF, pos);
    if (headEnd < 0 || headEnd - pos > MAX_HEAD_BYTES) return { error: "WARC record header incomplete" };
    const lines = data.toString("utf8", pos, headEnd).split("\r\n");
    const version = lines[0] ?? "";
    if (!/^WARC\/1\.[01]$/.test(version)) return { error: `not a WARC record (first line ${JSON.stringify(version.slice(0, 40))})` };
    const headers: Array<[string, string]> = [];
    for (const line of lines.slice(1)) {
      const last = headers[headers.length - 1];
      if ((line.startsWith(" ") || line.startsWith("\t")) && last) {
        last[1] += ` ${line.trim()}`;
        continue;
      }
      const colon = line.indexOf(":");
      if (colon <= 0) return { error: `malformed WARC header line ${JSON.stringify(line.slice(0, 80))}` };
      headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
    }
    const lengthText = warcHeader({ headers }, "Content-Length");
    if (lengthText === undefined || !/^\d{1,15}$/.test(lengthText)) return { error: "WARC record without a valid Content-Length" };
    const blockStart = headEnd + 4;
    const blockEnd = blockStart + Number(lengthText);
    if (blockEnd + 4 > data.length) {
      return { error: `WARC record block incomplete (Content-Length ${lengthText}, ${Math.max(0, data.length - blockStart)} bytes present)` };
    }
    if (data.compare(CRLFCRLF, 0, 4, blockEnd, blockEnd + 4) !== 0) return { error: "WARC record not followed by CRLF CRLF" };
    records.push({
      memberOffset,
      memberLength,
      version,
      headers,
      type: warcHeader({ headers }, "WARC-Type") ?? "",
      block: data.subarray(blockStart, blockEnd),
    });
    pos = blockEnd + 4;
  }
  if (records.length === 0) return { error: "empty gzip member" };
  return { records };
}

/** HTTP message head of an application/http block: start line, headers (bytes as latin1), body offset. */
export function parseHttpHead(block: Buffer): { startLine: string; headers: Array<[string, string]>; bodyOffset: number } | undefined {
  const end = block.indexOf(CRLFCRLF);
  if (end < 0 || end > MAX_HEAD_BYTES) return undefined;
  const lines = block.toString("latin1", 0, end).split("\r\n");
  const headers: Array<[string, string]> = [];
  for (const line of lines.slice(1)) {
    const colon = line.indexOf(":");
    if (colon > 0) headers.push([line.slice(0, colon).trim(), line.slice(colon + 1).trim()]);
  }
  return { startLine: lines[0] ?? "", headers, bodyOffset: end + 4 };
}

export type ScannedMember =
  | { kind: "member"; offset: number; length: number; records: WarcRecordView[] }
  | { kind: "bad"; offset: number; reason: string; /** the file ends inside this member */ truncated: boolean };

export interface ScanOptions {
  /** Initial read window (default 4 MiB); doubled for a larger member, up to maxMemberBytes. */
  windowBytes?: number;
  /** Largest compressed member accepted (default 256 MiB). */
  maxMemberBytes?: number;
  /** Largest decompressed member accepted (default 1 GiB). */
  maxRecordBytes?: number;
}

/**
 * Walks a .warc.gz member by member, yielding each whole member with its records; stops at the
 * first member that is cut, corrupt, or does not hold whole records (yielding a "bad" item).
 */
export async function* scanWarcFile(path: string, opts: ScanOptions = {}): AsyncGenerator<ScannedMember> {
  const initialWindow = opts.windowBytes ?? 4 * 1024 * 1024;
  const maxMember = opts.maxMemberBytes ?? 256 * 1024 * 1024;
  const maxRecord = opts.maxRecordBytes ?? 1024 * 1024 * 1024;
  const fh = await open(path, "r");
  try {
    const size = (await fh.stat()).size;
    let buf: Buffer = Buffer.alloc(0);
    let bufStart = 0;
    let window = initialWindow;
    let pos = 0;
    while (pos < size) {
      const res = inflateMember(buf, pos - bufStart, maxRecord);
      if (res.kind === "need-more") {
        const bufEnd = bufStart + buf.length;
        if (bufEnd >= size) {
          yield { kind: "bad", offset: pos, reason: "file ends inside a gzip member", truncated: true };
          return;
        }
        if (bufStart === pos && buf.length >= window) {
          if (window >= maxMember) {
            yield { kind: "bad", offset: pos, reason: `gzip member larger than ${maxMember} bytes`, truncated: false };
            return;
          }
          window = Math.min(window * 2, maxMember);
        }
        buf = await readAt(fh, pos, Math.min(window, size - pos));
        bufStart = pos;
        continue;
      }
      if (res.kind === "corrupt") {
        yield { kind: "bad", offset: pos, reason: res.reason, truncated: false };
        return;
      }
      const length = bufStart + res.end - pos;
      const parsed = parseWarcRecords(res.data, pos, length);
      if ("error" in parsed) {
        yield { kind: "bad", offset: pos, reason: parsed.error, truncated: false };
        return;
      }
      yield { kind: "member", offset: pos, length, records: parsed.records };
      pos += length;
      window = initialWindow;
    }
  } finally {
    await fh.close();
  }
}

async function readAt(fh: FileHandle, position: number, length: number): Promise<Buffer> {
  const buf = Buffer.allocUnsafe(length);
  let done = 0;
  while (done < length) {
    const { bytesRead } = await fh.read(buf, done, length - done, position + done);
    if (bytesRead === 0) break;
    done += bytesRead;
  }
  return buf.subarray(0, done);
}

export interface WarcVerifyReport {
  path: string;
  /** True when every member is whole and every digest present matches. */
  ok: boolean;
  members: number;
  records: number;
  byType: Record<string, number>;
  /** Bytes up to the end of the last good member. */
  validBytes: number;
  errors: string[];
}

/** Reads every record of a .warc.gz, checking gzip CRCs, record framing and sha1 block/payload digests. */
export async function verifyWarcFile(path: string, opts: ScanOptions = {}): Promise<WarcVerifyReport> {
  const report: WarcVerifyReport = { path, ok: true, members: 0, records: 0, byType: {}, validBytes: 0, errors: [] };
  const fail = (msg: string): void => {
    report.ok = false;
    if (report.errors.length < 100) report.errors.push(msg);
  };
  for await (const m of scanWarcFile(path, opts)) {
    if (m.kind === "bad") {
      fail(`offset ${m.offset}: ${m.reason}`);
      break;
    }
    report.members += 1;
    report.validBytes = m.offset + m.length;
    for (const rec of m.records) {
      report.records += 1;
      report.byType[rec.type] = (report.byType[rec.type] ?? 0) + 1;
      const id = warcHeader(rec, "WARC-Record-ID") ?? `record at ${m.offset}`;
      const blockDigest = warcHeader(rec, "WARC-Block-Digest");
      if (blockDigest?.startsWith("sha1:") && sha1Base32(rec.block) !== blockDigest) fail(`${id}: WARC-Block-Digest mismatch`);
      const payloadDigest = warcHeader(rec, "WARC-Payload-Digest");
      if (payloadDigest?.startsWith("sha1:") && (warcHeader(rec, "Content-Type") ?? "").startsWith("application/http")) {
        const head = parseHttpHead(rec.block);
        if (!head) fail(`${id}: HTTP head incomplete`);
        else if (sha1Base32(rec.block.subarray(head.bodyOffset)) !== payloadDigest) fail(`${id}: WARC-Payload-Digest mismatch`);
      }
    }
  }
  return report;
}
