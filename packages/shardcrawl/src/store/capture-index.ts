// The columnar capture index: one Parquet file per WARC file (NAME.parquet beside NAME.warc.gz),
// one row per response record, sorted at close by registrable domain, then SURT key, then fetch
// time, so a domain's rows sit together (row-group statistics let a reader skip the rest).
// Column names follow Common Crawl's columnar index (url_surtkey, url_host_registered_domain,
// fetch_time, warc_filename, warc_record_offset ...) so queries written for it read ours; our own
// columns (fetch_error, crawl_depth, crawl_node, content_truncated) are added.
//
// Why hyparquet-writer: pure JavaScript with one dependency (its reader, hyparquet), maintained
// (hyparam, monthly releases), columnar input (we sort rows at close and hand it whole columns),
// snappy built in, and it writes a 10,000-row index in tens of milliseconds (BENCHMARKS.md). The
// alternatives: @dsnp/parquetjs (a fork of the abandoned parquetjs, row-at-a-time, a dozen
// dependencies) and parquet-wasm / DuckDB (native or WASM binaries of tens of MB in every node).
import { open, rename } from "node:fs/promises";
import { asyncBufferFromFile, parquetMetadataAsync, parquetReadObjects } from "hyparquet";
import { type ColumnSource, fileWriter, ParquetWriter, parquetWriteBuffer, type SchemaElement } from "hyparquet-writer";
import { hostOf } from "../url/normalize.js";
import { registrableDomain } from "../url/scope.js";
import { surtKey, writeWholeFile } from "./cdxj.js";

/** What the parser knows about a capture before the writer places it. */
export interface CaptureFields {
  url: string;
  /** ISO time of the fetch. */
  fetchTime: string;
  status: number | null;
  mime: string | null;
  charset: string | null;
  /** Language the page declares (<html lang>); no detection is run. */
  language: string | null;
  /** sha1:BASE32 of the payload as received. */
  digest: string | null;
  truncated: boolean;
  /** Error class of the page-log line (decode-error, redirect-limit ...), null when none. */
  error: string | null;
  depth: number;
  node: string;
}

export interface CaptureRow extends CaptureFields {
  surtKey: string;
  host: string;
  /** Registrable domain (url/scope.ts: public suffix + 1, the scope's key); the host itself for IPs and single labels. */
  domain: string;
  /** WARC file name, offset and length of the response record's gzip member. */
  file: string;
  offset: number;
  length: number;
}

export function captureRow(fields: CaptureFields, location: { file: string; offset: number; length: number }): CaptureRow {
  const host = hostOf(fields.url) ?? "";
  const domain = registrableDomain(host);
  // One literal shape for every row (not a spread of the caller's object): the column accessors stay monomorphic.
  return {
    url: fields.url, fetchTime: fields.fetchTime, status: fields.status, mime: fields.mime, charset: fields.charset, language: fields.language,
    digest: fields.digest, truncated: fields.truncated, error: fields.error, depth: fields.depth, node: fields.node,
    surtKey: surtKey(fields.url), host, domain, file: location.file, offset: location.offset, length: location.length,
  };
}

function compareRows(a: CaptureRow, b: CaptureRow): number {
  if (a.domain !== b.domain) return a.domain < b.domain ? -1 : 1;
  if (a.surtKey !== b.surtKey) return a.surtKey < b.surtKey ? -1 : 1;
  return a.fetchTime < b.fetchTime ? -1 : a.fetchTime > b.fetchTime ? 1 : 0;
}

/** The Parquet schema: Common Crawl's column names where they have one. */
const STRING = { type: "BYTE_ARRAY", converted_type: "UTF8" } as const;
const COLUMNS: Array<{ name: string; element: Omit<SchemaElement, "name">; value: (r: CaptureRow) => unknown; required?: boolean }> = [
  { name: "url_surtkey", element: STRING, value: (r) => r.surtKey, required: true },
  { name: "url", element: STRING, value: (r) => r.url, required: true },
  { name: "url_host_name", element: STRING, value: (r) => r.host, required: true },
  { name: "url_host_registered_domain", element: STRING, value: (r) => r.domain, required: true },
  { name: "fetch_time", element: { type: "INT64", converted_type: "TIMESTAMP_MILLIS" }, value: (r) => new Date(r.fetchTime), required: true },
  { name: "fetch_status", element: { type: "INT32" }, value: (r) => r.status },
  { name: "content_mime_type", element: STRING, value: (r) => r.mime },
  { name: "content_charset", element: STRING, value: (r) => r.charset },
  { name: "content_languages", element: STRING, value: (r) => r.language },
  { name: "content_digest", element: STRING, value: (r) => r.digest },
  { name: "content_truncated", element: { type: "BOOLEAN" }, value: (r) => r.truncated, required: true },
  { name: "fetch_error", element: STRING, value: (r) => r.error },
  { name: "crawl_depth", element: { type: "INT32" }, value: (r) => r.depth, required: true },
  { name: "crawl_node", element: STRING, value: (r) => r.node, required: true },
  { name: "warc_filename", element: STRING, value: (r) => r.file, required: true },
  { name: "warc_record_offset", element: { type: "INT64" }, value: (r) => BigInt(r.offset), required: true },
  { name: "warc_record_length", element: { type: "INT64" }, value: (r) => BigInt(r.length), required: true },
];

export const CAPTURE_COLUMNS: readonly string[] = COLUMNS.map((c) => c.name);

const SCHEMA: SchemaElement[] = [
  { name: "root", num_children: COLUMNS.length },
  ...COLUMNS.map((c) => ({ name: c.name, ...c.element, repetition_type: c.required ? ("REQUIRED" as const) : ("OPTIONAL" as const) })),
];

function columnData(rows: readonly CaptureRow[]): ColumnSource[] {
  return COLUMNS.map((c) => ({ name: c.name, data: rows.map(c.value) as ColumnSource["data"], nullable: !c.required, statistics: STATS_COLUMNS.has(c.name) }));
}

/**
 * Min/max statistics only where a reader filters by range (the sort keys, time, status): computing
 * them for every column cost about a third of the encoding time.
 */
const STATS_COLUMNS = new Set(["url_surtkey", "url_host_name", "url_host_registered_domain", "fetch_time", "fetch_status", "content_mime_type", "warc_filename"]);

/** Rows per row group: ~1-2 MB of index each, so a reader skipping by domain reads little. */
const ROW_GROUP_ROWS = 20_000;

/** The sorted index of `rows` as Parquet bytes (the rows are sorted in place). */
export function captureIndexBytes(rows: CaptureRow[]): Uint8Array {
  rows.sort(compareRows);
  return new Uint8Array(
    parquetWriteBuffer({ columnData: columnData(rows), schema: SCHEMA, rowGroupSize: ROW_GROUP_ROWS, createdBy: "shardcrawl" }),
  );
}

/** Sorts `rows` and writes them as a Parquet file (via .tmp + rename). */
export async function writeCaptureIndex(path: string, rows: CaptureRow[]): Promise<void> {
  await writeWholeFile(path, captureIndexBytes(rows));
}

type ParquetRow = Record<string, unknown>;

function rowFromParquet(r: ParquetRow): CaptureRow {
  const str = (k: string): string | null => {
    const v = r[k];
    return typeof v === "string" ? v : null;
  };
  const time = r["fetch_time"];
  return {
    surtKey: String(r["url_surtkey"]),
    url: String(r["url"]),
    host: String(r["url_host_name"]),
    domain: String(r["url_host_registered_domain"]),
    fetchTime: time instanceof Date ? time.toISOString() : String(time),
    status: r["fetch_status"] === null || r["fetch_status"] === undefined ? null : Number(r["fetch_status"]),
    mime: str("content_mime_type"),
    charset: str("content_charset"),
    language: str("content_languages"),
    digest: str("content_digest"),
    truncated: Boolean(r["content_truncated"]),
    error: str("fetch_error"),
    depth: Number(r["crawl_depth"]),
    node: String(r["crawl_node"]),
    file: String(r["warc_filename"]),
    offset: Number(r["warc_record_offset"]),
    length: Number(r["warc_record_length"]),
  };
}

/** Every row of one index file, in file order. */
export async function readCaptureIndex(path: string): Promise<CaptureRow[]> {
  const file = await asyncBufferFromFile(path);
  return (await parquetReadObjects({ file, columns: [...CAPTURE_COLUMNS] })).map(rowFromParquet);
}

/** Reads one sorted index file a block of rows at a time (bounded memory for the merge). */
class IndexCursor {
  #rows: CaptureRow[] = [];
  #at = 0;
  #next = 0;
  private constructor(
    private readonly file: Awaited<ReturnType<typeof asyncBufferFromFile>>,
    private readonly total: number,
    private readonly block: number,
  ) {}

  static async open(path: string, block: number): Promise<IndexCursor> {
    const file = await asyncBufferFromFile(path);
    const meta = await parquetMetadataAsync(file);
    const names = new Set(meta.schema.map((s) => s.name));
    const missing = CAPTURE_COLUMNS.filter((c) => !names.has(c));
    if (missing.length > 0) throw new Error(`${path} is not a shardcrawl capture index (no ${missing.join(", ")})`);
    return new IndexCursor(file, Number(meta.num_rows), block);
  }

  async peek(): Promise<CaptureRow | undefined> {
    if (this.#at < this.#rows.length) return this.#rows[this.#at];
    if (this.#next >= this.total) return undefined;
    const end = Math.min(this.total, this.#next + this.block);
    const rows = await parquetReadObjects({ file: this.file, columns: [...CAPTURE_COLUMNS], rowStart: this.#next, rowEnd: end });
    this.#rows = rows.map(rowFromParquet);
    this.#at = 0;
    this.#next = end;
    return this.#rows[0];
  }

  take(): void {
    this.#at++;
  }
}

export interface MergeReport {
  inputs: number;
  rows: number;
  bytes: number;
}

/**
 * Merges index files (each sorted, as the writer leaves them) into one sorted file: a k-way merge
 * that holds `blockRows` rows per input and one row group of output, so a cluster's index of
 * millions of rows merges in bounded memory. The output is written to `<out>.tmp` and renamed.
 */
export async function mergeCaptureIndexes(inputs: readonly string[], out: string, opts: { blockRows?: number } = {}): Promise<MergeReport> {
  const blockRows = opts.blockRows ?? 10_000;
  const cursors = await Promise.all(inputs.map((p) => IndexCursor.open(p, blockRows)));
  const tmp = `${out}.tmp`;
  const writer = fileWriter(tmp);
  const pw = new ParquetWriter({ writer, schema: SCHEMA, createdBy: "shardcrawl" });
  let rows = 0;
  let group: CaptureRow[] = [];
  // Heads of the inputs; k is small (files of a node or cluster), so a linear scan picks the least.
  const heads: Array<CaptureRow | undefined> = await Promise.all(cursors.map((c) => c.peek()));
  for (;;) {
    let best = -1;
    for (let i = 0; i < heads.length; i++) {
      const h = heads[i];
      if (h !== undefined && (best === -1 || compareRows(h, heads[best]!) < 0)) best = i;
    }
    if (best === -1) break;
    group.push(heads[best]!);
    cursors[best]!.take();
    heads[best] = await cursors[best]!.peek();
    if (group.length >= ROW_GROUP_ROWS) {
      await pw.write({ columnData: columnData(group), rowGroupSize: ROW_GROUP_ROWS });
      rows += group.length;
      group = [];
    }
  }
  if (group.length > 0 || rows === 0) {
    await pw.write({ columnData: columnData(group), rowGroupSize: ROW_GROUP_ROWS });
    rows += group.length;
  }
  await pw.finish();
  const fh = await open(tmp, "r+");
  let bytes: number;
  try {
    await fh.sync();
    bytes = (await fh.stat()).size;
  } finally {
    await fh.close();
  }
  await rename(tmp, out);
  return { inputs: inputs.length, rows, bytes };
}
