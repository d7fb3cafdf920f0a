// WAT records, as Common Crawl writes them: one "metadata" record (application/json) per response
// record, naming it with WARC-Refers-To, whose JSON is the Envelope shape of Internet Archive's
// webarchive-commons that Common Crawl's WAT files use:
//   Envelope.WARC-Header-Metadata            the response record's WARC header fields
//   Envelope.Payload-Metadata.HTTP-Response-Metadata
//     Response-Message, Headers, Headers-Length, Entity-Length, Entity-Digest
//     HTML-Metadata.Head.Title / .Head.Metas  (HTML pages)
//     HTML-Metadata.Links                     [{path: "A@/href", url}] the links the parser kept
// Unlike Common Crawl's, the JSON has no "Container" (WARC file name and offset): the record is
// built in the parse worker before the writer places it; the capture index (Parquet) has them.
// Pure and synchronous, like the WARC record builders.
import type { MetaTag } from "../parse/extract.js";
import { buildRecord } from "./warc-record.js";

export interface WatHtml {
  title?: string;
  metas: MetaTag[];
  /** Absolute, normalized links the parser extracted (nofollow dropped when configured). */
  links: readonly string[];
  canonical?: string;
}

export interface WatInput {
  url: string;
  date: string | Date;
  responseRecordId: string;
  /** The response record's WARC header fields, as written (PageRecords.responseFields). */
  responseFields: ReadonlyArray<readonly [string, string]>;
  /** Bytes of the HTTP status line and headers in the record block. */
  responseHeadLength: number;
  status: number;
  statusText?: string;
  httpVersion: string;
  headers: ReadonlyArray<readonly [string, string]>;
  /** Body bytes as stored (the entity). */
  bodyBytes: number;
  payloadDigest: string;
  /** HTML pages only. */
  html?: WatHtml;
  gzipLevel?: number;
}

/** The Envelope JSON of one response record. */
export function watEnvelope(input: WatInput): Record<string, unknown> {
  const warcHeader: Record<string, string> = {};
  let headerLength = "WARC/1.1\r\n\r\n".length;
  for (const [name, value] of input.responseFields) {
    warcHeader[name] = value;
    headerLength += Buffer.byteLength(`${name}: ${value}\r\n`);
  }
  const headers: Record<string, string> = {};
  for (const [name, value] of input.headers) {
    // Repeated headers (Set-Cookie, Link) are joined, as HTTP allows for list-valued fields.
    headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
  }
  const response: Record<string, unknown> = {
    "Response-Message": {
      Status: String(input.status),
      Version: /^\d(\.\d)?$/.test(input.httpVersion) ? `HTTP/${input.httpVersion}` : "HTTP/1.1",
      Reason: input.statusText ?? "",
    },
    "Headers-Length": String(input.responseHeadLength),
    Headers: headers,
    "Entity-Length": String(input.bodyBytes),
    "Entity-Digest": input.payloadDigest,
    "Entity-Trailing-Slop-Length": "0",
  };
  if (input.html) {
    const head: Record<string, unknown> = {};
    if (input.html.title !== undefined) head["Title"] = input.html.title;
    if (input.html.metas.length > 0) head["Metas"] = input.html.metas;
    if (input.html.canonical !== undefined) head["Link"] = [{ path: "LINK@/href", url: input.html.canonical, rel: "canonical" }];
    response["HTML-Metadata"] = {
      Head: head,
      Links: input.html.links.map((url) => ({ path: "A@/href", url })),
    };
  }
  return {
    Envelope: {
      Format: "WARC",
      "WARC-Header-Length": String(headerLength),
      "Block-Digest": warcHeader["WARC-Block-Digest"],
      "Actual-Content-Length": warcHeader["Content-Length"],
      "WARC-Header-Metadata": warcHeader,
      "Payload-Metadata": {
        "Actual-Content-Type": "application/http; msgtype=response",
        "HTTP-Response-Metadata": response,
      },
    },
  };
}

/** One gzip member holding the page's WAT metadata record. */
export function buildWatRecord(input: WatInput): Buffer {
  return buildRecord({
    type: "metadata",
    targetUri: input.url,
    date: input.date,
    refersTo: input.responseRecordId,
    contentType: "application/json",
    block: Buffer.from(JSON.stringify(watEnvelope(input)), "utf8"),
    ...(input.gzipLevel !== undefined ? { gzipLevel: input.gzipLevel } : {}),
  }).data;
}
