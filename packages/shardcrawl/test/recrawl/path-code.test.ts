// The schedule's path code: every path comes back as it went in, typical paths shrink, and damaged
// bytes are an error, never a wrong path.
import { describe, expect, it } from "vitest";
import { decodePath, encodePath } from "../../src/schedule/recrawl/path-code.js";

const PATHS = [
  "/", "/item/12", "/products/item-500-blue-cotton.html", "/wiki/Main_Page?action=edit&oldid=123456",
  "/2024/05/13/some-news-article-title-here/", "/p/B07XJ8C8F5?ref=sr_1_3", "/%C3%A9t%C3%A9/caf\u00e9~\u00fc", "/a b\t\u0000\u00ff",
];

describe("path code", () => {
  it("round-trips paths, and typical paths take about 60% of their bytes", () => {
    for (const p of PATHS) expect(decodePath(encodePath(p))).toBe(p);
    for (let i = 0; i < 2000; i++) {
      const p = "/" + Array.from({ length: i % 40 }, (_, j) => String.fromCharCode(32 + ((i * 31 + j * 17) % 95))).join("");
      expect(decodePath(encodePath(p))).toBe(p);
    }
    const typical = ["/products/item-500-blue-cotton.html", "/2024/05/13/some-news-article-title-here/", "/category/shoes?page=3"];
    const ratio = typical.reduce((a, p) => a + encodePath(p).length, 0) / typical.reduce((a, p) => a + p.length, 0);
    expect(ratio).toBeLessThan(0.7);
    console.log(`path code: ${typical.map((p) => `${p.length} -> ${encodePath(p).length}`).join(", ")}`);
  });

  it("rejects bytes that are not a whole path", () => {
    const e = encodePath("/products/item-500-blue-cotton.html");
    expect(() => decodePath(Buffer.concat([e, Buffer.from([0xff])]))).toThrow(/path-code/);
  });
});
