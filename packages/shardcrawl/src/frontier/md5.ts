// MD5 (RFC 1321) of short inputs in JavaScript, for the seen filter's bit positions (bloom.ts).
// node:crypto's one-shot hash costs ~1.7 us per URL on this machine, nearly all of it the call
// (an OpenSSL context and a Buffer per digest); this one ~0.7 us: the UTF-8 bytes go into a scratch
// buffer and the digest into the caller's array, nothing is allocated per call. The bytes must be
// node:crypto's exactly (positions are stored in Redis): test/frontier/md5.test.ts compares them.
// MD5 is used as a fast, stable mixing function here, not for security.

const SHIFTS = new Int32Array([
  7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 7, 12, 17, 22, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20, 5, 9, 14, 20,
  4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 4, 11, 16, 23, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21, 6, 10, 15, 21,
]);
const CONSTANTS = new Int32Array(64);
for (let i = 0; i < 64; i++) CONSTANTS[i] = Math.floor(Math.abs(Math.sin(i + 1)) * 2 ** 32) | 0;

const encoder = new TextEncoder();
/** The message and its padding (grown for long inputs, never shrunk). */
let scratch = new Uint8Array(256);
const words = new Int32Array(16);

/** MD5 of the string's UTF-8 bytes (lone surrogates as U+FFFD, as node:crypto encodes them) into out[0..16). */
export function md5Utf8(s: string, out: Uint8Array): Uint8Array {
  ensure(s.length * 3);
  return digest(encoder.encodeInto(s, scratch).written, out);
}

/** MD5 of bytes into out[0..16) (out may be the input). */
export function md5Bytes(bytes: Uint8Array, out: Uint8Array): Uint8Array {
  ensure(bytes.length);
  scratch.set(bytes);
  return digest(bytes.length, out);
}

/** Room for a message of `length` bytes and its padding. */
function ensure(length: number): void {
  const need = length + 72;
  if (scratch.length >= need) return;
  let size = scratch.length;
  while (size < need) size *= 2;
  scratch = new Uint8Array(size);
}

/** MD5 of scratch[0..length), which is padded in place. */
function digest(length: number, out: Uint8Array): Uint8Array {
  const buf = scratch;
  const total = (((length + 8) >> 6) + 1) << 6;
  buf[length] = 0x80;
  buf.fill(0, length + 1, total - 8);
  const lowBits = length * 8;
  const highBits = Math.floor(length / 0x20000000);
  for (let i = 0; i < 4; i++) {
    buf[total - 8 + i] = (lowBits >>> (8 * i)) & 0xff;
    buf[total - 4 + i] = (highBits >>> (8 * i)) & 0xff;
  }
  let a0 = 0x67452301;
  let b0 = 0xefcdab89 | 0;
  let c0 = 0x98badcfe | 0;
  let d0 = 0x10325476;
  for (let at = 0; at < total; at += 64) {
    for (let i = 0; i < 16; i++) {
      const p = at + i * 4;
      words[i] = buf[p]! | (buf[p + 1]! << 8) | (buf[p + 2]! << 16) | (buf[p + 3]! << 24);
    }
    let a = a0;
    let b = b0;
    let c = c0;
    let d = d0;
    for (let i = 0; i < 64; i++) {
      let f: number;
      let g: number;
      if (i < 16) {
        f = (b & c) | (~b & d);
        g = i;
      } else if (i < 32) {
        f = (d & b) | (~d & c);
        g = (5 * i + 1) & 15;
      } else if (i < 48) {
        f = b ^ c ^ d;
        g = (3 * i + 5) & 15;
      } else {
        f = c ^ (b | ~d);
        g = (7 * i) & 15;
      }
      const t = (a + f + CONSTANTS[i]! + words[g]!) | 0;
      a = d;
      d = c;
      c = b;
      const s = SHIFTS[i]!;
      b = (b + ((t << s) | (t >>> (32 - s)))) | 0;
    }
    a0 = (a0 + a) | 0;
    b0 = (b0 + b) | 0;
    c0 = (c0 + c) | 0;
    d0 = (d0 + d) | 0;
  }
  const state = [a0, b0, c0, d0];
  for (let i = 0; i < 4; i++) {
    const v = state[i]!;
    out[i * 4] = v & 0xff;
    out[i * 4 + 1] = (v >>> 8) & 0xff;
    out[i * 4 + 2] = (v >>> 16) & 0xff;
    out[i * 4 + 3] = (v >>> 24) & 0xff;
  }
  return out;
}
