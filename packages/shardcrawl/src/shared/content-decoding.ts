// Content-Encoding removal with a hard cap on the OUTPUT, so a decompression bomb (1 GB of zeros is
// ~1 MB of gzip and far less of brotli) costs at most `maxBytes` of memory and the CPU to make
// them. zlib's synchronous API does both jobs: `maxOutputLength` stops inflating past the cap, and
// a flushing `finishFlush` returns what a truncated stream (downloads are cut at a size cap)
// decodes to instead of failing with "unexpected end of file".
//
// What happens past the cap is the caller's policy:
//  - "error": the body is refused (decode-bomb). The parser: a page is all or nothing.
//  - "truncate": the longest input prefix whose decoding fits is kept, and `cut` says so; damaged
//    input after good output is kept the same way. robots.txt: RFC 9309 asks for the first
//    500 KiB, and a file cut short is still a file.

import zlib from "node:zlib";

/** Codings we remove, by token. `identity` (and an empty token) are no-ops. */
export type Coding = "gzip" | "deflate" | "br";

export type OverCapPolicy = "error" | "truncate";

export interface DecodeContentOptions {
  /** Most bytes any decoding step may produce. */
  maxBytes: number;
  overCap: OverCapPolicy;
}

export type DecodeContentResult =
  /** `cut`: only with "truncate", the output is a prefix of the full decoding. */
  | { ok: true; body: Buffer; encodings: Coding[]; cut: boolean }
  | { ok: false; error: "decode-bomb"; detail: string }
  | { ok: false; error: "decode-error"; detail: string };

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
 * Stacked codings are undone last-applied first, each step under the cap. Never throws.
 */
export function decodeContent(body: Buffer, contentEncoding: readonly string[], options: DecodeContentOptions): DecodeContentResult {
  const { maxBytes, overCap } = options;
  const parsed = parseContentEncoding(contentEncoding);
  if ("unknown" in parsed) {
    return { ok: false, error: "decode-error", detail: `unsupported content-encoding: ${parsed.unknown}` };
  }
  const codings = parsed.codings;
  let data = body;
  let cut = false;
  for (let i = codings.length - 1; i >= 0; i--) {
    const coding = codings[i]!;
    if (data.length === 0) break; // HEAD-like or empty bodies: nothing to undo
    const decode = decoderFor(data, coding, maxBytes);
    try {
      data = decode(data);
    } catch (err) {
      if (overCap === "truncate") {
        const prefix = longestDecodablePrefix(data, decode, maxBytes);
        // Nothing decodable at all is damage, not a long file.
        if (prefix.length > 0 || isOutputCapError(err)) {
          data = prefix;
          cut = true;
          continue;
        }
      } else if (isOutputCapError(err)) {
        return { ok: false, error: "decode-bomb", detail: `${coding} output exceeds ${maxBytes} bytes` };
      }
      const message = err instanceof Error ? err.message : String(err);
      return { ok: false, error: "decode-error", detail: `${coding}: ${message}`.slice(0, 200) };
    }
  }
  if (data.length > maxBytes) {
    // An uncompressed (identity) body larger than the cap: the fetcher's size cap normally stops
    // this earlier; the output bound holds either way.
    if (overCap === "error") return { ok: false, error: "decode-bomb", detail: `body exceeds ${maxBytes} bytes` };
    data = data.subarray(0, maxBytes);
    cut = true;
  }
  return { ok: true, body: data, encodings: codings, cut };
}

type Decoder = (input: Buffer) => Buffer;

/** The decoder for `coding`, chosen from the whole body (a prefix may lack the zlib header). */
function decoderFor(data: Buffer, coding: Coding, maxOutputLength: number): Decoder {
  // maxOutputLength must be >= 1 for zlib; a zero cap still refuses any output via the length check.
  // Output chunks sized from the input (HTML inflates ~4-8x): a 95 KB page then inflates in one or
  // two chunks instead of six 16 KB ones and one concat, ~15% less CPU per gunzip on real pages.
  const chunkSize = Math.min(1 << 20, Math.max(64 * 1024, data.length * 8));
  const zlibOptions = { finishFlush: zlib.constants.Z_SYNC_FLUSH, maxOutputLength: Math.max(1, maxOutputLength), chunkSize };
  switch (coding) {
    case "gzip":
      return (input) => zlib.gunzipSync(input, zlibOptions);
    case "deflate":
      // HTTP "deflate" means zlib-wrapped (RFC 1950), but many servers send raw deflate (RFC 1951).
      return isZlibHeader(data) ? (input) => zlib.inflateSync(input, zlibOptions) : (input) => zlib.inflateRawSync(input, zlibOptions);
    case "br":
      return (input) =>
        zlib.brotliDecompressSync(input, { finishFlush: zlib.constants.BROTLI_OPERATION_FLUSH, maxOutputLength: zlibOptions.maxOutputLength, chunkSize });
  }
}

/**
 * The decoding of the longest prefix of `data` that decodes without error within `maxBytes`.
 * A prefix of a compressed stream decodes (with a flushing finish) to a prefix of its output, so
 * both "fits" and "is intact" hold for every prefix up to some length and for none past it: a
 * binary search finds it in ~log2(input) capped decodes. zlib's sync API cannot hand back the
 * output it had made when it hit the cap, and only files that are damaged or over the cap get here.
 */
function longestDecodablePrefix(data: Buffer, decode: Decoder, maxBytes: number): Buffer {
  let best: Buffer = Buffer.alloc(0);
  let lo = 1; // lengths below lo are known to decode
  let hi = data.length - 1; // the whole input is known not to
  while (lo <= hi) {
    const mid = lo + ((hi - lo) >> 1);
    try {
      best = decode(data.subarray(0, mid));
      lo = mid + 1;
    } catch {
      hi = mid - 1;
    }
  }
  return best.length > maxBytes ? best.subarray(0, maxBytes) : best;
}

/** A zlib header: CMF/FLG with compression method 8 and a check value divisible by 31. */
function isZlibHeader(data: Buffer): boolean {
  if (data.length < 2) return false;
  const cmf = data[0]!;
  const flg = data[1]!;
  return (cmf & 0x0f) === 8 && cmf >> 4 <= 7 && ((cmf << 8) | flg) % 31 === 0;
}

function isOutputCapError(err: unknown): boolean {
  return err instanceof RangeError && (err as NodeJS.ErrnoException).code === "ERR_BUFFER_TOO_LARGE";
}
