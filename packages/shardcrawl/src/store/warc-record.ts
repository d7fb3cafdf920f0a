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
import { gzipSync } from "node:zlib";
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

/** One gzip member: "WARC/1.1" + fields + CRLF + block + CRLF CRLF. */
function gzipRecord(fields: Array<[string, string]>, block: Buffer[], level: number): Buffer {
  let head = `WARC/1.1${CRLF}`;
  for (const [name, value] of fields) head += `${name}: ${cleanWarcValue(value)}${CRLF}`;
  head += CRLF;
  return gzipSync(Buffer.concat([Buffer.from(head, "utf8"), ...block, RECORD_END]), { level });
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

  const request = gzipRecord(reqFields, reqBlock, level);
  const response = gzipRecord(respFields, respBlock, payloadIsCompressed(page.headers) ? 0 : level);
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
    data: Buffer.concat([request, response]),
    responseOffset: request.length,
    responseLength: response.length,
    payloadDigest,
    recordIds: { request: requestId, response: responseId },
    ...(warcinfoId !== undefined ? { warcinfoId } : {}),
    cdx,
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
