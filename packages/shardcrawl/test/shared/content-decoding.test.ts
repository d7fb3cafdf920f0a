import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { decodeContent, type DecodeContentResult, type OverCapPolicy } from "../../src/shared/content-decoding.js";

const HTML = Buffer.from(
  Array.from({ length: 4000 }, (_, i) => `<p id="p${i}">paragraph ${i} ${(i * 7919) % 104729} text</p>\n`).join(""),
);
const BIG = 1 << 30;

/** Brotli at a modest quality: the default (11) takes seconds on test-sized inputs. */
function brotli(data: Buffer): Buffer {
  return zlib.brotliCompressSync(data, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } });
}

const ENCODED: ReadonlyArray<readonly [string, string, Buffer]> = [
  ["gzip", "gzip", zlib.gzipSync(HTML)],
  ["zlib deflate", "deflate", zlib.deflateSync(HTML)],
  ["raw deflate", "deflate", zlib.deflateRawSync(HTML)],
  ["brotli", "br", brotli(HTML)],
];

function decode(body: Buffer, coding: string, maxBytes: number, overCap: OverCapPolicy): DecodeContentResult {
  return decodeContent(body, [coding], { maxBytes, overCap });
}

function ok(result: DecodeContentResult): { body: Buffer; cut: boolean } {
  if (!result.ok) throw new Error(`expected success, got ${result.error}: ${result.detail}`);
  return result;
}

/** A prefix of HTML (Buffer.equals: vitest's deep equality walks big buffers byte by byte). */
function isHtmlPrefix(body: Buffer): boolean {
  return HTML.subarray(0, body.length).equals(body);
}

/** `totalBytes` of zeros compressed by streaming 1 MiB chunks, so memory stays low. */
async function zerosBomb(kind: "gzip" | "br", totalBytes: number): Promise<Buffer> {
  const chunk = Buffer.alloc(1 << 20);
  let left = totalBytes;
  const source = new Readable({
    read() {
      const n = Math.min(left, chunk.length);
      left -= n;
      this.push(n === 0 ? null : chunk.subarray(0, n));
    },
  });
  const parts: Buffer[] = [];
  const sink = new Writable({
    write(part: Buffer, _encoding, callback) {
      parts.push(part);
      callback();
    },
  });
  const compressor = kind === "gzip" ? zlib.createGzip({ level: 1 }) : zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } });
  await pipeline(source, compressor, sink);
  return Buffer.concat(parts);
}

describe("decodeContent", () => {
  for (const overCap of ["error", "truncate"] as const) {
    it(`decodes gzip, zlib and raw deflate, brotli and identity whole under the cap (${overCap})`, () => {
      for (const [name, coding, encoded] of ENCODED) {
        const { body, cut } = ok(decode(encoded, coding, BIG, overCap));
        expect(body.equals(HTML), name).toBe(true);
        expect(cut, name).toBe(false);
      }
      expect(ok(decode(HTML, "identity", BIG, overCap)).body.equals(HTML)).toBe(true);
      expect(ok(decodeContent(HTML, [], { maxBytes: BIG, overCap })).body.equals(HTML)).toBe(true);
    });

    it(`yields the decodable prefix of a body cut in transit (${overCap})`, () => {
      for (const [name, coding, encoded] of ENCODED) {
        const { body, cut } = ok(decode(encoded.subarray(0, Math.floor(encoded.length * 0.6)), coding, BIG, overCap));
        expect(body.length, name).toBeGreaterThan(HTML.length * 0.3);
        expect(body.length, name).toBeLessThan(HTML.length);
        expect(isHtmlPrefix(body), name).toBe(true);
        // The cap was not reached: the caller knows from its own download whether it cut the body.
        expect(cut, name).toBe(false);
      }
    });

    it(`refuses unknown codings and input that decodes to nothing (${overCap})`, () => {
      expect(decodeContent(HTML, ["compress"], { maxBytes: BIG, overCap })).toMatchObject({ ok: false, error: "decode-error", detail: expect.stringContaining("compress") });
      expect(decode(HTML, "gzip", BIG, overCap)).toMatchObject({ ok: false, error: "decode-error", detail: expect.stringContaining("gzip") });
      expect(decode(Buffer.from("definitely not brotli"), "br", BIG, overCap)).toMatchObject({ ok: false, error: "decode-error" });
    });
  }

  it("undoes stacked codings last-applied first", () => {
    const result = ok(decodeContent(brotli(zlib.gzipSync(HTML)), ["gzip", " BR "], { maxBytes: BIG, overCap: "error" }));
    expect(result.body.equals(HTML)).toBe(true);
  });

  it("over the cap: refuses with error, keeps the first bytes with truncate", () => {
    const cap = 50_000;
    for (const [name, coding, encoded] of ENCODED) {
      expect(decode(encoded, coding, cap, "error"), name).toMatchObject({ ok: false, error: "decode-bomb" });
      const { body, cut } = ok(decode(encoded, coding, cap, "truncate"));
      expect(cut, name).toBe(true);
      expect(body.length, name).toBeLessThanOrEqual(cap);
      expect(body.length, name).toBeGreaterThan(cap * 0.9);
      expect(isHtmlPrefix(body), name).toBe(true);
    }
    expect(decode(HTML, "identity", cap, "error")).toMatchObject({ ok: false, error: "decode-bomb" });
    const identity = ok(decode(HTML, "identity", cap, "truncate"));
    expect([identity.body.length, identity.cut]).toEqual([cap, true]);
    // Exactly at the cap is under it.
    expect(ok(decode(zlib.gzipSync(HTML), "gzip", HTML.length, "error")).body.equals(HTML)).toBe(true);
  });

  it("keeps the good part of a body damaged midway when truncating", () => {
    const gz = Buffer.from(zlib.gzipSync(HTML));
    const at = Math.floor(gz.length * 0.7);
    gz.fill(0xff, at, at + 64);
    expect(decode(gz, "gzip", BIG, "error")).toMatchObject({ ok: false, error: "decode-error" });
    const { body, cut } = ok(decode(gz, "gzip", BIG, "truncate"));
    expect(cut).toBe(true);
    // zlib notices damage a little after it begins, so the tail may be garbage; the part before holds.
    const good = Math.floor(HTML.length * 0.4);
    expect(body.length).toBeGreaterThan(good);
    expect(body.subarray(0, good).equals(HTML.subarray(0, good))).toBe(true);
  });

  it("stops gzip and brotli bombs (1 GB of zeros) at the cap under either policy", async () => {
    const cap = 512 * 1024;
    for (const kind of ["gzip", "br"] as const) {
      const bomb = await zerosBomb(kind, 1024 * 1024 * 1024);
      const before = process.memoryUsage().arrayBuffers;
      expect(decode(bomb, kind, cap, "error"), kind).toMatchObject({ ok: false, error: "decode-bomb" });
      const { body, cut } = ok(decode(bomb, kind, cap, "truncate"));
      expect(cut, kind).toBe(true);
      expect(body.length, kind).toBeLessThanOrEqual(cap);
      expect(body.length, kind).toBeGreaterThan(0);
      expect(body.every((b) => b === 0), kind).toBe(true);
      // Nothing near 1 GB was ever held: what remains allocated (garbage of ~20 capped decodes
      // included) is in the order of the cap.
      expect(process.memoryUsage().arrayBuffers - before, kind).toBeLessThan(cap * 64);
      // The same bomb inside a stack of codings is still stopped.
      if (kind === "gzip") expect(decodeContent(brotli(bomb), ["gzip", "br"], { maxBytes: cap, overCap: "error" })).toMatchObject({ ok: false, error: "decode-bomb" });
    }
  });
});
