import { describe, expect, it } from "vitest";
import { buildUrlFilters, filterUrl } from "../../src/admit/trap-filters.js";

const check = (spec: string, url: string) => filterUrl(buildUrlFilters([spec]), url);

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
});
