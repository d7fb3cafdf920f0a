import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { buildUrlFilters, filterUrl } from "../../src/admit/trap-filters.js";

const check = (spec: string, url: string) => filterUrl(buildUrlFilters([spec]), url);

/** The rules as they read: path = from the first '/' after "://" up to '?' or '#'. */
function reference(url: string, depth: number, repeats: number, params: number, length: number): string | undefined {
  const scheme = url.indexOf("://");
  const start = url.indexOf("/", scheme < 0 ? 0 : scheme + 3);
  let path = "";
  if (start >= 0) {
    const rest = url.slice(start);
    path = rest.split(/[?#]/)[0]!;
  }
  const segments = path.split("/").filter((s) => s.length > 0);
  if (segments.length > depth) return "path-depth";
  const counts = new Map<string, number>();
  for (const s of segments) {
    counts.set(s, (counts.get(s) ?? 0) + 1);
    if (counts.get(s)! > repeats) return "repeated-segment";
  }
  const q = url.indexOf("?");
  if (q >= 0) {
    const query = url.slice(q + 1).split("#")[0]!;
    if (query !== "" && query.split("&").length > params) return "query-params";
  }
  if (url.length > length) return "url-length";
  return undefined;
}

describe("trap filters", () => {
  it("max-path-depth counts non-empty segments of the path only", () => {
    expect(check("max-path-depth=2", "http://h.example/a//b/")).toBeUndefined();
    expect(check("max-path-depth=2", "http://h.example/a/b/c")).toBe("path-depth");
    expect(check("max-path-depth=2", "http://h.example/a/b?x=/c/d/e#/f/g/h")).toBeUndefined();
    expect(check("max-path-depth=1", "http://h.example")).toBeUndefined();
  });

  it("max-repeated-segment refuses a segment seen more than n times, whatever the path length", () => {
    expect(check("max-repeated-segment=2", "http://h.example/x/y/x/y")).toBeUndefined();
    expect(check("max-repeated-segment=2", "http://h.example/x/y/x/y/x")).toBe("repeated-segment");
    expect(check("max-repeated-segment=2", "http://h.example/x//x///x")).toBe("repeated-segment");
    expect(check("max-repeated-segment=2", "http://h.example/a/b/c/d/e")).toBeUndefined();
    expect(check("max-repeated-segment=1", "http://h.example/x?q=/x/x")).toBeUndefined();
  });

  it("max-query-params counts parameters between ? and #", () => {
    expect(check("max-query-params=2", "http://h.example/?a=1&b=2")).toBeUndefined();
    expect(check("max-query-params=2", "http://h.example/?a=1&b=2&c")).toBe("query-params");
    expect(check("max-query-params=2", "http://h.example/?a&b#&&&&")).toBeUndefined();
    expect(check("max-query-params=1", "http://h.example/?")).toBeUndefined();
    expect(check("max-query-params=1", "http://h.example/?&")).toBe("query-params");
  });

  // The filters share one scan of the path (pathShape): checked against the rules as they read.
  it("refuse exactly what the rules say, first rule first", () => {
    const piece = fc.constantFrom("/", "//", "a", "b", "x/", "a/", "?", "&", "=", "#", "#/a/a/a", "?p=/a/a/a/a", "q=1&", "://", "é");
    fc.assert(
      fc.property(fc.constantFrom("https://h.test", "http://h.test", "h.test", ""), fc.array(piece, { maxLength: 24 }), fc.integer({ min: 1, max: 5 }), fc.integer({ min: 1, max: 4 }), (prefix, parts, depth, repeats) => {
        const url = prefix + parts.join("");
        const filters = buildUrlFilters([`max-path-depth=${depth}`, `max-repeated-segment=${repeats}`, "max-query-params=3", "max-url-length=40"]);
        expect(filterUrl(filters, url)).toBe(reference(url, depth, repeats, 3, 40));
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 5000) },
    );
  });
});
