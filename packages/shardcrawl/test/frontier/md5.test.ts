// The seen filter's positions come from md5.ts: its digests must be node:crypto's, byte for byte,
// for any string (UTF-8, lone surrogates, every padding boundary) and any bytes.
import { hash } from "node:crypto";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { md5Bytes, md5Utf8 } from "../../src/frontier/md5.js";

const hex = (b: Uint8Array) => Buffer.from(b).toString("hex");

describe("md5", () => {
  it("equals node:crypto on strings", () => {
    const out = new Uint8Array(16);
    for (const s of ["", "a", "abc", "é€😀", "\ud800", "x\udc00y", ...[55, 56, 57, 63, 64, 65, 119, 120, 1000, 70_000].map((n) => "u".repeat(n))]) {
      expect(hex(md5Utf8(s, out)), JSON.stringify(s.slice(0, 20))).toBe(hash("md5", s, "hex"));
    }
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(fc.constantFrom("a", "/", "?", "é", "😀", "\ud800", "\u0000"), fc.string({ unit: "binary", minLength: 1, maxLength: 1 })), maxLength: 150 }), (s) => {
        expect(hex(md5Utf8(s, out))).toBe(hash("md5", s, "hex"));
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 5000) },
    );
  });

  it("equals node:crypto on bytes, also digesting in place", () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 200 }), (bytes) => {
        const expected = hash("md5", bytes, "hex");
        expect(hex(md5Bytes(bytes, new Uint8Array(16)))).toBe(expected);
        if (bytes.length === 16) expect(hex(md5Bytes(bytes, bytes))).toBe(expected);
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 5000) },
    );
    const d = new Uint8Array(16);
    md5Utf8("seed\u0000https://example.com/", d);
    const again = hash("md5", Buffer.from(d), "hex");
    expect(hex(md5Bytes(d, d))).toBe(again);
  });
});
