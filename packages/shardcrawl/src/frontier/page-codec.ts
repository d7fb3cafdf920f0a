// A fetched page in the parse queue is a hash {m: JSON metadata, b: body bytes} or, when the body
// waits in the node's spool (store/body-spool.ts), {m, s: spool reference}: the body stays binary
// (no base64 growth), the metadata is everything else in FetchedPage.
import type { FetchedPage } from "../shared/types.js";
import { formatSpoolRef, type SpoolRef } from "../store/body-spool.js";

/** A fetched page whose body was written to the spool: the queue carries only the reference. */
export type SpooledPage = Omit<FetchedPage, "body"> & { spool: SpoolRef };

export interface EncodedPage {
  meta: string;
  /** Body bytes carried by Redis (empty when spooled). */
  body: Buffer;
  /** Spool reference ("" when the body is carried by Redis). */
  spool: string;
  /** Body bytes the page holds in the parse stage (its share of the byte bound). */
  bytes: number;
}

/** Sanity bound on one page body in Redis; the fetch stage truncates far below it. */
export const MAX_QUEUED_BODY_BYTES = 32 * 1024 * 1024;

export function encodePage(page: FetchedPage | SpooledPage): EncodedPage {
  if ("spool" in page) {
    const { spool, ...meta } = page;
    return { meta: JSON.stringify(meta), body: EMPTY, spool: formatSpoolRef(spool), bytes: spool.bytes };
  }
  if (!Buffer.isBuffer(page.body)) throw new TypeError("parse queue: page.body must be a Buffer");
  if (page.body.length > MAX_QUEUED_BODY_BYTES) {
    throw new RangeError(`parse queue: body of ${page.url} is ${page.body.length} bytes, above the ${MAX_QUEUED_BODY_BYTES} byte bound`);
  }
  const { body, ...meta } = page;
  return { meta: JSON.stringify(meta), body, spool: "", bytes: body.length };
}

const EMPTY = Buffer.alloc(0);

/** Rebuilds a page; throws an Error naming the problem when the metadata is not a page. */
export function decodePage(meta: string, body: Buffer): FetchedPage {
  let v: unknown;
  try {
    v = JSON.parse(meta);
  } catch {
    throw new Error(`page metadata is not JSON: ${meta.slice(0, 120)}`);
  }
  const o = v as Partial<FetchedPage> | null;
  if (!o || typeof o !== "object" || typeof o.url !== "string" || typeof o.host !== "string" || typeof o.status !== "number" ||
    !Array.isArray(o.headers) || !Array.isArray(o.requestHeaders)) {
    throw new Error(`page metadata lacks url/host/status/headers: ${meta.slice(0, 120)}`);
  }
  return { ...(o as Omit<FetchedPage, "body">), body };
}
