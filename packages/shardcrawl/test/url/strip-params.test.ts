// Session-id and tracking parameters: removed by name, prefix or (for sid) only when the value
// looks like a session token; an empty query goes; other parameters keep their order.
import { describe, expect, it } from "vitest";
import { extractPage } from "../../src/parse/extract.js";
import { DEFAULT_STRIP_PARAMS, ParamStripper } from "../../src/url/strip-params.js";

const s = new ParamStripper(DEFAULT_STRIP_PARAMS);

describe("ParamStripper", () => {
  it("removes tracking and session parameters and keeps the rest in order", () => {
    expect(s.clean("https://a.test/p?utm_source=x&id=3&UTM_Medium=y&gclid=z")).toBe("https://a.test/p?id=3");
    expect(s.clean("https://a.test/p?fbclid=1&PHPSESSID=abc")).toBe("https://a.test/p");
    expect(s.clean("https://a.test/p?b=2&a=1")).toBe("https://a.test/p?b=2&a=1");
    expect(s.clean("https://a.test/p")).toBe("https://a.test/p");
    expect(s.clean("https://a.test/p?")).toBe("https://a.test/p");
    expect(s.clean("https://a.test/cart;jsessionid=0A1B2C3D?x=1")).toBe("https://a.test/cart?x=1");
    expect(s.clean("https://a.test/cart;JSESSIONID=0A1B2C3D")).toBe("https://a.test/cart");
  });

  it("takes sid for a session id only when its value looks like a token (story ids stay)", () => {
    expect(s.clean("https://a.test/shop/x?sid=9f3a0c12b4d5e6f7")).toBe("https://a.test/shop/x");
    expect(s.clean("https://slashdot.test/article.pl?sid=08/07/15/1234567")).toBe("https://slashdot.test/article.pl?sid=08/07/15/1234567");
    expect(s.clean("https://a.test/list?sid=42")).toBe("https://a.test/list?sid=42");
    expect(s.clean("https://a.test/list?sid=abcdefghijklmnopq")).toBe("https://a.test/list?sid=abcdefghijklmnopq");
  });

  it("is configurable: an empty list keeps every parameter, a bad entry is refused", () => {
    expect(new ParamStripper([]).clean("https://a.test/p?utm_source=x")).toBe("https://a.test/p?utm_source=x");
    expect(new ParamStripper(["ref"]).clean("https://a.test/p?ref=nav&x=1")).toBe("https://a.test/p?x=1");
    expect(() => new ParamStripper(["bad name"])).toThrow(RangeError);
  });

  it("is applied to extracted links and counted", () => {
    const html = `<a href="/a?utm_source=n">1</a><a href="/a">2</a><a href="/b?sid=0123456789abcdef&x=1">3</a><a href="/c?">4</a>`;
    const r = extractPage(html, { pageUrl: "https://a.test/", cleanUrl: (u) => s.clean(u) });
    expect(r.links).toEqual(["https://a.test/a", "https://a.test/b?x=1", "https://a.test/c"]);
    expect(r.paramsStripped).toBe(2);
  });
});
