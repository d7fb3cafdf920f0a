import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { baseParts, plainAbsolute, resolvePlainRelative } from "../../src/parse/relative-url.js";
import { normalizeUrl } from "../../src/url/normalize.js";

const BASES = [
  "http://example.com/",
  "http://example.com",
  "https://Example.COM:443/a/b/c.html?x=1#frag",
  "http://example.com:8080/dir/sub/",
  "http://user:pw@example.com./a%7eb/%2Fc/d?q=%41#f",
  "http://[::1]:81/x/y",
  "https://xn--bcher-kva.example/%C3%A9/page",
  "http://example.com/a/b/..",
  "http://example.com/?only=query",
];

describe("resolvePlainRelative", () => {
  it("agrees with normalizeUrl whenever it answers", () => {
    const piece = fc.constantFrom(
      "a", "Z", "0", "-", ".", "..", "_", "~", "/", "//", "?", "=", "&", "+", ",", ";", ":", "@", "!", "$", "*", "(", ")",
      "%", "%41", "#", "\\", " ", "\t", "'", '"', "`", "{", "|", "^", "[", "é", "javascript:", "mailto:", "http:", "./", "../",
      "index.html", "?x=1", "/p/", "%2F", "%2f", "%3A", "%20", "%7E", "%2E", "%25", "%C3%A9", "%4", "%G0", "#x", "#/a?b", "#%", "#é",
    );
    // Mostly plain pieces, so that many hrefs take the fast path and are checked.
    const plain = fc.constantFrom("a", "Z", "0", "-", "_", "~", "/", "?", "=", "&", "+", ":", "@", ".", "..", "index.html", "p/", "%2F", "%20", "#f");
    let answered = 0;
    const runs = Number(process.env.FC_RUNS ?? 20000);
    fc.assert(
      fc.property(fc.constantFrom(...BASES), fc.array(fc.oneof({ weight: 4, arbitrary: plain }, { weight: 1, arbitrary: piece }), { maxLength: 10 }), (base, pieces) => {
        const href = pieces.join("");
        const fast = resolvePlainRelative(href, baseParts(normalizeUrl("", base)!)!);
        if (fast !== null) {
          answered++;
          expect(fast).toBe(normalizeUrl(href, base));
        }
      }),
      { numRuns: runs },
    );
    expect(answered).toBeGreaterThan(runs / 10);
  });

  it("answers the common shapes and leaves the rest to the parser", () => {
    const base = baseParts(normalizeUrl("", "http://example.com/dir/page.html?q=1")!)!;
    expect(resolvePlainRelative("/a/b.html", base)).toBe("http://example.com/a/b.html");
    expect(resolvePlainRelative("b.html?x=1&y=2", base)).toBe("http://example.com/dir/b.html?x=1&y=2");
    expect(resolvePlainRelative("?page=2", base)).toBe("http://example.com/dir/page.html?page=2");
    // A fragment is dropped; an escape the normalizer keeps stays as written.
    expect(resolvePlainRelative("/a#f", base)).toBe("http://example.com/a");
    expect(resolvePlainRelative("b.html?x=1#top", base)).toBe("http://example.com/dir/b.html?x=1");
    expect(resolvePlainRelative("/a%20b/%2F?q=%26", base)).toBe("http://example.com/a%20b/%2F?q=%26");
    for (const href of ["//other.example/", "../up", "./here", "a/./b", "mailto:x@y", "/a b", "/%7e", "/%7E", "/%2f", "/%2E/x", "/100%", "/a?#f", "#f", "/é", ""]) {
      expect(resolvePlainRelative(href, base), href).toBeNull();
    }
  });
});

describe("plainAbsolute", () => {
  it("agrees with normalizeUrl whenever it answers", () => {
    const scheme = fc.constantFrom("http://", "https://", "HTTP://", "http:/", "ftp://");
    const host = fc.constantFrom("example.com", "a.b-c.example", "Example.com", "example.com.", "a..b", "xn--bcher-kva.example", "xn--zz.example", "abxn--c.example", "a.xn-.x-n--.example", "1.2.3.4", "0x7f.1", "a.1", "h", "user@h", "h:80", "h:8080", "[::1]", "", "é.example");
    const tail = fc.array(
      fc.constantFrom("/", "a", "Z", "0", "-", "_", "~", ".", "..", "?", "=", "&", ":", "@", "%41", "#f", " ", "'", "`", "é", "index.html", "/p/", "%2F", "%2f", "%20", "%7E", "%2E", "%", "#", "#a b", "#é"),
      { maxLength: 8 },
    );
    let answered = 0;
    const runs = Number(process.env.FC_RUNS ?? 20000);
    fc.assert(
      fc.property(scheme, host, tail, (s, h, t) => {
        const href = s + h + (t.length > 0 && t.length % 2 === 0 ? "/" : "") + t.join("");
        const fast = plainAbsolute(href);
        if (fast !== null) {
          answered++;
          expect(fast).toBe(normalizeUrl(href));
        }
      }),
      { numRuns: runs },
    );
    expect(answered).toBeGreaterThan(runs / 100);
  });
});
