// WARC 1.1 record serialization: pure, synchronous functions, safe inside a piscina worker thread
// (records are built next to the parse step, the writer only appends bytes).
//
// Hand-written with node:zlib rather than warcio's writer because warcio 2.4.11's serializer throws
// "Invalid multi value WARC header: WARC-Target-URI" for valid URLs containing commas (such as
// http://www.pcmag.com/join/0,,,00.asp), and its per-record async stream machinery is heavier than
// we want on the hot path. WARC is a simple text format; warcio is still the reader that the tests
// use to prove our files are standard.
import { randomUUID } from "node:crypto";
import { isIP } from "node:net";
import { crc32, gzipSync } from "node:zlib";
import type { FetchedPage } from "../shared/types.js";
import { type CdxFields, cdxTimestamp, mimeOf, surtKey } from "./cdxj.js";
import { sha1Base32 } from "./digest.js";

export const DEFAULT_GZIP_LEVEL = 6;
const CRLF = "\r\n";
const RECORD_END = Buffer.from("\r\n\r\n", "latin1");
/** Control bytes except HTAB: never allowed inside a header line (they are what hostile values inject). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARS = /[\x00-\x08\x0a-\x1f\x7f]/g;

/** A page that cannot be turned into a valid record (bad URL, date or status): a clear error, not a bad file. */
export class WarcInputError extends Error {
  override name = "WarcInputError";
}

/** One gzip member holding one record. */
export interface BuiltRecord {
  data: Buffer;
  /** "urn:uuid:..." (written in the header as <urn:uuid:...>). */
  recordId: string;
}

export interface PageRecordOptions {
  /** Record ID of the warcinfo record of the file these records go to (see WarcFileWriter.warcinfoId). */
  warcinfoId?: string;
  /** gzip level 0..9 (default 6). */
  gzipLevel?: number;
  /** Fixed record IDs (tests); fresh urn:uuid IDs otherwise. */
  recordIds?: { request: string; response: string };
  /** Request method (the crawler only sends GET). */
  method?: string;
  /**
   * "sha1:BASE32" of the body when the caller already has it (the parse step computes the same
   * digest), so the body is hashed once less; computed here otherwise.
   */
  payloadDigest?: string;
}

/** The request+response pair of one page, each its own gzip member, concatenated. */
export interface PageRecords {
  data: Buffer;
  /** Byte range of the response member inside `data`. */
  responseOffset: number;
  responseLength: number;
  /** sha1:BASE32 of the body as received (content-encoding kept). */
  payloadDigest: string;
  recordIds: { request: string; response: string };
  warcinfoId?: string;
  /** Index fields of the response record, for the CDXJ line the writer adds. */
  cdx: CdxFields;
  /** The response record's WARC header fields and HTTP head size, as written (WAT records describe them). */
  responseFields: Array<[string, string]>;
  responseHeadLength: number;
}

/** "urn:uuid:<v4>". */
export function newRecordId(): string {
  return `urn:uuid:${randomUUID()}`;
}

/** Accepts "urn:uuid:x" or "<urn:uuid:x>"; returns the bare URI. Rejects anything that could break a header. */
function bareId(id: string, what: string): string {
  const bare = id.startsWith("<") && id.endsWith(">") ? id.slice(1, -1) : id;
  if (!/^[\x21-\x7e]+$/.test(bare) || /[<>]/.test(bare)) throw new WarcInputError(`invalid ${what}: ${JSON.stringify(id)}`);
  return bare;
}

/**
 * Does the response carry a content-coding (gzip, br, deflate, zstd ...)? Such a payload does not
 * shrink again, and deflating it costs as much as deflating HTML (measured: 69-74 MB/s at levels
 * 1-6 for a ratio of 1.001), so its record is written as a stored (level 0) gzip member: still one
 * valid member per record, at 8x less CPU.
 */
export function payloadIsCompressed(headers: ReadonlyArray<readonly [string, string]>): boolean {
  for (const [name, value] of headers) {
    if (name.length !== 16 || name.toLowerCase() !== "content-encoding") continue;
    const coding = value.trim().toLowerCase();
    if (coding !== "" && coding !== "identity") return true;
  }
  return false;
}

function gzipLevelOf(level: number | undefined): number {
  const l = level ?? DEFAULT_GZIP_LEVEL;
  if (!Number.isInteger(l) || l < 0 || l > 9) throw new RangeError(`gzip level must be an integer 0..9, got ${l}`);
  return l;
}

/** WARC header values are one line: CR, LF and other control bytes become spaces. */
function cleanWarcValue(value: string): string {
  return value.replace(CONTROL_CHARS, " ");
}

/** WARC-Date with milliseconds (WARC 1.1 allows fractional seconds), always UTC. */
function warcDate(input: string | Date, what: string): string {
  const d = typeof input === "string" ? new Date(input) : input;
  const t = d.getTime();
  if (!Number.isFinite(t) || d.getUTCFullYear() < 1970 || d.getUTCFullYear() > 9999) {
    throw new WarcInputError(`invalid ${what}: ${JSON.stringify(String(input))}`);
  }
  return d.toISOString();
}

/**
 * WARC-Target-URI: kept byte for byte when it is plain printable ASCII (the normal case: URLs come
 * normalized), otherwise re-serialized by WHATWG URL, which percent-encodes spaces and controls.
 */
function targetUri(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new WarcInputError(`invalid URL: ${JSON.stringify(url.slice(0, 200))}`);
  }
  return /^[\x21-\x7e]+$/.test(url) ? url : parsed.href;
}

/** The record's bytes in order: "WARC/1.1" + fields + CRLF, then the block, then CRLF CRLF. */
function recordParts(fields: Array<[string, string]>, block: Buffer[]): Buffer[] {
  let head = `WARC/1.1${CRLF}`;
  for (const [name, value] of fields) head += `${name}: ${cleanWarcValue(value)}${CRLF}`;
  head += CRLF;
  return [Buffer.from(head, "utf8"), ...block, RECORD_END];
}

/** One gzip member: "WARC/1.1" + fields + CRLF + block + CRLF CRLF. */
function gzipRecord(fields: Array<[string, string]>, block: Buffer[], level: number): Buffer {
  const parts = recordParts(fields, block);
  if (level === 0) {
    const out = Buffer.allocUnsafe(storedMemberLength(blockLength(parts)));
    writeStoredMember(parts, out, 0);
    return out;
  }
  return gzipSync(Buffer.concat(parts), { level });
}

// A level-0 gzip member is written here rather than by zlib: stored deflate blocks around the
// bytes plus zlib's CRC-32. Same bytes on disk as any valid stored member, but no deflate state
// per record and one copy of the payload instead of three (measured on htmlparser-benchmark's
// pages: 85-100 us per page with gzipSync level 0, 23-36 us here).
const GZIP_HEADER = Buffer.from([0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 4, 3]); // deflate, no flags, mtime 0, XFL 4, OS Unix: what zlib writes
const STORED_BLOCK_MAX = 65535;

/** Bytes of a stored gzip member holding `n` bytes: header, 5 bytes per block, data, CRC-32 and size. */
function storedMemberLength(n: number): number {
  return GZIP_HEADER.length + 5 * Math.max(1, Math.ceil(n / STORED_BLOCK_MAX)) + n + 8;
}

/** Writes `parts` as one stored gzip member into `out` at `at`; returns the offset after it. */
function writeStoredMember(parts: Uint8Array[], out: Buffer, at: number): number {
  let total = 0;
  let crc = 0;
  for (const p of parts) {
    total += p.length;
    // Skip empty parts: an empty buffer may have no backing store, and zlib's crc32 returns 0 for a NULL buffer.
    if (p.length > 0) crc = crc32(p, crc);
  }
  let o = at + GZIP_HEADER.copy(out, at);
  let left = total;
  let pi = 0;
  let po = 0;
  do {
    const n = Math.min(STORED_BLOCK_MAX, left);
    left -= n;
    out[o] = left === 0 ? 1 : 0; // BFINAL on the last block, BTYPE 00 (stored)
    out.writeUInt16LE(n, o + 1);
    out.writeUInt16LE(~n & 0xffff, o + 3);
    o += 5;
    for (let need = n; need > 0; ) {
      const p = parts[pi]!;
      const take = Math.min(need, p.length - po);
      out.set(p.subarray(po, po + take), o);
      o += take;
      po += take;
      need -= take;
      if (po === p.length) {
        pi++;
        po = 0;
      }
    }
  } while (left > 0);
  out.writeUInt32LE(crc >>> 0, o);
  out.writeUInt32LE(total >>> 0, o + 4); // ISIZE: size mod 2^32
  return o + 8;
}

/** The highest gzip level at which small records are written stored rather than deflated. */
const FAST_GZIP_LEVEL = 1;

/** A record to write as a stored member (its parts), or a member already deflated. */
type Member = { stored: Buffer[] } | Buffer;

function storedParts(parts: Buffer[]): Member {
  return { stored: parts };
}

function memberLength(m: Member): number {
  return Buffer.isBuffer(m) ? m.length : storedMemberLength(blockLength(m.stored));
}

function writeMember(m: Member, out: Buffer, at: number): number {
  if (Buffer.isBuffer(m)) return at + m.copy(out, at);
  return writeStoredMember(m.stored, out, at);
}

function blockLength(block: Buffer[]): number {
  let n = 0;
  for (const b of block) n += b.length;
  return n;
}

// ---------------------------------------------------------------------------------------------
// HTTP message heads as they go into the record block.

const TOKEN_CHAR = /[!#$%&'*+\-.^_`|~0-9A-Za-z]/;

/** Header names must be tokens; anything else (a space, a colon, CR/LF) becomes "_" so the head still parses. */
function cleanHeaderName(name: string): string {
  let out = "";
  for (const c of name) out += TOKEN_CHAR.test(c) ? c : "_";
  return out;
}

/**
 * Header values keep their bytes: undici hands them over as latin1-decoded strings, so latin1
 * re-encoding restores the bytes received; a value with characters above U+00FF is written as
 * UTF-8. The result is a "binary string" (one char per byte). CR, LF, NUL and other controls
 * (HTAB excepted) become spaces: a hostile header can never start a new header or end the head.
 */
function headerValueBytes(value: string): string {
  const clean = value.replace(CONTROL_CHARS, " ");
  return /^[^\u0100-\uffff]*$/.test(clean) ? clean : Buffer.from(clean, "utf8").toString("latin1");
}

/** Transfer-Encoding minus "chunked": the body is stored de-chunked; other codings (rare) stay. */
function transferEncodingWithoutChunked(value: string): string | undefined {
  const codings = value
    .split(",")
    .map((c) => c.trim())
    .filter((c) => c !== "" && c.toLowerCase() !== "chunked");
  return codings.length > 0 ? codings.join(", ") : undefined;
}

interface HttpHead {
  bytes: Buffer;
  /** First Content-Type value as written (binary string). */
  contentType?: string;
}

function httpHead(startLine: string, headers: Array<[string, string]>, dropChunked: boolean): HttpHead {
  let head = startLine + CRLF;
  let contentType: string | undefined;
  for (const [rawName, rawValue] of headers) {
    const name = cleanHeaderName(rawName);
    if (name === "") continue;
    let value: string | undefined = headerValueBytes(rawValue);
    const lower = name.toLowerCase();
    if (dropChunked && lower === "transfer-encoding") value = transferEncodingWithoutChunked(value);
    if (value === undefined) continue;
    if (lower === "content-type" && contentType === undefined) contentType = value;
    head += `${name}: ${value}${CRLF}`;
  }
  head += CRLF;
  return { bytes: Buffer.from(head, "latin1"), contentType };
}

/** "1.1" -> "HTTP/1.1"; anything odd falls back to HTTP/1.1 rather than corrupting the start line. */
function httpVersion(v: string): string {
  return /^\d(\.\d)?$/.test(v) ? `HTTP/${v}` : "HTTP/1.1";
}

function statusLine(page: FetchedPage): string {
  if (!Number.isInteger(page.status) || page.status < 0 || page.status > 999) {
    throw new WarcInputError(`invalid HTTP status ${String(page.status)} for ${page.url.slice(0, 200)}`);
  }
  const reason = headerValueBytes(page.statusText ?? "");
  return `${httpVersion(page.httpVersion)} ${page.status} ${reason}`;
}

function requestLine(method: string, url: URL, version: string): string {
  if (!/^[A-Z]{1,16}$/.test(method)) throw new WarcInputError(`invalid request method ${JSON.stringify(method)}`);
  // Origin-form target; the URL parser has already percent-encoded spaces and controls.
  return `${method} ${url.pathname}${url.search} ${httpVersion(version)}`;
}

/** undici always sends Host; name it in the request record when the fetcher's list left it implicit. */
function withHost(headers: Array<[string, string]>, url: URL): Array<[string, string]> {
  if (headers.some(([n]) => n.toLowerCase() === "host")) return headers;
  return [["Host", url.host], ...headers];
}

// ---------------------------------------------------------------------------------------------

/** The request and response records of one fetched page (request first, as they happened). */
export function buildPageRecords(page: FetchedPage, opts: PageRecordOptions = {}): PageRecords {
  const level = gzipLevelOf(opts.gzipLevel);
  const uri = targetUri(page.url);
  const url = new URL(uri);
  const date = warcDate(page.fetchedAt, `fetchedAt for ${uri.slice(0, 200)}`);
  const requestId = bareId(opts.recordIds?.request ?? newRecordId(), "request record ID");
  const responseId = bareId(opts.recordIds?.response ?? newRecordId(), "response record ID");
  const warcinfoId = opts.warcinfoId === undefined ? undefined : bareId(opts.warcinfoId, "warcinfo ID");
  const ip = page.ip !== undefined && isIP(page.ip) !== 0 ? page.ip : undefined;
  const body = page.body;

  const reqHead = httpHead(requestLine(opts.method ?? "GET", url, page.httpVersion), withHost(page.requestHeaders, url), false);
  const reqBlock = [reqHead.bytes];
  const reqFields: Array<[string, string]> = [
    ["WARC-Type", "request"],
    ["WARC-Record-ID", `<${requestId}>`],
    ["WARC-Date", date],
    ["WARC-Target-URI", uri],
    ["WARC-Concurrent-To", `<${responseId}>`],
  ];
  if (warcinfoId !== undefined) reqFields.push(["WARC-Warcinfo-ID", `<${warcinfoId}>`]);
  reqFields.push(
    ["WARC-Block-Digest", sha1Base32(reqHead.bytes)],
    ["Content-Type", "application/http; msgtype=request"],
    ["Content-Length", String(blockLength(reqBlock))],
  );

  const respHead = httpHead(statusLine(page), page.headers, true);
  const respBlock = [respHead.bytes, body];
  const payloadDigest = opts.payloadDigest !== undefined && /^sha1:[A-Z2-7]{32}$/.test(opts.payloadDigest) ? opts.payloadDigest : sha1Base32(body);
  const respFields: Array<[string, string]> = [
    ["WARC-Type", "response"],
    ["WARC-Record-ID", `<${responseId}>`],
    ["WARC-Date", date],
    ["WARC-Target-URI", uri],
  ];
  if (ip !== undefined) respFields.push(["WARC-IP-Address", ip]);
  respFields.push(["WARC-Concurrent-To", `<${requestId}>`]);
  if (warcinfoId !== undefined) respFields.push(["WARC-Warcinfo-ID", `<${warcinfoId}>`]);
  respFields.push(["WARC-Block-Digest", sha1Base32(respHead.bytes, body)], ["WARC-Payload-Digest", payloadDigest]);
  if (page.truncated === "length" || page.truncated === "time") respFields.push(["WARC-Truncated", page.truncated]);
  respFields.push(
    ["Content-Type", "application/http; msgtype=response"],
    ["Content-Length", String(blockLength(respBlock))],
  );

  // A request record (~700 bytes) deflates to ~400, and a zlib stream set up for it costs more
  // CPU than the rest of the record's building: at the fast levels (0 and 1) it is stored.
  const request = level <= FAST_GZIP_LEVEL ? storedParts(recordParts(reqFields, reqBlock)) : gzipRecord(reqFields, reqBlock, level);
  const responseLevel = payloadIsCompressed(page.headers) ? 0 : level;
  let data: Buffer;
  let requestLength: number;
  let responseLength: number;
  if (responseLevel === 0) {
    // Stored: written straight into the page's buffer, so the payload is copied once.
    const response = storedParts(recordParts(respFields, respBlock));
    requestLength = memberLength(request);
    responseLength = memberLength(response);
    data = Buffer.allocUnsafe(requestLength + responseLength);
    writeMember(request, data, 0);
    writeMember(response, data, requestLength);
  } else {
    const response = gzipRecord(respFields, respBlock, responseLevel);
    requestLength = memberLength(request);
    responseLength = response.length;
    data = Buffer.allocUnsafe(requestLength + responseLength);
    writeMember(request, data, 0);
    response.copy(data, requestLength);
  }
  const cdx: CdxFields = {
    urlkey: surtKey(uri),
    timestamp: cdxTimestamp(date),
    url: uri,
    status: String(page.status),
    digest: payloadDigest,
  };
  const mime = mimeOf(respHead.contentType);
  if (mime !== undefined) cdx.mime = mime;
  return {
    data,
    responseOffset: requestLength,
    responseLength,
    payloadDigest,
    recordIds: { request: requestId, response: responseId },
    ...(warcinfoId !== undefined ? { warcinfoId } : {}),
    cdx,
    responseFields: respFields,
    responseHeadLength: respHead.bytes.length,
  };
}

export interface WarcinfoOptions {
  /** Final file name, written as WARC-Filename. */
  filename?: string;
  recordId?: string;
  date?: Date;
  gzipLevel?: number;
}

/** Fields as "name: value" lines (application/warc-fields); CR/LF in names or values cannot split a line. */
function warcFieldsBlock(fields: Record<string, string | number | boolean | undefined> | Array<[string, string]>): Buffer {
  const entries = Array.isArray(fields) ? fields : Object.entries(fields);
  let text = "";
  for (const [name, value] of entries) {
    if (value === undefined) continue;
    const cleanName = cleanHeaderName(name);
    if (cleanName === "") continue;
    text += `${cleanName}: ${cleanWarcValue(String(value))}${CRLF}`;
  }
  return Buffer.from(text, "utf8");
}

/** The warcinfo record that opens every file: software, operator, robots policy... as warc-fields. */
export function buildWarcinfo(
  fields: Record<string, string | number | boolean | undefined>,
  opts: WarcinfoOptions = {},
): BuiltRecord {
  const recordId = bareId(opts.recordId ?? newRecordId(), "warcinfo record ID");
  const block = [warcFieldsBlock(fields)];
  const header: Array<[string, string]> = [
    ["WARC-Type", "warcinfo"],
    ["WARC-Record-ID", `<${recordId}>`],
    ["WARC-Date", warcDate(opts.date ?? new Date(), "warcinfo date")],
  ];
  if (opts.filename !== undefined) header.push(["WARC-Filename", opts.filename]);
  header.push(
    ["WARC-Block-Digest", sha1Base32(...block)],
    ["Content-Type", "application/warc-fields"],
    ["Content-Length", String(blockLength(block))],
  );
  return { data: gzipRecord(header, block, gzipLevelOf(opts.gzipLevel)), recordId };
}

export interface MetadataRecordInput {
  targetUri: string;
  /** Fetch time of the page it describes. */
  date: string | Date;
  /** Record ID of the response it describes. */
  concurrentTo?: string;
  warcinfoId?: string;
  fields: Record<string, string | number | boolean | undefined> | Array<[string, string]>;
  recordId?: string;
  gzipLevel?: number;
}

/** A metadata record (application/warc-fields) about a page, e.g. outlinks or fetch timings. */
export function buildMetadataRecord(input: MetadataRecordInput): BuiltRecord {
  const recordId = bareId(input.recordId ?? newRecordId(), "metadata record ID");
  const block = [warcFieldsBlock(input.fields)];
  const header: Array<[string, string]> = [
    ["WARC-Type", "metadata"],
    ["WARC-Record-ID", `<${recordId}>`],
    ["WARC-Date", warcDate(input.date, "metadata date")],
    ["WARC-Target-URI", targetUri(input.targetUri)],
  ];
  if (input.concurrentTo !== undefined) header.push(["WARC-Concurrent-To", `<${bareId(input.concurrentTo, "concurrent-to ID")}>`]);
  if (input.warcinfoId !== undefined) header.push(["WARC-Warcinfo-ID", `<${bareId(input.warcinfoId, "warcinfo ID")}>`]);
  header.push(
    ["WARC-Block-Digest", sha1Base32(...block)],
    ["Content-Type", "application/warc-fields"],
    ["Content-Length", String(blockLength(block))],
  );
  return { data: gzipRecord(header, block, gzipLevelOf(input.gzipLevel)), recordId };
}

export interface RecordInput {
  /** WARC-Type, e.g. "conversion" or "metadata". */
  type: string;
  targetUri: string;
  date: string | Date;
  /** Record ID of the record this one was derived from (WARC-Refers-To). */
  refersTo?: string;
  warcinfoId?: string;
  /** Further header fields, written after the ones above (values are cleaned of CR/LF). */
  fields?: Array<[string, string]>;
  contentType: string;
  block: Buffer;
  recordId?: string;
  gzipLevel?: number;
}

/** A record of any type about a page (WET conversion, WAT metadata): one gzip member. */
export function buildRecord(input: RecordInput): BuiltRecord {
  const recordId = bareId(input.recordId ?? newRecordId(), `${input.type} record ID`);
  if (!/^[a-z]{1,32}$/.test(input.type)) throw new WarcInputError(`invalid WARC-Type ${JSON.stringify(input.type)}`);
  const block = [input.block];
  const header: Array<[string, string]> = [
    ["WARC-Type", input.type],
    ["WARC-Target-URI", targetUri(input.targetUri)],
    ["WARC-Date", warcDate(input.date, `${input.type} date`)],
    ["WARC-Record-ID", `<${recordId}>`],
  ];
  if (input.refersTo !== undefined) header.push(["WARC-Refers-To", `<${bareId(input.refersTo, "refers-to ID")}>`]);
  if (input.warcinfoId !== undefined) header.push(["WARC-Warcinfo-ID", `<${bareId(input.warcinfoId, "warcinfo ID")}>`]);
  if (input.fields) header.push(...input.fields);
  header.push(
    ["WARC-Block-Digest", sha1Base32(...block)],
    ["Content-Type", input.contentType],
    ["Content-Length", String(blockLength(block))],
  );
  return { data: gzipRecord(header, block, gzipLevelOf(input.gzipLevel)), recordId };
}
