// WET records, as Common Crawl writes them: one "conversion" record per HTML page, holding the
// page's extracted plain text (text/plain, UTF-8) and naming the response record it was derived
// from (WARC-Refers-To). Pure and synchronous: built in the parse worker next to the WARC records.
import { buildRecord } from "./warc-record.js";

export interface WetInput {
  /** The page's URL (WARC-Target-URI of its response record). */
  url: string;
  /** Fetch time (WARC-Date of the response record). */
  date: string | Date;
  /** Record ID of the response record the text was extracted from. */
  responseRecordId: string;
  /** The extracted visible text (parse/extract.ts): the same string the change digest is computed from. */
  text: string;
  gzipLevel?: number;
}

/** One gzip member holding the page's conversion record. */
export function buildWetRecord(input: WetInput): Buffer {
  return buildRecord({
    type: "conversion",
    targetUri: input.url,
    date: input.date,
    refersTo: input.responseRecordId,
    contentType: "text/plain",
    block: Buffer.from(input.text, "utf8"),
    ...(input.gzipLevel !== undefined ? { gzipLevel: input.gzipLevel } : {}),
  }).data;
}
