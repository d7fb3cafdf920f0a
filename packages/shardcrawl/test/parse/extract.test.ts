import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { extractPage, parseRobotsDirectives, refreshTarget } from "../../src/parse/extract.js";

const PAGE = "http://example.com/dir/page.html";

const HANDCRAFTED = `<!DOCTYPE html>
<HTML LANG="de-AT"><head>
<meta charset="utf-8">
<TITLE>  Caf&eacute; &amp;
   Bar &#x1F600; </TITLE>
<link rel="stylesheet" href="/style.css">
<link rel="Alternate Canonical" href="/Canon/./Page?x=%7e#frag">
<link rel="canonical" href="/second-canonical">
<script>document.write('<a href="/from-script">x</a>'); var s = "</div>";</script>
<style>a::after { content: "<a href='/from-style'>"; }</style>
<base href="/base/dir/">
<base href="/ignored-second-base/">
</head>
<body>
<h1>Heading</h1><p>First&nbsp;paragraph with <b>bold</b>and <i>italic</i> words.</p>
<div>Block one</div><div>Block two<br>after break</div>
<a href="rel/link?a=1&amp;b=2">relative</a>
<a href="/root?x=1&y=2">root</a>
<a href="//other.example/proto">proto</a>
<a href="HTTP://Other.Example:80/abs#x">abs</a>
<a href="?only=query">query</a>
<a href="#only-fragment">fragment</a>
<a href="nf" rel="nofollow">nofollow</a>
<a href="NF2" REL="external NoFollow">nofollow upper-case</a>
<a href="both">both, followable</a><a href="both" rel="nofollow">both, nofollow</a>
<a href="javascript:void(0)">js</a><a href="mailto:a@b.example">mail</a><a href="tel:123">tel</a><a href="data:text/html,x">data</a>
<a href="http://[broken/">broken</a>
<a href="/root?x=1&amp;y=2">same as root after entities</a>
<a href="/ROOT/../root?x=1&y=2">same as root after normalization</a>
<a>no href</a><a href="">empty: the base itself</a>
<area href="/map-area" alt="x">
<noscript>Enable JS <a href="/noscript-link">ns</a></noscript>
<template><a href="/template-link">t</a>template text</template>
<svg><title>svg title</title><a href="/svg-link">s</a></svg>
<iframe src="/frame">iframe fallback text</iframe>
<textarea>text&lt;area</textarea>
<p>Tail &mdash; end.</p>
</body></HTML>`;

describe("extractPage on a handcrafted page", () => {
  const result = extractPage(HANDCRAFTED, { pageUrl: PAGE, userAgentToken: "ShardCrawl" });

  it("resolves links against the first <base href>, decodes entities, normalizes and deduplicates", () => {
    expect(result.baseUrl).toBe("http://example.com/base/dir/");
    expect(result.links).toEqual([
      "http://example.com/base/dir/rel/link?a=1&b=2",
      "http://example.com/root?x=1&y=2",
      "http://other.example/proto",
      "http://other.example/abs",
      "http://example.com/base/dir/?only=query",
      "http://example.com/base/dir/",
      "http://example.com/base/dir/both",
      "http://example.com/map-area",
      "http://example.com/noscript-link",
      "http://example.com/svg-link",
    ]);
  });

  it("counts what it dropped and why", () => {
    expect(result.droppedLinks).toEqual({
      nofollow: 2, // nf, NF2 ("both" has a followable occurrence)
      scheme: 4, // javascript, mailto, tel, data
      invalid: 1,
      duplicate: 2, // "#only-fragment" and "" both resolve to the base; /ROOT/../root
    });
  });

  it("reads lang, title (entities decoded, whitespace collapsed) and the first canonical", () => {
    expect(result.lang).toBe("de-AT");
    expect(result.title).toBe("Café & Bar 😀");
    expect(result.canonical).toBe("http://example.com/Canon/Page?x=~");
    expect(result.noindex).toBe(false);
    expect(result.nofollow).toBe(false);
  });

  it("keeps visible text only, with words separated at block boundaries", () => {
    // Adjacent inline elements run together as they render ("jsmail"); <svg><title> is a tooltip.
    expect(result.text).toBe(
      "Heading First paragraph with boldand italic words. Block one Block two after break relative root proto " +
        "abs query fragment nofollow nofollow upper-case both, followableboth, nofollow jsmailteldata broken " +
        "same as root after entities same as root after normalization no hrefempty: the base itself s " +
        "text<area Tail — end.",
    );
    expect(result.text).not.toContain("document.write");
    expect(result.text).not.toContain("content:");
    expect(result.text).not.toContain("Enable JS");
    expect(result.text).not.toContain("template text");
    expect(result.text).not.toContain("iframe fallback");
  });
});

describe("chunked input", () => {
  const whole = extractPage(HANDCRAFTED, { pageUrl: PAGE, userAgentToken: "ShardCrawl" });

  it("gives the same result however the document is cut into chunks", () => {
    // Every cut position once (tokens spanning chunks are the rare path), then random multi-cuts.
    for (let cut = 1; cut < HANDCRAFTED.length; cut++) {
      const r = extractPage([HANDCRAFTED.slice(0, cut), HANDCRAFTED.slice(cut)], { pageUrl: PAGE, userAgentToken: "ShardCrawl" });
      expect(r, `cut at ${cut}`).toEqual(whole);
    }
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 1, max: HANDCRAFTED.length - 1 }), { maxLength: 40 }), (cuts) => {
        const points = [0, ...cuts.sort((a, b) => a - b), HANDCRAFTED.length];
        const chunks = points.slice(1).map((end, i) => HANDCRAFTED.slice(points[i], end));
        expect(extractPage(chunks, { pageUrl: PAGE, userAgentToken: "ShardCrawl" })).toEqual(whole);
      }),
      { numRuns: 300 },
    );
  });
});

describe("nofollow and robots meta", () => {
  const page = (head: string, body = '<a href="/a">a</a><a href="/b" rel="nofollow">b</a>') =>
    `<html><head>${head}</head><body>${body}</body></html>`;

  it("honours rel=nofollow by default and can be told not to", () => {
    expect(extractPage(page(""), { pageUrl: PAGE }).links).toEqual(["http://example.com/a"]);
    expect(extractPage(page(""), { pageUrl: PAGE, honourNofollow: false }).links).toEqual(["http://example.com/a", "http://example.com/b"]);
  });

  it("reads <meta name=robots> and <meta name=TOKEN>, ignores other bots", () => {
    const robots = extractPage(page('<meta name="ROBOTS" content="NOINDEX, follow">'), { pageUrl: PAGE });
    expect([robots.noindex, robots.nofollow]).toEqual([true, false]);
    const none = extractPage(page('<meta name="shardcrawl" content="none">'), { pageUrl: PAGE, userAgentToken: "shardcrawl" });
    expect([none.noindex, none.nofollow]).toEqual([true, true]);
    expect(none.links).toEqual([]);
    expect(none.droppedLinks).toEqual({ nofollow: 2 });
    const other = extractPage(page('<meta name="googlebot" content="noindex,nofollow">'), { pageUrl: PAGE, userAgentToken: "shardcrawl" });
    expect([other.noindex, other.nofollow]).toEqual([false, false]);
  });

  it("drops every link of a page-level nofollow (meta or header) unless told not to", () => {
    const meta = extractPage(page('<meta name=robots content="nofollow">'), { pageUrl: PAGE });
    expect(meta.links).toEqual([]);
    expect(extractPage(page(""), { pageUrl: PAGE, headerNofollow: true }).links).toEqual([]);
    expect(extractPage(page('<meta name=robots content="nofollow">'), { pageUrl: PAGE, honourNofollow: false }).links).toHaveLength(2);
  });

  it("follows <meta http-equiv=refresh> targets", () => {
    const r = extractPage(page(`<meta http-equiv="Refresh" content="0; URL='/moved?x=1'">`, ""), { pageUrl: PAGE });
    expect(r.links).toEqual(["http://example.com/moved?x=1"]);
  });

  it("parses directive lists and refresh values leniently", () => {
    expect(parseRobotsDirectives("noindex nofollow")).toEqual({ noindex: true, nofollow: true });
    expect(parseRobotsDirectives("index, follow, max-snippet:-1")).toEqual({ noindex: false, nofollow: false });
    expect(refreshTarget("5;url=http://a.example/")).toBe("http://a.example/");
    expect(refreshTarget("0; URL = \"/x\" trailing")).toBe("/x");
    expect(refreshTarget("10")).toBeUndefined();
  });
});

describe("limits", () => {
  it("caps links per page and counts the rest", () => {
    const html = Array.from({ length: 50 }, (_, i) => `<a href="/p${i}">${i}</a>`).join("");
    const r = extractPage(html, { pageUrl: PAGE, maxLinks: 10 });
    expect(r.links).toHaveLength(10);
    expect(r.links[0]).toBe("http://example.com/p0");
    expect(r.droppedLinks).toEqual({ cap: 40 });
  });

  it("counts self links and too-long links", () => {
    const long = "/" + "x".repeat(3000);
    const r = extractPage(`<a href="page.html">self</a><a href="${long}">long</a><a href="/ok">ok</a>`, { pageUrl: PAGE });
    expect(r.links).toEqual(["http://example.com/ok"]);
    expect(r.droppedLinks).toEqual({ self: 1, "too-long": 1 });
    const huge = extractPage(`<a href="/${"y".repeat(100_000)}">x</a>`, { pageUrl: PAGE });
    expect(huge.droppedLinks).toEqual({ "too-long": 1 });
  });

  it("caps title and text", () => {
    const html = `<title>${"t".repeat(5000)}</title><p>${"word ".repeat(100_000)}</p>`;
    const r = extractPage(html, { pageUrl: PAGE, maxTextChars: 1000, maxTitleChars: 100 });
    expect(r.title).toHaveLength(100);
    expect(r.text.length).toBeLessThanOrEqual(1000);
    expect(r.text.length).toBeGreaterThan(900);
  });

  it("ignores a <base> that is not http(s) or does not parse", () => {
    expect(extractPage(`<base href="javascript:x"><a href="a">a</a>`, { pageUrl: PAGE }).links).toEqual(["http://example.com/dir/a"]);
    expect(extractPage(`<base href="http://[x"><a href="a">a</a>`, { pageUrl: PAGE }).links).toEqual(["http://example.com/dir/a"]);
    expect(extractPage(`<a href="a">a</a><base href="http://other.example/x/">`, { pageUrl: PAGE }).links).toEqual([
      "http://other.example/x/a",
    ]);
  });
});

describe("pathological input never throws and stays bounded", () => {
  const bounded = (html: string) => {
    const r = extractPage(html, { pageUrl: PAGE, maxLinks: 100, maxTextChars: 5000, maxTitleChars: 200 });
    expect(r.links.length).toBeLessThanOrEqual(100);
    expect(r.text.length).toBeLessThanOrEqual(5000);
    expect((r.title ?? "").length).toBeLessThanOrEqual(200);
    expect(r.parseError).toBeUndefined();
    return r;
  };

  it("deeply nested markup (500k unclosed elements)", () => {
    const r = bounded("<div><span><a href='/x'>".repeat(150_000) + "deep" + "<b>".repeat(50_000));
    expect(r.links).toEqual(["http://example.com/x"]);
    expect(r.text).toBe("deep");
  });

  it("a 10 MB single line", () => {
    const r = bounded("<p>" + "abcdefghij".repeat(1_000_000));
    expect(r.text).toHaveLength(5000);
  });

  it("unterminated constructs", () => {
    bounded("<a href='/x" + "y".repeat(1_000_000));
    bounded("<!--" + "<a href=/x>".repeat(100_000));
    expect(bounded("<script>" + "<a href=/x>".repeat(100_000)).links).toEqual([]);
    bounded("<title>" + "&amp;".repeat(200_000));
    bounded("<" + "a ".repeat(200_000));
    bounded("&".repeat(500_000) + "&#" + "9".repeat(100_000) + ";");
  });

  it("100k links, most of them duplicates or junk", () => {
    const html = Array.from({ length: 100_000 }, (_, i) => `<a href="${i % 3 === 0 ? "javascript:" + i : "/p" + (i % 5000)}">`).join("");
    const r = bounded(html);
    expect(r.links).toHaveLength(100);
    expect(Object.values(r.droppedLinks).reduce((a, b) => a + b, 0)).toBeGreaterThan(1000);
  });

  it("binary bytes and invalid UTF-8 decoded as text", () => {
    let seed = 12345;
    const bytes = Buffer.alloc(2_000_000);
    for (let i = 0; i < bytes.length; i++) {
      seed = (seed * 1103515245 + 12345) >>> 0;
      bytes[i] = seed >>> 24;
    }
    bounded(bytes.toString("utf8"));
    bounded(bytes.toString("latin1"));
  });

  it("arbitrary markup-like strings (property)", () => {
    const piece = fc.constantFrom(
      "<a href=", "<A HREF='", '"', "'", ">", "</a>", "<base href=/b/>", "<title>", "</title>", "<script>", "</script>",
      "<noscript>", "</noscript>", "<template>", "</template>", "<svg>", "</svg>", "<meta name=robots content=", "none",
      "<link rel=canonical href=", "&amp;", "&#0;", "&#x110000;", "&nbsp", "<!--", "-->", "<![CDATA[", "]]>", "<?", "/>",
      "javascript:", "//", "/x", "?q", "#f", " ", "\n", "\u0000", "日本", "😀", "<plaintext>", "<textarea>", "<",
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(piece, fc.string({ unit: "binary", maxLength: 8 })), { maxLength: 60 }), (parts) => {
        bounded(parts.join(""));
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 2000) },
    );
  });
});

describe("visible text", () => {
  it("collapses every whitespace run (ASCII and Unicode spaces) to one space, as /\\s+/g does", () => {
    const piece = fc.constantFrom("word", "x", "é", "日本", " ", "  ", "\n", "\n    ", "\t", "\r\n", "\f", "\v", "\u00a0", "\u2003", "\u3000", "\ufeff", "\u2028", "\u200b", "-");
    fc.assert(
      fc.property(fc.array(fc.array(piece, { maxLength: 12 }), { minLength: 1, maxLength: 6 }), (nodes) => {
        const texts = nodes.map((n) => n.join(""));
        // Block elements separate their texts by a space; whitespace-only texts add nothing.
        const html = texts.map((t) => `<p>${t}</p>`).join("");
        const expected = texts.map((t) => t.replace(/\s+/g, " ").trim()).filter((t) => t !== "").join(" ");
        expect(extractPage(html, { pageUrl: PAGE }).text).toBe(expected);
      }),
      { numRuns: Number(process.env.FC_RUNS ?? 3000) },
    );
  });
});
