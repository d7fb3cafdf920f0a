// Digests. The payload digest is the WARC one ("sha1:" + RFC 4648 base32 of the SHA-1 of the body
// as received, content-encoding included), as warcio and pywb write WARC-Payload-Digest. The text
// digest uses the same form over the UTF-8 bytes of the extracted visible text, so a re-crawl can
// tell "content changed" apart from "markup, ads or tracking ids changed".

import { hash } from "node:crypto";
import { base32 } from "../store/digest.js";

// One RFC 4648 base32 codec for the crawler: the WARC writer's (store/digest.ts).
export { base32 as base32Encode } from "../store/digest.js";

/** "sha1:<BASE32>" of the bytes (or of the UTF-8 encoding of a string). */
export function sha1Base32(data: Uint8Array | string): string {
  // One-shot digest (strings as UTF-8): no Hash object per call.
  return "sha1:" + base32(hash("sha1", data, "buffer"));
}

/** WARC-Payload-Digest of a response body exactly as received on the wire. */
export function payloadDigest(body: Uint8Array): string {
  return sha1Base32(body);
}

/** Digest of extracted visible text (whitespace already collapsed by the extractor). */
export function textDigest(text: string): string {
  return sha1Base32(text);
}
