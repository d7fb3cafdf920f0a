// The parse stage's content decoding: a page is decoded whole or refused (decode-bomb past the
// cap), never parsed from a prefix the server did not mean as the page.

import { decodeContent, type Coding } from "../shared/content-decoding.js";

export { parseContentEncoding } from "../shared/content-decoding.js";

export const DEFAULT_MAX_DECODED_BYTES = 10 * 1024 * 1024;

export type DecodeBodyResult =
  | { ok: true; body: Buffer; encodings: Coding[] }
  | { ok: false; error: "decode-bomb"; detail: string }
  | { ok: false; error: "decode-error"; detail: string };

/**
 * Remove the content codings named in `contentEncoding` (header values as received) from `body`,
 * refusing output past `maxOutputBytes`. Never throws.
 */
export function decodeBody(
  body: Buffer,
  contentEncoding: readonly string[],
  maxOutputBytes: number = DEFAULT_MAX_DECODED_BYTES,
): DecodeBodyResult {
  const decoded = decodeContent(body, contentEncoding, { maxBytes: maxOutputBytes, overCap: "error" });
  return decoded.ok ? { ok: true, body: decoded.body, encodings: decoded.encodings } : decoded;
}
