// Digests. The payload digest is the WARC one ("sha1:" + RFC 4648 base32 of the SHA-1 of the body
// as received, content-encoding included), as warcio and pywb write WARC-Payload-Digest. The text
// digest uses the same form over the UTF-8 bytes of the extracted visible text, so a re-crawl can
// tell "content changed" apart from "markup, ads or tracking ids changed".

import { createHash } from "node:crypto";

const BASE32_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/**
 * RFC 4648 base32, upper-case, with '=' padding when the input is not a multiple of 5 bytes (a SHA-1
 * is 20 bytes, so WARC digests never carry padding). Hand-written: Node has no base32 codec and this
 * is a dozen lines.
 */
export function base32Encode(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      out += BASE32_ALPHABET[(buffer >>> bits) & 31];
    }
  }
  if (bits > 0) out += BASE32_ALPHABET[(buffer << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += "=";
  return out;
}

/** "sha1:<BASE32>" of the bytes (or of the UTF-8 encoding of a string). */
export function sha1Base32(data: Uint8Array | string): string {
  const hash = createHash("sha1");
  if (typeof data === "string") hash.update(data, "utf8");
  else hash.update(data);
  return "sha1:" + base32Encode(hash.digest());
}

/** WARC-Payload-Digest of a response body exactly as received on the wire. */
export function payloadDigest(body: Uint8Array): string {
  return sha1Base32(body);
}

/** Digest of extracted visible text (whitespace already collapsed by the extractor). */
export function textDigest(text: string): string {
  return sha1Base32(text);
}
