import { Readable, Writable } from "node:stream";
import { pipeline } from "node:stream/promises";
import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { decodeBody, parseContentEncoding } from "../../src/parse/decode-body.js";

const HTML = Buffer.from(
  Array.from({ length: 4000 }, (_, i) => `<p id="p${i}">paragraph ${i} ${(i * 7919) % 104729} text</p>\n`).join(""),
);

/** Brotli at a modest quality: the default (11) takes seconds on test-sized inputs. */
function brotli(data: Buffer): Buffer {
  return zlib.brotliCompressSync(data, { params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 5 } });
}

/** Buffer.equals: vitest's deep equality walks big buffers byte by byte and takes seconds. */
function expectHtml(body: Buffer): void {
  expect(body.length).toBe(HTML.length);
  expect(body.equals(HTML)).toBe(true);
}

function ok(result: ReturnType<typeof decodeBody>): Buffer {
  if (!result.ok) throw new Error(`expected success, got ${result.error}: ${result.detail}`);
  return result.body;
}

/** Compress `totalBytes` of zeros by streaming 1 MiB chunks, so memory stays low. */
async function zerosBomb(kind: "gzip" | "br", totalBytes: number): Promise<Buffer> {
  const chunk = Buffer.alloc(1 << 20);
  let left = totalBytes;
  const source = new Readable({
    read() {
      if (left <= 0) {
        this.push(null);
        return;
      }
      const n = Math.min(left, chunk.length);
      left -= n;
      this.push(n === chunk.length ? chunk : chunk.subarray(0, n));
    },
  });
  const parts: Buffer[] = [];
  const sink = new Writable({
    write(part: Buffer, _encoding, callback) {
      parts.push(part);
      callback();
    },
  });
  const compressor =
    kind === "gzip"
      ? zlib.createGzip({ level: 1 })
      : zlib.createBrotliCompress({ params: { [zlib.constants.BROTLI_PARAM_QUALITY]: 1 } });
  await pipeline(source, compressor, sink);
  return Buffer.concat(parts);
}

describe("decodeBody", () => {
  it("removes gzip, x-gzip, deflate (zlib and raw), br and identity", () => {
    expectHtml(ok(decodeBody(zlib.gzipSync(HTML), ["gzip"])));
    expectHtml(ok(decodeBody(zlib.gzipSync(HTML), ["X-GZIP"])));
    expectHtml(ok(decodeBody(zlib.deflateSync(HTML), ["deflate"])));
    expectHtml(ok(decodeBody(zlib.deflateRawSync(HTML), ["deflate"])));
    expectHtml(ok(decodeBody(brotli(HTML), ["br"])));
    expectHtml(ok(decodeBody(HTML, ["identity"])));
    expectHtml(ok(decodeBody(HTML, [])));
  });

  it("undoes stacked encodings last-applied first, in one header or several", () => {
    const gzThenBr = brotli(zlib.gzipSync(HTML));
    expectHtml(ok(decodeBody(gzThenBr, ["gzip, br"])));
    expectHtml(ok(decodeBody(gzThenBr, ["gzip", "br"])));
    const result = decodeBody(gzThenBr, [" GZIP ,identity,  br "]);
    expect(result.ok && result.encodings).toEqual(["gzip", "br"]);
  });

  it("reports unknown encodings and corrupt data as decode-error", () => {
    expect(decodeBody(HTML, ["compress"])).toMatchObject({ ok: false, error: "decode-error", detail: expect.stringContaining("compress") });
    expect(decodeBody(HTML, ["zstd"])).toMatchObject({ ok: false, error: "decode-error" });
    expect(decodeBody(HTML, ["gzip"])).toMatchObject({ ok: false, error: "decode-error", detail: expect.stringContaining("gzip") });
    expect(decodeBody(Buffer.from("definitely not brotli"), ["br"])).toMatchObject({ ok: false, error: "decode-error" });
    expect(parseContentEncoding(["gzip, bogus"])).toEqual({ unknown: "bogus" });
  });

  it("passes empty bodies through", () => {
    expect(ok(decodeBody(Buffer.alloc(0), ["gzip"])).length).toBe(0);
  });

  it("yields the decodable prefix of a truncated gzip, deflate or brotli body", () => {
    for (const [coding, compressed] of [
      ["gzip", zlib.gzipSync(HTML)],
      ["deflate", zlib.deflateSync(HTML)],
      ["deflate", zlib.deflateRawSync(HTML)],
      ["br", brotli(HTML)],
    ] as const) {
      const cut = compressed.subarray(0, Math.floor(compressed.length * 0.6));
      const body = ok(decodeBody(cut, [coding]));
      expect(body.length, coding).toBeGreaterThan(HTML.length * 0.3);
      expect(body.length, coding).toBeLessThan(HTML.length);
      expect(HTML.subarray(0, body.length).equals(body), coding).toBe(true);
    }
  });

  it("stops gzip and brotli bombs (1 GB of zeros) at the output cap", async () => {
    const cap = 8 * 1024 * 1024;
    for (const kind of ["gzip", "br"] as const) {
      const bomb = await zerosBomb(kind, 1024 * 1024 * 1024);
      expect(bomb.length, kind).toBeLessThan(8 * 1024 * 1024);
      const before = process.memoryUsage().arrayBuffers;
      const result = decodeBody(bomb, [kind], cap);
      expect(result, kind).toMatchObject({ ok: false, error: "decode-bomb" });
      // Nothing near 1 GB was ever held: what remains allocated is in the order of the cap.
      expect(process.memoryUsage().arrayBuffers - before, kind).toBeLessThan(cap * 4);
      // The same bomb inside a stack of codings is still stopped.
      if (kind === "gzip") {
        expect(decodeBody(brotli(bomb), ["gzip", "br"], cap)).toMatchObject({ ok: false, error: "decode-bomb" });
      }
    }
  });

  it("treats an identity body over the cap like a bomb, and a body at the cap as fine", () => {
    expect(decodeBody(HTML, [], HTML.length - 1)).toMatchObject({ ok: false, error: "decode-bomb" });
    expectHtml(ok(decodeBody(zlib.gzipSync(HTML), ["gzip"], HTML.length)));
    expect(decodeBody(zlib.gzipSync(HTML), ["gzip"], HTML.length - 1)).toMatchObject({ ok: false, error: "decode-bomb" });
  });
});
