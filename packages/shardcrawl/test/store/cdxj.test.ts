import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { getSurt } from "warcio";
import { cdxjLine, cdxjNameFor, cdxTimestamp, mimeOf, surtKey } from "../../src/store/cdxj.js";
import { parseOutputName, utcStamp14 } from "../../src/store/file-names.js";

describe("SURT keys", () => {
  test("the pywb convention on examples", () => {
    expect(surtKey("http://www.Example.com/a/B?b=2&a=1")).toBe("com,example)/a/b?a=1&b=2");
    expect(surtKey("https://www2.example.co.uk:8443/")).toBe("uk,co,example:8443)/");
    expect(surtKey("http://www.pcmag.com/join/0,,,00.asp")).toBe("com,pcmag)/join/0,,,00.asp");
    expect(surtKey("http://example.com")).toBe("com,example)/");
    expect(surtKey("http://127.0.0.1:8080/x")).toBe("1,0,0,127:8080)/x");
    expect(surtKey("dns:example.com")).toBe("dns:example.com");
    expect(surtKey("urn:x y")).toBe("urn:x%20y");
  });

  test("equal to warcio's getSurt for any web URL (property)", () => {
    fc.assert(
      fc.property(fc.webUrl({ withQueryParameters: true }), (raw) => {
        const url = new URL(raw).href;
        expect(surtKey(url)).toBe(getSurt(url));
      }),
      { numRuns: 500, seed: 1 },
    );
  });
});

describe("CDXJ lines", () => {
  test("format: key, 14-digit timestamp, JSON with string numbers and the digest without prefix", () => {
    const line = cdxjLine({
      urlkey: "com,example)/",
      timestamp: cdxTimestamp("2024-05-06T07:08:09.123Z"),
      url: "http://example.com/",
      mime: "text/html",
      status: "200",
      digest: "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
      length: 1234,
      offset: 0,
      filename: "c-20240506070809-1-00001.warc.gz",
    });
    expect(line).toBe(
      'com,example)/ 20240506070809 {"url":"http://example.com/","mime":"text/html","status":"200",' +
        '"digest":"3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ","length":"1234","offset":"0","filename":"c-20240506070809-1-00001.warc.gz"}',
    );
  });

  test("non-ASCII and newlines never reach the line as raw bytes", () => {
    const line = cdxjLine({ urlkey: "k", timestamp: "20240506070809", url: "u", mime: "té\nxt", status: "200", digest: "d", length: 1, offset: 2, filename: "f" });
    expect(line).toMatch(/^[\x20-\x7e]+$/);
    expect((JSON.parse(line.slice(line.indexOf("{"))) as { mime: string }).mime).toBe("té\nxt");
  });

  test("helpers", () => {
    expect(mimeOf("text/html; charset=utf-8")).toBe("text/html");
    expect(mimeOf(" ; x")).toBeUndefined();
    expect(mimeOf(undefined)).toBeUndefined();
    expect(cdxjNameFor("a-20240506070809-1-00001.warc.gz.open")).toBe("a-20240506070809-1-00001.cdxj");
    expect(utcStamp14(new Date("2024-05-06T07:08:09.999Z"))).toBe("20240506070809");
    expect(parseOutputName("my-crawl-20240506070809-4242-00007.warc.gz.open")).toEqual({
      prefix: "my-crawl",
      stamp: "20240506070809",
      pid: 4242,
      seq: 7,
      ext: ".warc.gz",
      open: true,
    });
    expect(parseOutputName("x-20240506070809-1-00001.jsonl")).toMatchObject({ ext: ".jsonl", open: false });
    expect(parseOutputName("random.txt")).toBeUndefined();
  });
});
