import { describe, expect, test } from "vitest";
import { Parser } from "htmlparser2";
import { makeConfig, World, canonicalUrl } from "../src/index.js";
import { Renderer } from "../src/html.js";

interface Extracted {
  base: string | null;
  anchors: Array<{ href: string; rel: string }>;
  metaRobots: string | null;
  canonical: string | null;
}

function extract(html: string): Extracted {
  const out: Extracted = { base: null, anchors: [], metaRobots: null, canonical: null };
  const p = new Parser({
    onopentag(name, attrs) {
      if (name === "base" && attrs.href !== undefined && out.base === null) out.base = attrs.href;
      if (name === "a" && attrs.href !== undefined) out.anchors.push({ href: attrs.href, rel: (attrs.rel ?? "").toLowerCase() });
      if (name === "meta" && (attrs.name ?? "").toLowerCase() === "robots") out.metaRobots = (attrs.content ?? "").toLowerCase();
      if (name === "link" && attrs.rel === "canonical") out.canonical = attrs.href ?? null;
    },
  }, { lowerCaseAttributeNames: true });
  p.write(html);
  p.end();
  return out;
}

describe("HTML generator", () => {
  test("every anchor spelling resolves to the generator's canonical target; nofollow and meta robots match; decoys are not links", () => {
    const w = new World(makeConfig({ preset: "hostile", hosts: 300, seed: 5, pageSize: { median: 6_000, mean: 8_000, min: 3_000, max: 30_000 }, huge: { share: 0, minBytes: 1, maxBytes: 2 } }));
    const r = new Renderer(w);
    const spellings = new Set<string>();
    let pages = 0;
    let anchors = 0;
    let withBase = 0;
    const bad: string[] = [];
    for (const h of w.hosts().slice(0, 80)) {
      const m = w.model(h.index);
      for (let id = 0; id < Math.min(h.pageCount, 12); id++) {
        const p = w.page(m, id);
        if (p.kind !== "html") continue;
        const body = r.render(p, Date.UTC(2025, 1, 1));
        const text = new TextDecoder(h.charset).decode(body.buffer!);
        const ex = extract(text);
        const docBase = ex.base ? new URL(ex.base, p.url).href : p.url;
        if (ex.base) withBase++;
        const links = w.links(p);
        // Self-links are skipped on both sides ("#comments" also points at the page itself).
        const followable = new Set(links.filter((l) => !l.nofollow && l.url !== p.url).map((l) => l.url));
        const all = new Set(links.filter((l) => l.url !== p.url).map((l) => l.url));
        const seenFollow = new Set<string>();
        const seenAll = new Set<string>();
        for (const a of ex.anchors) {
          if (/^(javascript|mailto|tel):/i.test(a.href)) continue;
          const c = canonicalUrl(a.href, docBase);
          if (c === p.url) continue; // "#comments" points at the page itself
          // Plain checks in the hot loop (expect() per anchor is slow); failures are listed at the end.
          if (c === null || !all.has(c)) bad.push(`${a.href} -> ${c} on ${p.url}`);
          seenAll.add(c!);
          if (!a.rel.split(/\s+/).includes("nofollow")) seenFollow.add(c!);
          spellings.add(classify(a.href));
          anchors++;
        }
        expect(seenAll).toEqual(all);
        expect(seenFollow).toEqual(followable);
        expect(canonicalUrl(ex.canonical!, docBase)).toBe(p.url);
        expect(ex.metaRobots === null ? false : /nofollow|none/.test(ex.metaRobots)).toBe(p.nofollowPage);
        pages++;
      }
    }
    expect(bad).toEqual([]);
    expect(pages).toBeGreaterThan(300);
    expect(anchors).toBeGreaterThan(5_000);
    expect(withBase).toBeGreaterThan(10);
    for (const s of ["absolute", "root-relative", "relative", "protocol-relative", "upper-host", "default-port", "dot-segments", "fragment", "pct-unreserved", "entity-query", "raw-non-ascii", "dot-relative"]) {
      expect(spellings, s).toContain(s);
    }
  });

  test("windows-1252 pages decode with their charset; wrong-charset hosts declare the other one", () => {
    const w = new World(makeConfig({ preset: "hostile", hosts: 400, seed: 9 }));
    const r = new Renderer(w);
    const latin = w.hosts().find((h) => h.charset === "windows-1252" && !h.behaviours.includes("wrong-charset"))!;
    const body = r.render(w.page(w.model(latin.index), 0), 0);
    const decoded = new TextDecoder("windows-1252").decode(body.buffer!);
    expect(decoded).toMatch(/Grüße|Crème|Niño|€/);
    const liar = w.hosts().find((h) => h.behaviours.includes("wrong-charset") && w.model(h.index).charsetDecl === "header-lies")!;
    const lb = r.render(w.page(w.model(liar.index), 0), 0);
    expect(lb.contentType).toBe("text/html; charset=iso-8859-1");
    expect(lb.buffer!.toString("utf8")).toMatch(/<meta charset="utf-8">/);
  });
});

function classify(href: string): string {
  const h = href.trim();
  if (/[^\p{ASCII}]/u.test(h)) return "raw-non-ascii";
  if (h.includes("#")) return "fragment";
  if (/%(7E|[46][1-9A-F]|[57][0-9A]|2D|5F)/.test(h)) return "pct-unreserved";
  if (h.includes("&")) return "entity-query";
  if (/^[a-z]+:\/\/[^/]*:\d+/i.test(h)) return "default-port";
  if (/^[a-z]+:\/\/[^/]*[A-Z]/.test(h)) return "upper-host";
  if (/^https?:\/\//.test(h)) return "absolute";
  if (h.startsWith("//")) return "protocol-relative";
  if (/^\/(\.|[a-z]+\/\.\.)\//.test(h)) return "dot-segments";
  if (h.startsWith("/")) return "root-relative";
  if (h.startsWith("./") || h.startsWith("../")) return "dot-relative";
  return "relative";
}
