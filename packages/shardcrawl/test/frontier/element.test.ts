// Pure logic: element encoding, URL splitting, Bloom sizing and hashing stability.
import { describe, expect, it } from "vitest";
import { BloomHasher, bloomParamsFor, decodeElement, encodeSuffix, FrontierKeys, splitOrigin } from "../../src/frontier/index.js";
import { encodeRelative } from "../../src/frontier/element.js";
import { prng } from "../prng.js";
import { invalidLinkReason } from "../../src/frontier/links.js";

describe("splitOrigin", () => {
  it("splits origin and path+query losslessly", () => {
    for (const url of ["https://www.d1.test/a/b?c=1", "http://x.test:8080/", "https://[::1]:443/p", "https://a.test/?q", "https://a.test?q", "mailto:x"]) {
      const { origin, rest } = splitOrigin(url);
      expect(origin + rest).toBe(url);
      if (origin !== "") expect(rest.startsWith("/")).toBe(true);
    }
    expect(splitOrigin("https://www.d1.test/a?b")).toEqual({ origin: "https://www.d1.test", rest: "/a?b" });
    expect(splitOrigin("https://a.test?q")).toEqual({ origin: "", rest: "https://a.test?q" });
  });
});

describe("element suffix", () => {
  it("is empty for zeros and minimal otherwise", () => {
    expect(encodeSuffix(0, 0, 0)).toBe("");
    expect(encodeSuffix(3, 0, 0)).toBe("\x03"); // the common case: one byte
    expect(encodeSuffix(8, 0, 0)).toBe("\x08");
    expect(encodeSuffix(9, 0, 0)).toBe("\t9"); // \x09 is the tab
    expect(encodeSuffix(3, 2, 0)).toBe("\t3,2");
    expect(encodeSuffix(0, 0, 1)).toBe("\t0,0,1");
  });
  it("round-trips", () => {
    for (const [d, h, a] of [[0, 0, 0], [5, 0, 0], [1, 0, 0], [8, 0, 0], [9, 0, 0], [1, 2, 0], [0, 0, 7], [12, 3, 4]] as const) {
      expect(decodeElement(`https://a.test/x${encodeSuffix(d, h, a)}`)).toEqual({ url: "https://a.test/x", depth: d, hops: h, attempt: a });
    }
  });
  it("decodes damaged numbers as 0 instead of throwing", () => {
    expect(decodeElement("https://a.test/x\tzz,1")).toEqual({ url: "https://a.test/x", depth: 0, hops: 1, attempt: 0 });
  });
});

describe("keys", () => {
  it("rejects unusable prefixes", () => {
    expect(() => new FrontierKeys("")).toThrow(/prefix/);
    expect(() => new FrontierKeys("a b")).toThrow(/prefix/);
    expect(new FrontierKeys("sc:").queue("www.d1.test", 2)).toBe("sc:q2:www.d1.test");
  });
});

describe("link validation", () => {
  const params = { m: 1000, k: 3 };
  const ok = { url: "https://a.test/x", host: "a.test", tier: 0, depth: 0, hops: 0 };
  it("accepts a normal link and names what is wrong with bad ones", () => {
    expect(invalidLinkReason(ok, params)).toBeUndefined();
    expect(invalidLinkReason({ ...ok, url: "https://a.test/\tx" }, params)).toBe("url-control-char");
    expect(invalidLinkReason({ ...ok, url: "https://a.test/x\x03" }, params)).toBe("url-control-char");
    expect(invalidLinkReason({ ...ok, tier: 9 }, params)).toBe("tier-invalid");
    expect(invalidLinkReason({ ...ok, host: "" }, params)).toBe("host-invalid");
    expect(invalidLinkReason({ ...ok, depth: -1 }, params)).toBe("depth-invalid");
    expect(invalidLinkReason({ ...ok, bloom: [1, 2] }, params)).toBe("bloom-invalid");
    expect(invalidLinkReason({ ...ok, bloom: [1, 2, 1000] }, params)).toBe("bloom-invalid");
  });
});

describe("bloom sizing and hashing", () => {
  it("sizes m and k from n and p", () => {
    const b = bloomParamsFor({ expectedUrls: 1_000_000, falsePositiveRate: 0.01, layout: "classic" });
    expect(b.m).toBe(Math.ceil((-1_000_000 * Math.log(0.01)) / Math.LN2 ** 2));
    expect(b.m).toBe(9_585_059);
    expect(b.k).toBe(7);
    // A billion URLs needs more than 2^32 bits: several segments.
    const big = bloomParamsFor({ expectedUrls: 1_000_000_000, falsePositiveRate: 0.01, layout: "classic" });
    expect(big.m).toBeGreaterThan(2 ** 32);
    expect(() => bloomParamsFor({ expectedUrls: 0, falsePositiveRate: 0.01 })).toThrow(/expectedUrls/);
    expect(() => bloomParamsFor({ expectedUrls: 10, falsePositiveRate: 1 })).toThrow(/falsePositiveRate/);
  });

  it("gives stable positions (fixed seed) in range, also above 2^32 bits", () => {
    const h = new BloomHasher(bloomParamsFor({ expectedUrls: 1_000_000, falsePositiveRate: 0.01, layout: "classic" }));
    const a = h.positions("https://www.d1.test/a");
    // Pinned: a change here means a resumed crawl would look up the wrong bits.
    expect(a).toEqual(new BloomHasher({ m: 9_585_059, k: 7, seed: 0x5c0ffee }).positions("https://www.d1.test/a"));
    expect(a).toEqual([4490228, 7067421, 59556, 2636752, 5213951, 7791154, 783303]);
    const big = new BloomHasher({ m: 9_585_058_378, k: 7, seed: 0x5c0ffee });
    let above = 0;
    for (let i = 0; i < 2000; i++) {
      for (const p of big.positions(`https://h${i}.test/p`)) {
        expect(p).toBeGreaterThanOrEqual(0);
        expect(p).toBeLessThan(9_585_058_378);
        if (p >= 2 ** 32) above++;
      }
    }
    // Uniform positions put ~55% above 2^32; 32-bit base hashes would put (almost) none there.
    expect(above / 14_000).toBeGreaterThan(0.45);
  });
});

describe("compact relative elements", () => {
  it("pack depth 1..8 (no hops, no attempt) into the top bits of an ASCII path, else replace the / by the depth byte", () => {
    // "a/b?c" with the mark on "a" and depth-1 = 2 = 0b010 on "/", "b", "?": one byte less than "/a/b?c".
    expect(encodeRelative("/a/b?c", 3, 0, 0)).toBe(String.fromCharCode(0x80 | 0x61, 0x2f, 0x80 | 0x62, 0x3f) + "c");
    expect(encodeRelative("/abcd", 8, 0, 0)).toBe(String.fromCharCode(0xe1, 0xe2, 0xe3, 0xe4));
    expect(encodeRelative("/abc", 3, 0, 0)).toBe("\x03abc"); // too short to pack
    expect(encodeRelative("/é/abcd", 3, 0, 0)).toBe("\x03é/abcd"); // not ASCII
    expect(encodeRelative("/", 1, 0, 0)).toBe("\x01");
    expect(encodeRelative("/a", 0, 0, 0)).toBe("/a");
    expect(encodeRelative("/a", 9, 0, 0)).toBe("/a\t9");
    expect(encodeRelative("/a", 2, 1, 0)).toBe("/a\t2,1");
    for (const [rest, d, h] of [["/a/b?c", 3, 0], ["/abcd", 8, 0], ["/~!$&'()*+,;=:@", 5, 0], ["/", 1, 0], ["/x", 8, 0], ["/x", 0, 0], ["/x", 9, 0], ["/x", 2, 4], ["/é/abcd", 2, 0]] as const) {
      const el = encodeRelative(rest, d, h, 0);
      expect(decodeElement(el)).toEqual({ url: rest, depth: d, hops: h, attempt: 0 });
      // As Redis gives it back: bytes (a packed element is latin1, others UTF-8).
      expect(decodeElement(Buffer.from(el, el.charCodeAt(0) >= 0x80 ? "latin1" : "utf8"))).toEqual({ url: rest, depth: d, hops: h, attempt: 0 });
    }
    for (let d = 1; d <= 8; d++) expect(decodeElement(encodeRelative("/page?x=1", d, 0, 0)).depth).toBe(d);
    // Every length and depth: the last floor((n - 4) / 8) chars ride in the top bits.
    const r = prng(7);
    for (let n = 1; n <= 70; n++) {
      for (let d = 1; d <= 8; d++) {
        let q = "";
        for (let i = 0; i < n; i++) q += String.fromCharCode(0x20 + Math.floor(r() * 95));
        const el = encodeRelative(`/${q}`, d, 0, 0);
        expect(el.length).toBe(n < 4 ? n + 1 : n - Math.floor((n - 4) / 8));
        expect(decodeElement(Buffer.from(el, "latin1"))).toEqual({ url: `/${q}`, depth: d, hops: 0, attempt: 0 });
      }
    }
    // The previous version's forms still decode.
    expect(decodeElement("/a/b\x05")).toEqual({ url: "/a/b", depth: 5, hops: 0, attempt: 0 });
    expect(decodeElement("/a/b")).toEqual({ url: "/a/b", depth: 0, hops: 0, attempt: 0 });
  });
});
