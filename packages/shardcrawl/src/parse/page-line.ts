// The page-log line of a parsed page, and its capture-index row: pure functions of the fetched
// page and the parse result, so the parser's write stage only appends.
import type { FetchedPage, PageLogLine } from "../shared/types.js";
import type { SpoolRef } from "../store/body-spool.js";
import type { CaptureFields } from "../store/capture-index.js";
import type { WorkerResult } from "./worker.js";

export type ParsedLine = Omit<PageLogLine, "warc">;

/** The line of a page before (or without) its parse: what the fetch alone tells. */
export function baseLine(page: FetchedPage, spool: SpoolRef | undefined): ParsedLine {
  return {
    url: page.url, final_url: page.redirectTo ?? page.url, status: page.status, error: null, content_type: null,
    bytes: spool?.bytes ?? page.body.byteLength, truncated: Boolean(page.truncated), digest: null, fetched_at: page.fetchedAt,
    timings: page.timings, outlinks: 0, depth: page.depth,
  };
}

/** The line of a parsed page. */
export function parsedLine(page: FetchedPage, spool: SpoolRef | undefined, res: WorkerResult): ParsedLine {
  const facts = res.facts;
  return {
    ...baseLine(page, spool),
    bytes: res.bodyBytes,
    error: res.error ?? null,
    ...(res.errorDetail ? { error_detail: res.errorDetail } : page.truncated === "time" ? { error_detail: "body cut at the fetch time cap (WARC-Truncated: time)" } : {}),
    content_type: res.contentType,
    digest: res.payloadDigest,
    text_digest: facts?.textDigest ?? null,
    outlinks: res.links.length,
    ...(page.redirectTo ? { redirect_to: page.redirectTo } : {}),
    ...(facts?.title ? { title: facts.title } : {}),
    ...(facts?.canonical ? { canonical: facts.canonical } : {}),
    ...(facts?.lang ? { lang: facts.lang } : {}),
    ...(facts ? { charset: facts.charset, noindex: facts.noindex } : {}),
  };
}

/** The line of a page whose parse failed inside the crawler (a bug or a poisoned page). */
export function internalFailureLine(line: ParsedLine, err: unknown): ParsedLine {
  return { ...line, error: "other", error_detail: `internal parse failure: ${(err as Error).message}`, outlinks: 0 };
}

/** The capture index row of a page, from its page-log line. */
export function captureFields(line: ParsedLine, node: string): CaptureFields {
  return {
    url: line.url, fetchTime: line.fetched_at, status: line.status, mime: line.content_type, charset: line.charset && line.charset !== "none" ? line.charset : null, language: line.lang ?? null,
    digest: line.digest, truncated: line.truncated, error: line.error, depth: line.depth, node,
  };
}
