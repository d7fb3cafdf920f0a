import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_MAX_URL_LENGTH,
  hostOf,
  normalizePercentEncoding,
  normalizeUrl,
  normalizeUrlDetailed,
} from "../../src/url/normalize.js";

const PAGE = "http://example.com/dir/page.html?q=1#top";

describe("normalizeUrl: every spelling maps to one canonical form", () => {
  const canonical = "http://example.com/dir/a/~b/C?x=1&y=%2F";
  const spellings: Array<[string, string | undefined]> = [
    ["a/~b/C?x=1&y=%2F", PAGE], // relative
    ["/dir/a/~b/C?x=1&y=%2F", PAGE], // root-relative
    ["//example.com/dir/a/~b/C?x=1&y=%2F", PAGE], // protocol-relative
    ["http://example.com/dir/a/~b/C?x=1&y=%2F", undefined], // absolute
    ["HTTP://EXAMPLE.COM/dir/a/~b/C?x=1&y=%2F", undefined], // upper-case scheme and host
    ["http://example.com:80/dir/a/~b/C?x=1&y=%2F", undefined], // explicit default port
    ["http://example.com/dir/./a/x/../~b/C?x=1&y=%2F", undefined], // ./ and ../
    ["../dir/a/~b/C?x=1&y=%2F", PAGE], // ../ relative
    ["./a/~b/C?x=1&y=%2F#frag", PAGE], // ./ and fragment
    ["http://example.com/dir/a/~b/C?x=1&y=%2F#section-2", undefined], // fragment
    ["http://example.com/dir/a/%7eb/C?x=1&y=%2F", undefined], // %7e
    ["http://example.com/dir/a/%7Eb/C?x=1&y=%2F", undefined], // %7E
    ["http://example.com/dir/a/~b/%43?x=1&y=%2F", undefined], // %43 -> C
    ["http://example.com/dir/a/~b/C?x=%31&y=%2f", undefined], // %31 -> 1 in query, %2f -> %2F kept encoded
    ["  http://example.com/dir/a/~b/C?x=1&y=%2F \t\n", undefined], // surrounding whitespace
    ["\u0000\u001f http://example.com/dir/a/~b/C?x=1&y=%2F\u0001", undefined], // C0 controls
    ["http://exam\nple.com/dir/a/~b/\tC?x=1&y=%2F", undefined], // tab/newline inside are removed
    ["http:\\\\example.com\\dir\\a\\~b\\C?x=1&y=%2F", undefined], // backslashes
    ["http://user:secret@example.com/dir/a/~b/C?x=1&y=%2F", undefined], // credentials dropped
    ["http://example.com./dir/a/~b/C?x=1&y=%2F", undefined], // trailing dot in host
    ["http://example.com/dir/a/%7E%62/%43?x=1&y=%2F", undefined], // several unreserved decoded
  ];
  for (const [input, base] of spellings) {
    it(JSON.stringify(input), () => {
      expect(normalizeUrl(input, base)).toBe(canonical);
    });
  }

  it("keeps https and a non-default port", () => {
    expect(normalizeUrl("HTTPS://Example.com:443/")).toBe("https://example.com/");
    expect(normalizeUrl("https://example.com:8443/a")).toBe("https://example.com:8443/a");
    expect(normalizeUrl("http://example.com:443/a")).toBe("http://example.com:443/a");
  });

  it("turns IDN hosts into punycode", () => {
    expect(normalizeUrl("http://Bücher.example/ä")).toBe("http://xn--bcher-kva.example/%C3%A4");
    expect(normalizeUrl("http://xn--bcher-kva.example/%c3%a4")).toBe("http://xn--bcher-kva.example/%C3%A4");
  });

  it("canonicalizes odd IPv4 spellings", () => {
    for (const odd of ["http://0x7f.0.0.1/", "http://2130706433/", "http://127.1/", "http://0177.0.0.1/", "http://127.0.0.1./"]) {
      expect(normalizeUrl(odd), odd).toBe("http://127.0.0.1/");
    }
    expect(normalizeUrl("http://[0:0:0:0:0:0:0:1]:8080/x")).toBe("http://[::1]:8080/x");
  });

  it("never decodes reserved characters, upper-cases their hex", () => {
    expect(normalizeUrl("http://a.example/p%2fq%3Fr%26s%3d%23?k=%26%3d%2b")).toBe("http://a.example/p%2Fq%3Fr%26s%3D%23?k=%26%3D%2B");
    expect(normalizeUrl("http://a.example/%41%5a%61%7a%30%39%2D%2E%5F%7E")).toBe("http://a.example/AZaz09-._~");
  });

  it("leaves bare percent signs alone and stays idempotent around them", () => {
    expect(normalizeUrl("http://a.example/100%/x%zz")).toBe("http://a.example/100%/x%zz");
    const tricky = normalizeUrl("http://a.example/%%37e%%341")!;
    expect(normalizeUrl(tricky)).toBe(tricky);
  });

  it("keeps the query as part of identity (order, duplicates) but drops an empty one", () => {
    expect(normalizeUrl("http://a.example/?b=2&a=1&a=1")).toBe("http://a.example/?b=2&a=1&a=1");
    expect(normalizeUrl("http://a.example/p?")).toBe("http://a.example/p");
    expect(normalizeUrl("http://a.example/p?#frag")).toBe("http://a.example/p");
    expect(normalizeUrl("p?", "http://a.example/x/y")).toBe("http://a.example/x/p");
    expect(normalizeUrl("http://a.example/p")).toBe("http://a.example/p");
    expect(normalizeUrl("http://a.example")).toBe("http://a.example/");
  });

  it("resolves against a URL object base too", () => {
    expect(normalizeUrl("b?c", new URL("http://a.example/x/y"))).toBe("http://a.example/x/b?c");
  });
});

describe("normalizeUrlDetailed: refusals say why", () => {
  const cases: Array<[string, string | undefined, string]> = [
    ["javascript:alert(1)", PAGE, "scheme"],
    ["mailto:someone@example.com", PAGE, "scheme"],
    ["data:text/html,hi", PAGE, "scheme"],
    ["tel:+123", PAGE, "scheme"],
    ["ftp://example.com/file", PAGE, "scheme"],
    ["http://[::1/", undefined, "invalid"], // unbalanced bracket
    ["http://exa]mple.com/", undefined, "invalid"],
    ["http://exa mple.com/", undefined, "invalid"],
    ["relative/without/base", undefined, "invalid"],
    ["http://", undefined, "invalid"],
    ["http://xn--a/", undefined, "invalid"], // bad punycode
    ["http://256.256.256.256/", undefined, "invalid"],
    ["a", "not a url", "invalid"],
  ];
  for (const [input, base, reason] of cases) {
    it(`${JSON.stringify(input)} -> ${reason}`, () => {
      expect(normalizeUrlDetailed(input, base)).toEqual({ ok: false, reason });
      expect(normalizeUrl(input, base)).toBeNull();
    });
  }

  it("refuses 10,000-character URLs, and honours a configured cap", () => {
    const long = "http://example.com/" + "a".repeat(10_000);
    expect(normalizeUrlDetailed(long)).toEqual({ ok: false, reason: "too-long" });
    const edge = "http://example.com/" + "a".repeat(DEFAULT_MAX_URL_LENGTH - "http://example.com/".length);
    expect(normalizeUrl(edge)).toBe(edge);
    expect(normalizeUrlDetailed(edge + "a")).toEqual({ ok: false, reason: "too-long" });
    expect(normalizeUrlDetailed("http://example.com/abcdef", undefined, { maxLength: 20 })).toEqual({ ok: false, reason: "too-long" });
  });

  it("does not throw on non-string input", () => {
    expect(normalizeUrlDetailed(undefined as unknown as string)).toEqual({ ok: false, reason: "invalid" });
  });
});

describe("normalizePercentEncoding", () => {
  it("decodes unreserved only, upper-cases the rest", () => {
    expect(normalizePercentEncoding("/%7e%7E%41%2f%3a%20")).toBe("/~~A%2F%3A%20");
    expect(normalizePercentEncoding("/plain")).toBe("/plain");
    expect(normalizePercentEncoding("%4")).toBe("%4");
  });
});

// Pieces that stress the normalizer: percent forms, dots, separators, odd characters.
const urlPiece = fc.constantFrom(
  "%", "%2", "%7e", "%7E", "%41", "%2f", "%2F", "%25", "%zz", "%%", "%e2%82%ac", "%2e", "%2E%2e",
  "a", "Z", "0", "~", "-", "_", ".", "..", "/", "//", "\\", "?", "&", "=", "#", " ", "\t", "\n", "\u0000",
  "ß", "日本", "😀", "[", "]", ":", "@", "'", "\"", "<", ">", "`", "{", "|",
);
const pathish = fc.array(urlPiece, { maxLength: 24 }).map((parts) => parts.join(""));
const hostish = fc.constantFrom(
  "example.com", "EXAMPLE.com.", "xn--bcher-kva.example", "bücher.example", "127.1", "0x7f.0.0.1", "[::1]",
  "a-b.c-d.example", "sub.example.co.uk", "localhost", "1.2.3.4", "exa%41mple.com",
);
const absolute = fc
  .tuple(fc.constantFrom("http://", "https://", "HTTP://", "http:\\\\", "//"), hostish, fc.constantFrom("", ":80", ":443", ":8080"), pathish)
  .map(([scheme, host, port, rest]) => `${scheme}${host}${port}/${rest}`);
const anyHref = fc.oneof(absolute, pathish, fc.string(), fc.string({ unit: "binary", maxLength: 40 }), fc.webUrl({ withFragments: true, withQueryParameters: true }));
const base = fc.constantFrom(undefined, PAGE, "https://sub.example.co.uk/a/b/c/", "http://[::1]:8080/x?y");

describe("normalizeUrl properties", () => {
  it("never throws, output parses to itself, is idempotent, and is capped", () => {
    fc.assert(
      fc.property(anyHref, base, (href, b) => {
        const out = normalizeUrl(href, b);
        if (out === null) return;
        expect(new URL(out).href).toBe(out);
        expect(normalizeUrl(out)).toBe(out);
        expect(out.length).toBeLessThanOrEqual(DEFAULT_MAX_URL_LENGTH);
        expect(out).not.toContain("#");
        expect(out.startsWith("http://") || out.startsWith("https://")).toBe(true);
        expect(out).not.toMatch(/%(?:[a-f][0-9A-Fa-f]|[0-9A-Fa-f][a-f])/); // no lower-case hex
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 3000) },
    );
  });

  it("hostOf agrees with the WHATWG parser, on normalized and on raw input", () => {
    fc.assert(
      fc.property(anyHref, base, (href, b) => {
        const out = normalizeUrl(href, b);
        if (out !== null) {
          expect(hostOf(out)).toBe(new URL(out).hostname);
        }
        let expected: string | null = null;
        try {
          expected = new URL(href).hostname || null;
        } catch {
          expected = null;
        }
        expect(hostOf(href)).toBe(expected);
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 3000) },
    );
  });
});

describe("hostOf", () => {
  it("is the hostname without port", () => {
    expect(hostOf("http://example.com:8080/x")).toBe("example.com");
    expect(hostOf("https://www.example.co.uk/")).toBe("www.example.co.uk");
    expect(hostOf("http://[::1]:8080/")).toBe("[::1]");
    expect(hostOf("http://127.1/")).toBe("127.0.0.1");
    expect(hostOf("http://EXAMPLE.com/")).toBe("example.com");
    expect(hostOf("not a url")).toBeNull();
  });
});
