// WARC-style digests: "sha1:" + RFC 4648 base32 of the SHA-1, the form Heritrix, wget, warcio and
// pywb all write and compare (Common Crawl's empty-payload digest is sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ).
import { createHash, hash } from "node:crypto";

const BASE32_ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";

/**
 * RFC 4648 base32, hand-written because Node has no base32 codec and a dependency for twelve
 * lines is not worth it. A SHA-1 is 20 bytes = 160 bits = exactly 32 symbols, so no padding.
 */
export function base32(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = ((buffer << 8) | byte) & 0xffff;
    bits += 8;
    while (bits >= 5) {
      out += BASE32_ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32_ALPHABET[(buffer << (5 - bits)) & 31];
  while (out.length % 8 !== 0) out += "=";
  return out;
}

/** "sha1:BASE32" over the concatenation of `parts` (no copy is made). */
export function sha1Base32(...parts: Uint8Array[]): string {
  // One part (the common case) takes the one-shot digest: no Hash object per call.
  if (parts.length === 1) return `sha1:${base32(hash("sha1", parts[0]!, "buffer"))}`;
  const h = createHash("sha1");
  for (const part of parts) h.update(part);
  return `sha1:${base32(h.digest())}`;
}
