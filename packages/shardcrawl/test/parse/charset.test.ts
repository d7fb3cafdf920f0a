import fc from "fast-check";
import { TextDecoder } from "node:util";
import { describe, expect, it } from "vitest";
import { ResultType, Sniffer } from "encoding-sniffer/sniffer";
import { charsetName, charsetParam, decodeText, decodeTextChunks, detectCharset, looksLikeUtf8, sniffPrefix } from "../../src/parse/charset.js";

// Known encodings of short words (checked by decoding them back in the tests below).
const SJIS_NIHONGO = [0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea]; // 日本語 in Shift_JIS
const CP1251_PRIVET = [0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2]; // Привет in windows-1251
const EUCKR_HANGUGEO = [0xc7, 0xd1, 0xb1, 0xb9, 0xbe, 0xee]; // 한국어 in EUC-KR

function bytes(...parts: Array<string | number[]>): Buffer {
  return Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "latin1") : Buffer.from(p))));
}

describe("charsetParam", () => {
  it("reads the charset parameter leniently", () => {
    expect(charsetParam("text/html; charset=UTF-8")).toBe("UTF-8");
    expect(charsetParam('text/html;Charset="shift_jis"')).toBe("shift_jis");
    expect(charsetParam("text/html; foo=bar; charset = 'koi8-r' ")).toBe("koi8-r");
    expect(charsetParam("text/html")).toBeUndefined();
    expect(charsetParam("text/html; charset=")).toBeUndefined();
    expect(charsetParam(undefined)).toBeUndefined();
  });
});

describe("charsetName", () => {
  it("maps labels to WHATWG names", () => {
    expect(charsetName("Latin1")).toBe("windows-1252");
    expect(charsetName("ISO-8859-1")).toBe("windows-1252");
    expect(charsetName("SJIS")).toBe("shift_jis");
    expect(charsetName("utf8")).toBe("utf-8");
    expect(charsetName("cp1251")).toBe("windows-1251");
    expect(charsetName("gb2312")).toBe("gbk");
    expect(charsetName("ks_c_5601-1987")).toBe("euc-kr");
    expect(charsetName("no-such-charset")).toBeUndefined();
    expect(charsetName("iso-2022-kr")).toBeUndefined(); // maps to "replacement": not decodable
  });
});

describe("detectCharset", () => {
  it("prefers a byte order mark over the header and <meta>", () => {
    const body = bytes([0xef, 0xbb, 0xbf], '<meta charset="windows-1251">hi');
    expect(detectCharset(body, "text/html; charset=shift_jis")).toEqual({ charset: "utf-8", source: "bom" });
    expect(detectCharset(bytes([0xff, 0xfe], "<\0h\0"), "text/html; charset=utf-8")).toEqual({ charset: "utf-16le", source: "bom" });
    expect(detectCharset(bytes([0xfe, 0xff], "\0<\0h"), undefined)).toEqual({ charset: "utf-16be", source: "bom" });
  });

  it("then the Content-Type charset, over <meta>", () => {
    const body = bytes('<meta charset="windows-1251">', CP1251_PRIVET);
    expect(detectCharset(body, "text/html; charset=EUC-KR")).toEqual({ charset: "euc-kr", source: "header" });
  });

  it("ignores an unknown header label and falls through to <meta>", () => {
    const body = bytes('<meta charset="windows-1251">');
    expect(detectCharset(body, "text/html; charset=bogus-9")).toEqual({ charset: "windows-1251", source: "meta" });
  });

  it("finds <meta charset> and <meta http-equiv=content-type> in the first 1024 bytes", () => {
    expect(detectCharset(bytes("<!doctype html><html><head><META CHARSET=Shift_JIS>"), undefined)).toEqual({ charset: "shift_jis", source: "meta" });
    expect(
      detectCharset(bytes(`<meta http-equiv="Content-Type" content="text/html; charset=euc-kr">`), "text/html"),
    ).toEqual({ charset: "euc-kr", source: "meta" });
    expect(detectCharset(bytes("<!-- <meta charset=koi8-r> --><meta charset='windows-1251'>"), undefined)).toEqual({
      charset: "windows-1251",
      source: "meta",
    });
    // <meta charset=utf-16> means utf-8 (the bytes were readable as ASCII); x-user-defined means windows-1252.
    expect(detectCharset(bytes("<meta charset=utf-16>"), undefined)).toEqual({ charset: "utf-8", source: "meta" });
  });

  it("does not look past the prescan window", () => {
    const late = bytes("<!--" + "x".repeat(1100) + "-->", "<meta charset=windows-1251>", CP1251_PRIVET);
    expect(detectCharset(late, undefined)).toEqual({ charset: "windows-1252", source: "default" });
    expect(detectCharset(late, undefined, 4096)).toEqual({ charset: "windows-1251", source: "meta" });
  });

  it("defaults to utf-8 for valid UTF-8 (even cut mid-character) and windows-1252 otherwise", () => {
    const utf8 = Buffer.from("<p>naïve café 日本語 😀</p>", "utf8");
    expect(detectCharset(utf8, "text/html")).toEqual({ charset: "utf-8", source: "default" });
    expect(detectCharset(utf8.subarray(0, utf8.length - 7), undefined)).toEqual({ charset: "utf-8", source: "default" });
    expect(detectCharset(bytes("plain ascii"), undefined)).toEqual({ charset: "utf-8", source: "default" });
    expect(detectCharset(bytes("caf", [0xe9], " cr", [0xe8], "me"), undefined)).toEqual({ charset: "windows-1252", source: "default" });
  });

  it("never uses an encoding it cannot decode", () => {
    expect(detectCharset(bytes("<meta charset=iso-2022-kr>abc"), undefined)).toEqual({ charset: "utf-8", source: "default" });
  });
});

describe("sniffPrefix (the prescan stopped once decided)", () => {
  // Pieces that move the sniffer: BOMs and UTF-16 XML prefixes (only meaningful at the start),
  // <meta> tags of every form, XML declarations, comments hiding a meta, tags that are not meta, text.
  const PIECES: Array<string | number[]> = [
    [0xef, 0xbb, 0xbf], [0xff, 0xfe], [0xfe, 0xff], "\0<\0?\0x", "<\0?\0x\0",
    "<meta charset=utf-8>", "<META CHARSET='windows-1251'>", '<meta charset="shift_jis">', "<meta charset=x-user-defined>",
    "<meta charset=utf-16>", "<meta charset=bogus>", '<meta http-equiv="Content-Type" content="text/html; charset=euc-kr">',
    "<meta content='text/html; charset=koi8-r' http-equiv=content-type>", '<meta content="text/html; charset=gbk">',
    "<?xml version='1.0' encoding='iso-8859-2'?>", "<!-- <meta charset=koi8-r> -->", "<div class=meta data-charset=utf-8>",
    "</meta>", "<meta", " charset=", "big5", ">", "text ".repeat(30), "x".repeat(130),
  ];
  const pieceBytes = (p: string | number[]) => (typeof p === "string" ? Buffer.from(p, "latin1") : Buffer.from(p));

  it("decides as the sniffer fed the whole window", () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.constantFrom(...PIECES).map(pieceBytes), fc.uint8Array({ maxLength: 40 }).map((a) => Buffer.from(a))), { maxLength: 30 }),
        fc.constantFrom(undefined, "utf-8", "shift_jis", "bogus-label"),
        fc.constantFrom(0, 1, 16, 100, 1024, 4096),
        (parts, label, prescan) => {
          const body = Buffer.concat(parts);
          const options = label === undefined ? { maxBytes: prescan } : { maxBytes: prescan, transportLayerEncodingLabel: label };
          const whole = new Sniffer(options);
          whole.write(body.subarray(0, prescan));
          // encoding-sniffer also takes a BOM met after a broken one at the start (EF 00 .. EF BB BF)
          // for the document's BOM; a BOM counts only at the start (WHATWG), where sniffPrefix, which
          // stops once decided, agrees. Such bodies are no oracle for the early stop: left out.
          const bomAtStart = [[0xef, 0xbb, 0xbf], [0xff, 0xfe], [0xfe, 0xff]].some((b) => b.every((x, i) => body[i] === x));
          fc.pre(whole.resultType !== ResultType.BOM || bomAtStart);
          const early = new Sniffer(options);
          sniffPrefix(early, body, prescan);
          expect([early.encoding, early.resultType]).toEqual([whole.encoding, whole.resultType]);
        },
      ),
      { numRuns: 3000 },
    );
  });
});

describe("looksLikeUtf8", () => {
  it("tolerates exactly one incomplete trailing character", () => {
    const euro = Buffer.from("€", "utf8"); // e2 82 ac
    expect(looksLikeUtf8(euro.subarray(0, 2))).toBe(true);
    expect(looksLikeUtf8(Buffer.concat([euro.subarray(0, 2), Buffer.from("a")]))).toBe(false);
    expect(looksLikeUtf8(Buffer.from([0x80]))).toBe(false);
    expect(looksLikeUtf8(Buffer.alloc(0))).toBe(true);
  });
});

describe("decodeText", () => {
  it("decodes Shift_JIS, windows-1251 and EUC-KR", () => {
    expect(decodeText(Buffer.from(SJIS_NIHONGO), "shift_jis")).toBe("日本語");
    expect(decodeText(Buffer.from(CP1251_PRIVET), "windows-1251")).toBe("Привет");
    expect(decodeText(Buffer.from(EUCKR_HANGUGEO), "euc-kr")).toBe("한국어");
  });

  it("drops the BOM and replaces bad bytes instead of failing", () => {
    expect(decodeText(bytes([0xef, 0xbb, 0xbf], "hi"), "utf-8")).toBe("hi");
    expect(decodeText(bytes("a", [0xff, 0xfe, 0xfd], "b"), "utf-8")).toBe("a\ufffd\ufffd\ufffdb");
    expect(decodeText(bytes("x"), "not-an-encoding")).toBe("x");
  });

  it("decodes windows-1252 as windows-1252, not latin1 (0x80 is the euro sign)", () => {
    expect(decodeText(Buffer.from([0x80, 0x93, 0x94, 0xe9]), "windows-1252")).toBe("€“”é");
  });

  it("drops the BOM on every call with a cached decoder", () => {
    for (let i = 0; i < 3; i++) expect(decodeText(bytes([0xef, 0xbb, 0xbf], "x"), "utf-8")).toBe("x");
    for (let i = 0; i < 3; i++) expect(decodeText(bytes([0xff, 0xfe], "x\0"), "utf-16le")).toBe("x");
  });
});

describe("decodeTextChunks", () => {
  it("keeps characters split across chunk boundaries whole", () => {
    const text = "a".repeat(1023) + "€日本😀" + "é".repeat(3000) + "z";
    const chunks = decodeTextChunks(Buffer.from(text, "utf8"), "utf-8", 1024);
    expect(chunks.length).toBeGreaterThan(3);
    expect(chunks.join("")).toBe(text);
    const sjis = Buffer.concat([Buffer.alloc(1023, 0x41), Buffer.from(SJIS_NIHONGO)]);
    expect(decodeTextChunks(sjis, "shift_jis", 1024).join("")).toBe("A".repeat(1023) + "日本語");
  });

  it("leaves the decoder clean after a document that ends mid-character", () => {
    expect(decodeText(Buffer.from([0x61, 0xe2, 0x82]), "utf-8")).toBe("a\ufffd");
    expect(decodeText(Buffer.from("b"), "utf-8")).toBe("b");
    expect(decodeTextChunks(Buffer.alloc(0), "utf-8")).toEqual([]);
  });

  it("decodes UTF-8 and windows-1252 exactly as one streaming decode of the whole body, ASCII chunks included", () => {
    // ASCII chunks skip the converter: mixes of ASCII runs, multi-byte characters, stray and cut
    // sequences, BOMs and U+FEFF at chunk starts must come out as the converter alone gives them.
    const reference = (body: Uint8Array, charset: string): string => {
      const decoder = new TextDecoder(charset);
      return decoder.decode(body, { stream: true }) + decoder.decode();
    };
    const piece = fc.oneof(
      fc.constantFrom("a".repeat(1000), "<p>x</p>\n".repeat(120), "€", "日本", "😀", "é", "\ufeff"),
      fc.uint8Array({ maxLength: 6 }),
      fc.constantFrom([0xef, 0xbb, 0xbf], [0xe2, 0x82], [0xf0, 0x9f], [0x80], [0xc3], [0xff]).map((b) => Uint8Array.from(b)),
    );
    fc.assert(
      fc.property(fc.array(piece, { maxLength: 40 }), fc.constantFrom("utf-8", "windows-1252"), fc.integer({ min: 1024, max: 1100 }), (parts, charset, chunk) => {
        const body = Buffer.concat(parts.map((p) => (typeof p === "string" ? Buffer.from(p, "utf8") : p)));
        expect(decodeTextChunks(body, charset, chunk).join("")).toBe(reference(body, charset));
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 2000) },
    );
  });
});
