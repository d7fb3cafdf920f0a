// Which character encoding a page's bytes are in, and decoding them. Order (HTML spec, "determine the
// character encoding"): byte order mark, then the Content-Type charset, then a prescan of the first
// 1024 bytes for <meta charset> / <meta http-equiv=content-type> (encoding-sniffer implements the
// spec's prescan and label table), else UTF-8 when the bytes are valid UTF-8, else windows-1252.
// Decoding never fails: TextDecoder without `fatal` replaces bad sequences with U+FFFD, so a wrong
// declaration garbles text instead of crashing anything.

import { isAscii, isUtf8 } from "node:buffer";
import { TextDecoder } from "node:util";
import { ResultType, Sniffer } from "encoding-sniffer/sniffer";
import type { PageFacts } from "../shared/types.js";

export type CharsetSource = PageFacts["charsetSource"];

export interface CharsetDecision {
  /** WHATWG encoding name, lower-case ("utf-8", "shift_jis", "windows-1251" ...). */
  charset: string;
  source: CharsetSource;
}

export const DEFAULT_PRESCAN_BYTES = 1024;

/**
 * The `charset` parameter of a Content-Type value, unquoted and trimmed, or undefined. Hand-written
 * (a few lines) because util.MIMEType throws on the malformed values servers send and is
 * experimental in Node 20.
 */
export function charsetParam(contentType: string | undefined): string | undefined {
  if (!contentType) return undefined;
  const params = contentType.split(";");
  for (let i = 1; i < params.length; i++) {
    const param = params[i]!;
    const eq = param.indexOf("=");
    if (eq === -1) continue;
    if (param.slice(0, eq).trim().toLowerCase() !== "charset") continue;
    let value = param.slice(eq + 1).trim();
    if (value.length >= 2 && (value[0] === '"' || value[0] === "'") && value.endsWith(value[0])) {
      value = value.slice(1, -1).trim();
    }
    return value === "" ? undefined : value.slice(0, 64);
  }
  return undefined;
}

// One decoder per encoding; TextDecoder.decode without {stream} keeps no state between calls. The
// set of WHATWG encodings is small and fixed, so the cache is bounded.
const decoders = new Map<string, TextDecoder | null>();

function decoderFor(charset: string): TextDecoder | null {
  let decoder = decoders.get(charset);
  if (decoder === undefined) {
    try {
      decoder = new TextDecoder(charset);
    } catch {
      decoder = null; // "replacement", "x-user-defined" or anything ICU lacks
    }
    if (decoders.size < 256) decoders.set(charset, decoder);
  }
  return decoder;
}

/**
 * WHATWG encoding name (lower-case) for a label such as "Latin1", "SJIS" or "utf8", or undefined when
 * the label is unknown or undecodable.
 */
export function charsetName(label: string): string | undefined {
  const key = label.trim().toLowerCase();
  if (key === "" || key.length > 64) return undefined;
  return decoderFor(key)?.encoding;
}

/** Can we decode this encoding name? */
export function isSupportedCharset(charset: string): boolean {
  return decoderFor(charset) !== null;
}

const SOURCE_OF: Record<ResultType, CharsetSource> = {
  [ResultType.BOM]: "bom",
  [ResultType.PASSED]: "header",
  [ResultType.XML_PREFIX]: "default", // UTF-16 guessed from "<\0?\0x" without a BOM
  [ResultType.META_TAG]: "meta",
  [ResultType.XML_ENCODING]: "meta",
  [ResultType.DEFAULT]: "default",
};

// The sniffer walks its window byte by byte (~0.1 ms per 1 KB page in profiles) and keeps going
// after it has its answer. Its answer can only still change while it is undecided or weaker than a
// <meta> tag: BOM, header (PASSED) and UTF-16 XML prefix results come from the constructor or the
// first few bytes, and a later <meta> or <?xml encoding> never replaces a result of that strength
// or a first <meta> (setResult keeps the earlier of equal ones). So after those first bytes it is
// fed in slices and stopped once decided: the same result for the bytes it skips.
const SNIFF_HEAD_BYTES = 16;
const SNIFF_STEP_BYTES = 128;

/** Feeds the sniffer bytes[0, prescanBytes) until its result can no longer change (exported for its test). */
export function sniffPrefix(sniffer: Sniffer, bytes: Uint8Array, prescanBytes: number): void {
  const end = Math.min(bytes.length, Math.max(0, prescanBytes));
  let at = Math.min(SNIFF_HEAD_BYTES, end);
  sniffer.write(bytes.subarray(0, at));
  while (at < end && sniffer.resultType > ResultType.META_TAG) {
    const next = Math.min(end, at + SNIFF_STEP_BYTES);
    sniffer.write(bytes.subarray(at, next));
    at = next;
  }
}

/** Decide the encoding of an HTML document's bytes. Never throws. */
export function detectCharset(
  bytes: Uint8Array,
  contentType: string | undefined,
  prescanBytes: number = DEFAULT_PRESCAN_BYTES,
): CharsetDecision {
  try {
    const label = charsetParam(contentType);
    const sniffer = new Sniffer(label === undefined ? { maxBytes: prescanBytes } : { maxBytes: prescanBytes, transportLayerEncodingLabel: label });
    sniffPrefix(sniffer, bytes, prescanBytes);
    if (sniffer.resultType !== ResultType.DEFAULT) {
      const charset = sniffer.encoding.toLowerCase();
      if (isSupportedCharset(charset)) return { charset, source: SOURCE_OF[sniffer.resultType] };
    }
  } catch {
    // fall through to the default; the sniffer is a pure state machine, this is belt and braces
  }
  return { charset: looksLikeUtf8(bytes) ? "utf-8" : "windows-1252", source: "default" };
}

/**
 * Valid UTF-8, tolerating one incomplete sequence at the very end (bodies are cut at a size cap, often
 * in the middle of a character). Pure ASCII counts as UTF-8.
 */
export function looksLikeUtf8(bytes: Uint8Array): boolean {
  let end = bytes.length;
  // Walk back over at most 3 continuation bytes to the last lead byte.
  let i = end - 1;
  while (i >= 0 && end - i <= 3 && (bytes[i]! & 0xc0) === 0x80) i--;
  if (i >= 0) {
    const lead = bytes[i]!;
    const need = lead >= 0xf0 ? 4 : lead >= 0xe0 ? 3 : lead >= 0xc0 ? 2 : 1;
    if (need > end - i) end = i; // the last character is incomplete: judge what precedes it
  }
  return isUtf8(end === bytes.length ? bytes : bytes.subarray(0, end));
}

export const DEFAULT_DECODE_CHUNK_BYTES = 32 * 1024;

/**
 * Decode bytes in the given encoding into a list of string chunks (a BOM for the encoding is
 * dropped; unknown encodings decode as windows-1252). Why chunks, and why always in streaming mode:
 * - Node 20's one-shot TextDecoder fast paths are slow or wrong for web pages: UTF-8 drops to a
 *   per-character loop after the first non-ASCII byte (measured ~115 MB/s on rustdoc pages against
 *   ~1.4 GB/s for the streaming ICU path), and windows-1252 is decoded as latin1 (0x80 gives U+0080,
 *   not "€"). Streaming mode always takes the ICU converter, which has neither problem.
 * - A chunk with no character above U+00FF becomes a one-byte string, and the tokenizer runs faster
 *   over those; one stray "—" no longer turns the whole document into a two-byte string.
 */
export function decodeTextChunks(bytes: Uint8Array, charset: string, chunkBytes: number = DEFAULT_DECODE_CHUNK_BYTES): string[] {
  if (charset === "utf-8" || charset === "windows-1252") return decodeAsciiCompatible(bytes, charset, chunkBytes);
  let name = charset;
  let decoder = decoderFor(name);
  if (decoder === null) {
    name = "windows-1252";
    decoder = decoderFor(name)!;
  }
  const chunks: string[] = [];
  const step = Math.max(1024, chunkBytes);
  try {
    for (let i = 0; i < bytes.length; i += step) {
      const part = decoder.decode(bytes.subarray(i, Math.min(bytes.length, i + step)), { stream: true });
      if (part !== "") chunks.push(part);
    }
    const rest = decoder.decode(); // flush: also resets the cached decoder for the next document
    if (rest !== "") chunks.push(rest);
  } catch {
    // Not expected without `fatal`; never reuse a decoder left in an unknown state.
    decoders.delete(name);
  }
  return chunks;
}

// Decoders that keep a leading U+FEFF (the UTF-8 BOM is dropped by hand in decodeAsciiCompatible,
// so a decoder started mid-document never mistakes a U+FEFF there for one).
const bomKeepingDecoders = new Map<string, TextDecoder>();

/**
 * decodeTextChunks for UTF-8 and windows-1252, where every byte below 0x80 is that ASCII character
 * and nothing else: a chunk of only such bytes (isAscii is SIMD) is copied as latin1 (a memcpy into
 * a one-byte string) instead of going through the ICU converter, 2x faster; most chunks of real
 * pages are pure ASCII. UTF-8 chunks are cut before a lead byte, so the streaming decoder holds
 * nothing between chunks except an invalid sequence, which it is flushed of (one U+FFFD, as the
 * whole stream would give) before an ASCII chunk.
 */
function decodeAsciiCompatible(bytes: Uint8Array, charset: "utf-8" | "windows-1252", chunkBytes: number): string[] {
  const utf8 = charset === "utf-8";
  let decoder = bomKeepingDecoders.get(charset);
  if (decoder === undefined) {
    decoder = new TextDecoder(charset, { ignoreBOM: true });
    bomKeepingDecoders.set(charset, decoder);
  }
  const chunks: string[] = [];
  const step = Math.max(1024, chunkBytes);
  const length = bytes.length;
  const view = Buffer.from(bytes.buffer, bytes.byteOffset, length);
  let i = utf8 && length >= 3 && bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf ? 3 : 0;
  let pending = false; // the decoder may hold bytes of an unfinished sequence
  try {
    while (i < length) {
      let end = Math.min(length, i + step);
      if (utf8 && end < length) {
        // Back up over continuation bytes (at most 3) to the lead byte of the character there.
        let cut = end;
        while (cut > end - 3 && cut > i + 1 && (bytes[cut]! & 0xc0) === 0x80) cut--;
        if ((bytes[cut]! & 0xc0) !== 0x80) end = cut;
      }
      const part = view.subarray(i, end);
      let text: string;
      if (isAscii(part)) {
        if (pending) {
          const rest = decoder.decode();
          if (rest !== "") chunks.push(rest);
          pending = false;
        }
        text = view.toString("latin1", i, end);
      } else {
        text = decoder.decode(part, { stream: true });
        pending = true;
      }
      if (text !== "") chunks.push(text);
      i = end;
    }
    if (pending) {
      const rest = decoder.decode(); // flush: also resets the cached decoder for the next document
      if (rest !== "") chunks.push(rest);
    }
  } catch {
    // Not expected without `fatal`; never reuse a decoder left in an unknown state.
    bomKeepingDecoders.delete(charset);
  }
  return chunks;
}

/** Decode bytes in the given encoding as one string (see decodeTextChunks). */
export function decodeText(bytes: Uint8Array, charset: string): string {
  return decodeTextChunks(bytes, charset).join("");
}
