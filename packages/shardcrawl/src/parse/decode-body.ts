// Content-Encoding removal with a hard cap on the OUTPUT, so a decompression bomb (1 GB of zeros is
// ~1 MB of gzip and far less of brotli) costs at most `maxOutputBytes` of memory and the CPU to make
// them. zlib's synchronous API does both jobs: `maxOutputLength` stops inflating past the cap, and
// a flushing `finishFlush` returns what a truncated stream (we cut downloads at a size cap) decodes to
// instead of failing with "unexpected end of file".

import zlib from "node:zlib";

export const DEFAULT_MAX_DECODED_BYTES = 10 * 1024 * 1024;

export type DecodeBodyResult =
  | { ok: true; body: Buffer; encodings: string[] }
  | { ok: false; error: "decode-bomb"; detail: string }
  | { ok: false; error: "decode-error"; detail: string };

/** Codings we remove, by token. `identity` (and an empty token) are no-ops. */
type Coding = "gzip" | "deflate" | "br";

function codingOf(token: string): Coding | "identity" | null {
  switch (token) {
    case "gzip":
    case "x-gzip":
      return "gzip";
    case "deflate":
      return "deflate";
    case "br":
      return "br";
    case "identity":
    case "":
      return "identity";
    default:
      return null;
  }
}

/**
 * Parse Content-Encoding header values (possibly several headers, possibly "gzip, br") into the list
 * of codings in the order they were applied, or the first unknown token.
 */
export function parseContentEncoding(values: readonly string[]): { codings: Coding[] } | { unknown: string } {
  const codings: Coding[] = [];
  for (const value of values) {
    for (const raw of value.split(",")) {
      const token = raw.trim().toLowerCase();
      const coding = codingOf(token);
      if (coding === null) return { unknown: token.slice(0, 64) };
      if (coding !== "identity") codings.push(coding);
    }
  }
  return { codings };
}

/**
 * Remove the content codings named in `contentEncoding` (header values as received) from `body`.
 * Stacked codings are undone last-applied first. Never throws.
 */
export function decodeBody(
  body: Buffer,
  contentEncoding: readonly string[],
  maxOutputBytes: number = DEFAULT_MAX_DECODED_BYTES,
): DecodeBodyResult {
  const parsed = parseContentEncoding(contentEncoding);
  if ("unknown" in parsed) {
    return { ok: false, error: "decode-error", detail: `unsupported content-encoding: ${parsed.unknown}` };
  }
  const codings = parsed.codings;
  let data = body;
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i]!;
    if (data.length === 0) break; // HEAD-like or empty bodies: nothing to undo
    try {
      data = decodeOne(data, coding, maxOutputBytes);
    } catch (err) {
      if (isOutputCapError(err)) {
        return { ok: false, error: "decode-bomb", detail: `${coding} output exceeds ${maxOutputBytes} bytes` };
      }
      const message = err instanceof Error ? err.message : String(err);
      return { ok: false, error: "decode-error", detail: `${coding}: ${message}`.slice(0, 200) };
    }
  }
  if (data.length > maxOutputBytes) {
    // An uncompressed (identity) body larger than the cap: the fetcher's size cap normally stops
    // this earlier; treat it as the same failure so the output bound always holds.
    return { ok: false, error: "decode-bomb", detail: `body exceeds ${maxOutputBytes} bytes` };
  }
  return { ok: true, body: data, encodings: codings };
}

function decodeOne(data: Buffer, coding: Coding, maxOutputLength: number): Buffer {
  // maxOutputLength must be >= 1 for zlib; a zero cap still refuses any output via the check above.
  const cap = Math.max(1, maxOutputLength);
  switch (coding) {
    case "gzip":
      return zlib.gunzipSync(data, { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: cap });
    case "deflate":
      // HTTP "deflate" means zlib-wrapped (RFC 1950), but many servers send raw deflate (RFC 1951).
      // A zlib header is CMF/FLG with compression method 8 and a check value divisible by 31.
      return isZlibHeader(data)
        ? zlib.inflateSync(data, { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: cap })
        : zlib.inflateRawSync(data, { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: cap });
    case "br":
      return zlib.brotliDecompressSync(data, {
        finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH,
        maxOutputLength: cap,
      });
  }
}

function isZlibHeader(data: Buffer): boolean {
  if (data.length < 2) return false;
  const cmf = data[0]!;
  const flg = data[1]!;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

function isOutputCapError(err: unknown): boolean {
  return err instanceof RangeError && (err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE";
}
