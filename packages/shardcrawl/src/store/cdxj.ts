// CDXJ index lines for response records, the format pywb and warcio's indexer write:
//   <SURT key> <14-digit timestamp> {"url":..,"mime":..,"status":..,"digest":..,"length":..,"offset":..,"filename":..}
// Numbers are written as strings and the digest without its "sha1:" prefix, as pywb/warcio do, so
// replay tools read our index exactly like one they built themselves.
import { open, rename, unlink } from "node:fs/promises";
import { basename } from "node:path";

/** What the index needs to know about one response record, apart from where it lives. */
export interface CdxFields {
  urlkey: string;
  timestamp: string;
  url: string;
  /** Media type from the HTTP Content-Type (parameters removed); absent when the header was. */
  mime?: string;
  status: string;
  /** WARC-Payload-Digest, e.g. "sha1:BASE32". */
  digest: string;
}

export interface CdxjEntry extends CdxFields {
  /** Compressed length of the record's gzip member, and its byte offset in the WARC file. */
  length: number;
  offset: number;
  /** WARC file name (final name, no directory). */
  filename: string;
}

/**
 * SURT sort key, hand-written because it is ten lines (the pywb/warcio convention, not the full IA
 * canonicalizer): lower-case, strip a leading www./wwwN., reverse the host labels, keep a
 * non-default port, then path and the query with its parameters sorted:
 * http://www.Example.com/a?b=1&a=2 -> com,example)/a?a=2&b=1
 */
export function surtKey(url: string): string {
  if (!/^https?:/i.test(url)) return escapeKey(url);
  let parsed: URL;
  try {
    parsed = new URL(url.replace(/^(https?:\/\/)www\d*\./i, "$1").toLowerCase());
  } catch {
    return escapeKey(url.toLowerCase());
  }
  let key = parsed.hostname.split(".").reverse().join(",");
  if (parsed.port) key += `:${parsed.port}`;
  key += `)${parsed.pathname}`;
  if (parsed.search) key += `?${parsed.search.slice(1).split("&").sort().join("&")}`;
  return escapeKey(key);
}

/** The key is the first space-separated column: never let a space or control byte into it. */
function escapeKey(key: string): string {
  // eslint-disable-next-line no-control-regex -- matching control characters is the point
  return key.replace(/[\s\x00-\x1f\x7f]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`);
}

/** "2024-05-06T07:08:09.123Z" -> "20240506070809". */
export function cdxTimestamp(warcDate: string): string {
  return warcDate.replace(/[-:T]/g, "").slice(0, 14);
}

/** Media type of a Content-Type value: "text/html; charset=utf-8" -> "text/html". */
export function mimeOf(contentType: string | undefined): string | undefined {
  if (contentType === undefined) return undefined;
  const mime = contentType.split(";", 1)[0]?.trim();
  return mime ? mime : undefined;
}

/** One CDXJ line, without the newline. Non-ASCII is \u-escaped so lines sort bytewise like `LC_ALL=C sort`. */
export function cdxjLine(e: CdxjEntry): string {
  const json: Record<string, string> = { url: e.url };
  if (e.mime !== undefined) json["mime"] = e.mime;
  json["status"] = e.status;
  json["digest"] = e.digest.startsWith("sha1:") ? e.digest.slice(5) : e.digest;
  json["length"] = String(e.length);
  json["offset"] = String(e.offset);
  json["filename"] = e.filename;
  const text = JSON.stringify(json).replace(
    /[\u007f-\uffff]/g,
    (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`,
  );
  return `${e.urlkey} ${e.timestamp} ${text}`;
}

/** Code-unit order equals byte order here because cdxjLine keeps lines ASCII. */
export function sortCdxjLines(lines: string[]): string[] {
  return lines.sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/** "crawl-20240506070809-123-00001.warc.gz(.open)" -> "crawl-20240506070809-123-00001.cdxj". */
export function cdxjNameFor(warcFileName: string): string {
  return basename(warcFileName).replace(/\.open$/, "").replace(/\.warc(\.gz)?$/, "") + ".cdxj";
}

/**
 * Writes `bytes` to `<path>.tmp`, fsyncs, then renames, so a reader never sees a half-written file
 * (a crash leaves at most a .tmp that repair removes). The CDXJ and Parquet indexes are written so.
 */
export async function writeWholeFile(path: string, bytes: string | Uint8Array): Promise<void> {
  const tmp = `${path}.tmp`;
  const fh = await open(tmp, "w");
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } catch (err) {
    await fh.close().catch(() => undefined);
    await unlink(tmp).catch(() => undefined);
    throw err;
  }
  await fh.close();
  await rename(tmp, path);
}

/** Writes the sorted index next to its WARC file (writeWholeFile). */
export async function writeCdxjFile(path: string, lines: string[]): Promise<void> {
  await writeWholeFile(path, sortCdxjLines(lines).map((l) => `${l}\n`).join(""));
}
