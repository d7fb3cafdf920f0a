// Cheap change detectors, pure parts: listing rules (regex and selector forms), feed links and
// entries (RSS and Atom), sitemap index files.
import { describe, expect, it } from "vitest";
import {
  ListingDetector, ListingRules, feedEntries, feedLinks, isFeed, isSitemap, isSitemapIndex, parseListingRules, sitemapIndexLocs, sitemapLocs, summaryDigest,
} from "../../src/schedule/recrawl/index.js";

const LISTING = `<html><head><title>Shoes</title>
<link rel="stylesheet" href="/s.css"><link rel="alternate" type="application/rss+xml" href="/feed.xml?x=1&amp;y=2">
<link rel="alternate" type="application/atom+xml" href="https://other.test/atom"></head>
<body><ul>
<li class="item big"><a href="/p/1">Red shoe</a> <span class="price">$10.00</span> <span class="stock">3 left</span></li>
<li class="item"><a href="p/2?c=a&amp;d=b#top">Blue shoe</a> <span class="price">$12.50</span></li>
<li class="item"><span class="price">no link</span></li>
<li class="ad"><a href="/ad">ad</a> <span class="price">$1</span></li>
</ul></body></html>`;

describe("listing rules", () => {
  it("selector form: item elements, their first link resolved against the page, the summary element's text", () => {
    const d = new ListingDetector({ pattern: "/c/", itemSelector: "li.item", summarySelector: "span.price" });
    expect(d.extract(LISTING, "https://shop.test/c/shoes")).toEqual([
      { url: "https://shop.test/p/1", summary: "$10.00" },
      { url: "https://shop.test/c/p/2?c=a&d=b", summary: "$12.50" },
    ]);
    // Without a summary selector the item's whole text is its summary.
    const whole = new ListingDetector({ pattern: "/c/", itemSelector: "li.item.big" }).extract(LISTING, "https://shop.test/c/shoes");
    expect(whole).toEqual([{ url: "https://shop.test/p/1", summary: "Red shoe $10.00 3 left" }]);
  });

  it("regex form: named groups link and summary", () => {
    const d = new ListingDetector({ pattern: "/c/", item: '<a href="(?<link>[^"]+)">[^<]*</a> <span class="price">(?<summary>[^<]*)</span>' });
    expect(d.extract(LISTING, "https://shop.test/c/shoes").map((i) => i.summary)).toEqual(["$10.00", "$12.50", "$1"]);
  });

  it("a changed summary has a different digest; rules are checked at load time with clear messages", () => {
    expect(summaryDigest("$10.00").equals(summaryDigest("$10.00"))).toBe(true);
    expect(summaryDigest("$10.00").equals(summaryDigest("$11.00"))).toBe(false);
    expect(summaryDigest("x")).toHaveLength(8);
    expect(() => parseListingRules([{ pattern: "(" , itemSelector: "li" }])).toThrow();
    expect(() => parseListingRules([{ pattern: "x", item: "(?<link>a)" }])).toThrow(/summary/);
    expect(() => parseListingRules([{ pattern: "x" }])).toThrow(/exactly one/);
    expect(() => parseListingRules([{ pattern: "x", itemSelector: "ul > li" }])).toThrow(/compound/);
    expect(() => parseListingRules([{ pattern: "x", itemSelector: "li", extra: 1 }])).toThrow(/unknown key/);
    expect(() => parseListingRules({})).toThrow(/list/);
    const rules = new ListingRules(parseListingRules([{ pattern: "/c/", itemSelector: "li" }, { pattern: "/d/$", itemSelector: "div" }]));
    expect(rules.for("https://a.test/c/x")?.appliesTo("https://a.test/c/y")).toBe(true);
    expect(rules.for("https://a.test/d/")?.appliesTo("https://a.test/c/y")).toBe(false);
    expect(rules.for("https://a.test/e/")).toBeUndefined();
  });
});

describe("feeds", () => {
  it("finds RSS and Atom alternate links in the head, absolute", () => {
    expect(feedLinks(LISTING, "https://shop.test/c/shoes")).toEqual(["https://shop.test/feed.xml?x=1&y=2", "https://other.test/atom"]);
    expect(feedLinks("<html><head><link rel=alternate hreflang=de href=/de></head>", "https://a.test/")).toEqual([]);
  });

  it("reads RSS pubDate and Atom updated as entry dates; links resolved against the feed", () => {
    const rss = `<?xml version="1.0"?><rss version="2.0"><channel><title>t</title>
<item><title>a</title><link>https://a.test/p/1</link><pubDate>Thu, 02 Jan 2025 03:04:05 GMT</pubDate></item>
<item><title>b</title><link>/p/2</link></item></channel></rss>`;
    expect(isFeed(rss)).toBe(true);
    expect(feedEntries(rss, "https://a.test/feed.xml")).toEqual([
      { url: "https://a.test/p/1", dateMs: Date.UTC(2025, 0, 2, 3, 4, 5) },
      { url: "https://a.test/p/2", dateMs: undefined },
    ]);
    const atom = `<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom"><title>t</title>
<entry><title>x</title><link href="https://b.test/e/1"/><updated>2025-01-03T00:00:00Z</updated></entry></feed>`;
    expect(isFeed(atom)).toBe(true);
    expect(feedEntries(atom, "https://b.test/atom")).toEqual([{ url: "https://b.test/e/1", dateMs: Date.UTC(2025, 0, 3) }]);
    expect(feedEntries("<html>no</html>", "https://b.test/")).toEqual([]);
    expect(feedEntries(rss, "https://a.test/feed.xml", 1)).toHaveLength(1);
  });
});

describe("sitemap index files", () => {
  it("lists child sitemaps (bounded); a url set's locs are read for discovery", () => {
    const idx = `<?xml version="1.0"?><sitemapindex xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">
<sitemap><loc>https://a.test/s1.xml</loc><lastmod>2025-01-01</lastmod></sitemap><sitemap><loc>https://a.test/s2.xml?a=1&amp;b=2</loc></sitemap></sitemapindex>`;
    expect(isSitemapIndex(idx)).toBe(true);
    expect(isSitemap(idx)).toBe(false);
    expect(sitemapIndexLocs(idx)).toEqual(["https://a.test/s1.xml", "https://a.test/s2.xml?a=1&b=2"]);
    expect(sitemapIndexLocs(idx, 1)).toEqual(["https://a.test/s1.xml"]);
    expect(sitemapLocs(`<urlset><url><loc>https://a.test/x</loc></url><url><loc>https://a.test/y</loc><lastmod>2025-01-01</lastmod></url></urlset>`)).toEqual(["https://a.test/x", "https://a.test/y"]);
  });
});
