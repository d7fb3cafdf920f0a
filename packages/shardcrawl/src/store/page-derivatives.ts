// The WET and WAT records of one page, built in the parse worker from what the parse step and the
// WARC record builder already hold (no second parse). A page whose derivative cannot be built
// (a record builder refusing a value) simply has none: it never costs the page or its WARC records.
import type { ParseResult } from "../parse/parse-page.js";
import type { FetchedPage } from "../shared/types.js";
import type { PageRecords } from "./warc-record.js";
import { buildWatRecord } from "./wat-record.js";
import { buildWetRecord } from "./wet-record.js";

export interface DerivativeKinds {
  wet: boolean;
  wat: boolean;
}

export interface PageDerivatives {
  wet?: Uint8Array;
  wat?: Uint8Array;
}

/**
 * WET: HTML pages with a 2xx status and non-empty extracted text (as Common Crawl: text of
 * successful HTML captures). WAT: every response record, with HTML-Metadata for HTML pages.
 */
export function buildPageDerivatives(
  kinds: DerivativeKinds,
  page: FetchedPage,
  parsed: ParseResult,
  records: PageRecords,
  gzipLevel: number,
): PageDerivatives {
  const out: PageDerivatives = {};
  const responseRecordId = records.recordIds.response;
  if (kinds.wet && parsed.isHtml && parsed.text && page.status >= 200 && page.status < 300) {
    try {
      out.wet = buildWetRecord({ url: page.url, date: page.fetchedAt, responseRecordId, text: parsed.text, gzipLevel });
    } catch {
      // Cannot happen for a page whose WARC records were built (same URL and date checks).
    }
  }
  if (kinds.wat) {
    try {
      out.wat = buildWatRecord({
        url: page.url,
        date: page.fetchedAt,
        responseRecordId,
        responseFields: records.responseFields,
        responseHeadLength: records.responseHeadLength,
        status: page.status,
        ...(page.statusText !== undefined ? { statusText: page.statusText } : {}),
        httpVersion: page.httpVersion,
        headers: page.headers,
        bodyBytes: page.body.byteLength,
        payloadDigest: records.payloadDigest,
        ...(parsed.isHtml
          ? {
              html: {
                ...(parsed.title !== undefined ? { title: parsed.title } : {}),
                metas: parsed.metas ?? [],
                links: parsed.links,
                ...(parsed.canonical !== undefined ? { canonical: parsed.canonical } : {}),
              },
            }
          : {}),
        gzipLevel,
      });
    } catch {
      // As above.
    }
  }
  return out;
}
