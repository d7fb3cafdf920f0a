// Which character encoding a page's bytes are in, and decoding them. Order (HTML spec, "determine the
// character encoding"): byte order mark, then the Content-Type charset, then a prescan of the first
// 1024 bytes for <meta charset> / <meta http-equiv=content-type> (encoding-sniffer implements the
// spec's prescan and label table), else UTF-8 when the bytes are valid UTF-8, else windows-1252.
// Decoding never fails: TextDecoder without `fatal` replaces bad sequences with U+FFFD, so a wrong
// declaration garbles text instead of crashing anything.

import { isUtf8 } from "node:buffer";
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

/** Decide the encoding of an HTML document's bytes. Never throws. */
export function detectCharset(
  bytes: Uint8Array,
  contentType: string | undefined,
  prescanBytes: number = DEFAULT_PRESCAN_BYTES,
): CharsetDecision {
  try {
    const label = charsetParam(contentType);
    const sniffer = new Sniffer(label === undefined ? { maxBytes: prescanBytes } : { maxBytes: prescanBytes, transportLayerEncodingLabel: label });
    sniffer.write(bytes.length > prescanBytes ? bytes.subarray(0, prescanBytes) : bytes);
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

/** Decode bytes in the given encoding (a BOM for it is dropped). Unknown encodings decode as windows-1252. */
export function decodeText(bytes: Uint8Array, charset: string): string {
  const decoder = decoderFor(charset) ?? decoderFor("windows-1252")!;
  return decoder.decode(bytes);
}
