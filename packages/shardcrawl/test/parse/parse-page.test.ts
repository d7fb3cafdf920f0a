import zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { payloadDigest, sha1Base32 } from "../../src/parse/digest.js";
import { type ParseInput, parsePage, sniffHtml, xRobotsDirectives } from "../../src/parse/parse-page.js";

const URL_ = "http://example.com/dir/page.html";
const OPTIONS = { userAgentToken: "shardcrawl" };

function input(body: Buffer | string, headers: Array<[string, string]> = [["Content-Type", "text/html"]], status = 200): ParseInput {
  return { url: URL_, status, headers, body: typeof body === "string" ? Buffer.from(body) : body };
}

const SIMPLE = `<html lang="en"><head><title>Simple</title></head><body><p>Hello there</p><a href="/next">next</a></body></html>`;

describe("parsePage", () => {
  it("digests the body as received and extracts facts from the decoded one", () => {
    const gz = zlib.gzipSync(SIMPLE);
    const r = parsePage(input(gz, [["content-type", "text/html; charset=utf-8"], ["Content-Encoding", "gzip"]]), OPTIONS);
    expect(r.payloadDigest).toBe(payloadDigest(gz));
    expect(r.payloadDigest).not.toBe(payloadDigest(Buffer.from(SIMPLE)));
    expect(r).toMatchObject({
      contentType: "text/html",
      isHtml: true,
      decodedBytes: Buffer.byteLength(SIMPLE),
      title: "Simple",
      lang: "en",
      charset: "utf-8",
      charsetSource: "header",
      links: ["http://example.com/next"],
      droppedLinks: {},
      noindex: false,
      nofollow: false,
      textDigest: sha1Base32("Hello there next"),
      textLength: "Hello there next".length,
    });
    expect(r.error).toBeUndefined();
  });

  it("decodes legacy charsets declared in <meta> (Shift_JIS, windows-1251, EUC-KR)", () => {
    const cases: Array<[string, number[], string]> = [
      ["Shift_JIS", [0x93, 0xfa, 0x96, 0x7b, 0x8c, 0xea], "日本語"],
      ["windows-1251", [0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2], "Привет"],
      ["euc-kr", [0xc7, 0xd1, 0xb1, 0xb9, 0xbe, 0xee], "한국어"],
    ];
    for (const [label, bytes, text] of cases) {
      const body = Buffer.concat([
        Buffer.from(`<html><head><meta charset="${label}"><title>`),
        Buffer.from(bytes),
        Buffer.from(`</title></head><body><a href="/`),
        Buffer.from(bytes),
        Buffer.from(`">x</a></body></html>`),
      ]);
      const r = parsePage(input(body), OPTIONS);
      expect(r.charset, label).toBe(label.toLowerCase());
      expect(r.charsetSource).toBe("meta");
      expect(r.title).toBe(text);
      expect(r.links).toEqual([`http://example.com/${encodeURIComponent(text)}`]);
    }
  });

  it("decodes ISO-8859-1 labelled pages as windows-1252 (0x80 is the euro sign), as browsers do", () => {
    const body = Buffer.concat([Buffer.from("<title>"), Buffer.from([0x80, 0x20, 0x93, 0x71, 0x94]), Buffer.from("</title>")]);
    const r = parsePage(input(body, [["Content-Type", "text/html; charset=ISO-8859-1"]]), OPTIONS);
    expect([r.charset, r.charsetSource, r.title]).toEqual(["windows-1252", "header", "€ “q”"]);
  });

  it("honours a BOM over everything else", () => {
    const body = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('<meta charset="windows-1251"><title>naïve</title>')]);
    const r = parsePage(input(body, [["Content-Type", "text/html; charset=shift_jis"]]), OPTIONS);
    expect([r.charset, r.charsetSource, r.title]).toEqual(["utf-8", "bom", "naïve"]);
  });

  it("honours X-Robots-Tag for us, ignores it for other bots", () => {
    const page = `<a href="/a">a</a>`;
    const noindex = parsePage(input(page, [["Content-Type", "text/html"], ["X-Robots-Tag", "noindex"]]), OPTIONS);
    expect([noindex.noindex, noindex.nofollow, noindex.links.length]).toEqual([true, false, 1]);
    const ours = parsePage(input(page, [["Content-Type", "text/html"], ["x-robots-tag", "ShardCrawl: nofollow"]]), OPTIONS);
    expect([ours.noindex, ours.nofollow, ours.links]).toEqual([false, true, []]);
    expect(ours.droppedLinks).toEqual({ nofollow: 1 });
    const theirs = parsePage(input(page, [["Content-Type", "text/html"], ["X-Robots-Tag", "otherbot: noindex, nofollow"]]), OPTIONS);
    expect([theirs.noindex, theirs.nofollow, theirs.links.length]).toEqual([false, false, 1]);
    expect(xRobotsDirectives(["unavailable_after: 25 Jun 2010 15:00:00 PST", "none"], "x")).toEqual({ noindex: true, nofollow: true });
  });

  it("gives non-HTML pages facts without links, and a digest of the decoded bytes", () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x3c, 0x61]);
    const r = parsePage(input(png, [["Content-Type", "image/png"]]), OPTIONS);
    expect(r).toMatchObject({ isHtml: false, contentType: "image/png", links: [], textLength: 0, charset: "none", textDigest: sha1Base32(png) });
    const json = parsePage(input('{"a":"<a href=/x>"}', [["Content-Type", "application/json; charset=latin1"]]), OPTIONS);
    expect(json).toMatchObject({ isHtml: false, links: [], charset: "windows-1252", charsetSource: "header" });
  });

  it("sniffs HTML only when the type is missing", () => {
    const sniffed = parsePage(input("\n  <!DOCTYPE html><title>x</title><a href=/a>a</a>", []), OPTIONS);
    expect([sniffed.isHtml, sniffed.contentType, sniffed.links]).toEqual([true, "text/html", ["http://example.com/a"]]);
    const plain = parsePage(input("<html><a href=/a>a</a>", [["Content-Type", "text/plain"]]), OPTIONS);
    expect(plain.isHtml).toBe(false);
    const notHtml = parsePage(input("just some text", []), OPTIONS);
    expect([notHtml.isHtml, notHtml.contentType]).toEqual([false, null]);
    expect(sniffHtml(Buffer.from("<HTML>"))).toBe(true);
    expect(sniffHtml(Buffer.from("<htmlx>"))).toBe(false);
    expect(sniffHtml(Buffer.from("<p"))).toBe(false);
  });

  it("records decode errors and bombs instead of throwing", () => {
    const bomb = zlib.gzipSync(Buffer.alloc(4 * 1024 * 1024));
    const r = parsePage(input(bomb, [["Content-Type", "text/html"], ["Content-Encoding", "gzip"]]), { ...OPTIONS, maxDecodedBytes: 1024 * 1024 });
    expect(r).toMatchObject({ error: "decode-bomb", links: [], decodedBytes: 0, textDigest: "", payloadDigest: payloadDigest(bomb) });
    const bad = parsePage(input(SIMPLE, [["Content-Type", "text/html"], ["Content-Encoding", "snappy"]]), OPTIONS);
    expect(bad).toMatchObject({ error: "decode-error", links: [] });
    expect(bad.errorDetail).toContain("snappy");
  });

  it("keeps the decodable prefix of a truncated gzip page", () => {
    const big = `<html><title>Cut</title><body>${Array.from({ length: 3000 }, (_, i) => `<a href="/p${i}">${i} ${(i * 7919) % 10007}</a>`).join("\n")}</body></html>`;
    const gz = zlib.gzipSync(big);
    const r = parsePage({ ...input(gz.subarray(0, gz.length >> 1), [["Content-Type", "text/html"], ["Content-Encoding", "gzip"]]), truncated: "length" }, OPTIONS);
    expect(r.error).toBeUndefined();
    expect(r.title).toBe("Cut");
    expect(r.links.length).toBeGreaterThan(500);
    expect(r.links.length).toBeLessThan(3000);
  });

  it("drops links of non-2xx pages unless asked", () => {
    const r = parsePage(input(SIMPLE, [["Content-Type", "text/html"]], 404), OPTIONS);
    expect([r.links, r.droppedLinks, r.title]).toEqual([[], { status: 1 }, "Simple"]);
    expect(parsePage(input(SIMPLE, [["Content-Type", "text/html"]], 404), { ...OPTIONS, linksFromErrorPages: true }).links).toHaveLength(1);
  });

  it("passes options through (maxLinks, honourNofollow, maxTextChars)", () => {
    const html = `<a href="/a">aaaa</a><a href="/b" rel=nofollow>bbbb</a><a href="/c">cccc</a>`;
    const r = parsePage(input(html), { ...OPTIONS, maxLinks: 1, honourNofollow: false, maxTextChars: 6 });
    expect(r.links).toEqual(["http://example.com/a"]);
    expect(r.droppedLinks).toEqual({ cap: 2 });
    expect(r.textLength).toBe(6);
  });

  it("never throws on hostile input", () => {
    const junk = Buffer.alloc(1 << 20);
    for (let i = 0; i < junk.length; i++) junk[i] = (i * 2654435761) >>> 24;
    for (const headers of [[["Content-Type", "text/html"]], [], [["Content-Encoding", "gzip"]], [["Content-Type", "text/html; charset=utf-16le"]]] as Array<Array<[string, string]>>) {
      const r = parsePage(input(junk, headers), OPTIONS);
      expect(r.payloadDigest).toBe(payloadDigest(junk));
    }
    expect(parsePage({ url: "not a url", status: 200, headers: [["Content-Type", "text/html"]], body: Buffer.from("<a href=x>") }, OPTIONS).links).toEqual([]);
    const broken = parsePage({ url: URL_, status: 200, headers: null as unknown as Array<[string, string]>, body: Buffer.from("x") }, OPTIONS);
    expect(broken.error).toBe("other");
  });

  it("stays bounded on hostile shapes that span many decode chunks", () => {
    const M = 3_000_000;
    const shapes: Record<string, string> = {
      longTagName: "<" + "a".repeat(M),
      longAttributeName: "<a " + "b".repeat(M),
      longCloseTag: "</" + "c".repeat(M),
      almostClosedScript: "<script>" + "</scrip".repeat(M / 7),
      titleOfEntities: "<title>" + "&amp;".repeat(M / 5),
      unclosedComment: "<!--" + "-".repeat(M),
      whitespace: "<p>" + " \n".repeat(M / 2),
      astralEntities: "<p>" + "&#x1F600;".repeat(M / 9),
      manyLinks: Array.from({ length: M / 20 }, (_, i) => `<a href="/${i}">`).join(""),
    };
    for (const [name, html] of Object.entries(shapes)) {
      const r = parsePage(input(html), { ...OPTIONS, maxLinks: 1000 });
      expect(r.error, name).toBeUndefined();
      expect(r.links.length, name).toBeLessThanOrEqual(1000);
      expect(r.textLength, name).toBeLessThanOrEqual(100_000);
      expect((r.title ?? "").length, name).toBeLessThanOrEqual(1024);
    }
  });
});
