// Page bodies. Cheap by design: text comes from paragraph pools encoded once per charset at start-up,
// a page only builds its head, its anchors and a few churn strings per request, and the rest is
// Buffer slices; exact sizes come from a final ASCII pad. Huge pages stream from a generator.
import { Rng, hashString, mix } from "./prng.js";
import { churnSlot, lastChangeAt } from "./change.js";
import { encodeText } from "./charset.js";
import { escapeHref, spell } from "./spelling.js";
import { LATIN1_SENTENCES, UTF8_SENTENCES, WORDS } from "./vocab.js";
import { hex16, type Charset, type HostModel, type LinkSpec, type PageSpec, type World } from "./world.js";

export interface Body {
  contentType: string;
  length: number;
  /** The whole body (small and ordinary pages). */
  buffer?: Buffer;
  /** Chunks produced on demand (huge pages), totalling `length`. */
  chunks?: () => Generator<Buffer>;
  /** Content version stamp (ms of last change) and churn slot, for validators. */
  version: number;
  churn: number;
}

const POOL_SIZE = 96;
const ASCII_PAD = Buffer.from(
  Array.from({ length: 400 }, (_, i) => WORDS[(i * 7) % WORDS.length]).join(" ").repeat(4),
  "ascii",
);
// Fixed-length time strings keep a page's size constant while churn and versions change.
const isoMinute = (t: number): string => new Date(t).toISOString().slice(0, 16) + "Z";

function escapeText(s: string): string {
  return s.replace(/&(?![a-z]+;|#\d+;)/g, "&amp;").replace(/</g, "&lt;");
}

const CSS = `body{font-family:Georgia,serif;margin:0 auto;max-width:60em;color:#222}
nav a{margin-right:1em}.ad{border:1px dashed #aaa;padding:.5em}footer{font-size:small;color:#666}
/* a { background: url("/not/a/link.html") } */
main p{line-height:1.5}ul.related li{display:inline-block;margin:.2em}
`;

const JS = `(function(){
  // Strings that look like links are not links: a crawler must not extract them.
  var tpl = '<a href="/js-only/phantom.html">phantom</a>';
  var u = "http://www.example.invalid/from-script";
  window.__simweb = { tpl: tpl, u: u, t: Date.now() };
  if (document.querySelector) { var n = document.querySelector("nav"); if (n && n.children.length > 1000) n.innerHTML = tpl; }
})();
`;

export class Renderer {
  private readonly pools: Record<Charset, Buffer[]>;

  constructor(private readonly world: World) {
    this.pools = { "utf-8": this.buildPool("utf-8"), "windows-1252": this.buildPool("windows-1252") };
  }

  /** Paragraphs of mixed text with inline markup and entities, encoded once. */
  private buildPool(charset: Charset): Buffer[] {
    const r = new Rng(mix(this.world.config.seed, 0x9001, charset === "utf-8" ? 1 : 2));
    const sentences = charset === "utf-8" ? UTF8_SENTENCES : LATIN1_SENTENCES;
    const out: Buffer[] = [];
    for (let i = 0; i < POOL_SIZE; i++) {
      const target = r.range(300, 1600);
      let s = "<p>";
      while (s.length < target) {
        if (r.chance(0.15)) s += `${r.pick(sentences)} `;
        const n = r.range(6, 16);
        const words: string[] = [];
        for (let w = 0; w < n; w++) words.push(r.pick(WORDS));
        let sentence = words.join(" ");
        if (r.chance(0.2)) sentence = sentence.replace(/ (\w+) /, " <em>$1</em> ");
        if (r.chance(0.1)) sentence = sentence.replace(/ (\w+) /, " <strong>$1</strong> &amp; ");
        if (r.chance(0.05)) sentence += " <code>a &lt; b &amp;&amp; c &gt; d</code>";
        s += `${sentence[0]?.toUpperCase()}${sentence.slice(1)}. `;
      }
      out.push(encodeText(`${s.trimEnd()}</p>\n`, charset));
    }
    return out;
  }

  private anchor(link: LinkSpec, base: URL, allowRaw: boolean, r: Rng): string {
    const href = escapeHref(spell(link.url, { base, allowRawNonAscii: allowRaw }, r), r);
    const q = /[\s"'=<>`]/.test(href) || r.chance(0.8) ? (href.includes('"') ? "'" : '"') : r.chance(0.5) ? "'" : "";
    let rel = "";
    if (link.nofollow) rel = ` rel="${r.pick(["nofollow", "nofollow noopener", "ugc nofollow", "NoFollow", "external nofollow"])}"`;
    else if (r.chance(0.1)) rel = ` rel="${r.pick(["noopener", "external", "noreferrer"])}"`;
    const text = r.chance(0.1) ? `${r.pick(WORDS)} &amp; ${r.pick(WORDS)}` : `${r.pick(WORDS)} ${r.pick(WORDS)}`;
    const cls = r.chance(0.3) ? ` class="${r.pick(["lnk", "card-link", "nav-item"])}"` : "";
    return r.chance(0.5) ? `<a href=${q}${href}${q}${rel}${cls}>${text}</a>` : `<a${cls} href=${q}${href}${q}${rel}>${text}</a>`;
  }

  /** Content-Type and the charset declarations of a host's HTML. */
  private charsetParts(h: HostModel): { contentType: string; meta: string; bom: boolean } {
    const cs = h.info.charset;
    const name = cs === "utf-8" ? (h.seed % 3 === 0 ? "UTF-8" : "utf-8") : h.seed % 2 === 0 ? "windows-1252" : "iso-8859-1";
    switch (h.charsetDecl) {
      case "header": return { contentType: `text/html; charset=${name}`, meta: "", bom: false };
      case "meta": return { contentType: "text/html", meta: `<meta charset="${name}">`, bom: false };
      case "http-equiv": return { contentType: "text/html", meta: `<meta http-equiv="Content-Type" content="text/html; charset=${name}">`, bom: false };
      case "bom": return { contentType: "text/html", meta: `<meta charset="utf-8">`, bom: true };
      case "header-lies": return { contentType: "text/html; charset=iso-8859-1", meta: `<meta charset="utf-8">`, bom: false };
      case "meta-lies": return { contentType: "text/html", meta: `<meta charset="utf-8">`, bom: false };
    }
  }

  /** The body of a page at content time `now`. */
  render(p: PageSpec, now: number): Body {
    const version = lastChangeAt(p.change, now);
    const churn = churnSlot(p.change, now);
    if (p.kind !== "html") return this.renderFile(p, version, churn);
    const h = p.host;
    const cs = this.charsetParts(h);
    const charset = h.info.charset;
    const allowRaw = h.charsetDecl !== "header-lies" && h.charsetDecl !== "meta-lies";
    const layout = new Rng(mix(p.seed, 9)); // stable across versions: spellings, attributes
    const content = new Rng(mix(p.seed, 10, version)); // changes with each content version
    const base = new URL(p.baseHref ?? p.url);
    const o = this.world.origin(h);
    const title = `${p.slug.replace(/-/g, " ")} &amp; more — ${h.info.name}`;

    const head: string[] = [];
    head.push(`<!DOCTYPE html>\n<html lang="${h.lang}">\n<head>\n`);
    if (cs.meta) head.push(`${cs.meta}\n`);
    head.push(`<title>${title}</title>\n<meta name="viewport" content="width=device-width, initial-scale=1">\n`);
    head.push(`<meta name="description" content="${escapeText(p.slug)} page ${p.id} of ${h.info.name}">\n`);
    if (p.metaRobots) head.push(layout.chance(0.7) ? `<meta name="robots" content="${p.metaRobots}">\n` : `<META NAME="ROBOTS" CONTENT="${p.metaRobots}">\n`);
    if (p.baseHref) head.push(`<base href="${p.baseHref}">\n`);
    const canonicalHref = layout.chance(0.7) ? p.url : spell(p.url, { base, allowRawNonAscii: allowRaw }, layout);
    head.push(`<link rel="canonical" href="${escapeHref(canonicalHref, layout)}">\n`);
    head.push(`<link rel="stylesheet" href="${o}/static/site.css">\n<style>\n${CSS}</style>\n`);
    head.push(`<script src="${o}/static/app.js" defer></script>\n<script>\n${JS}</script>\n</head>\n<body>\n`);

    const links = this.world.links(p);
    const navCount = links.findIndex((l) => l.kind !== "nav");
    const nav = navCount < 0 ? links : links.slice(0, navCount);
    const rest = navCount < 0 ? [] : links.slice(navCount);
    const top: string[] = [`<header><nav>`];
    for (const l of nav) top.push(this.anchor(l, base, allowRaw, layout));
    top.push(`<a name="top"></a><a href="javascript:void(0)">menu</a></nav></header>\n<main>\n<h1>${title}</h1>\n`);
    top.push(`<p class="meta">Last updated ${isoMinute(version)} &middot; <a href="mailto:editor@${h.info.name}">editor</a> &middot; <a href="tel:+15550100">call</a></p>\n`);
    if (!p.baseHref) top.push(`<p><a href="#comments">comments</a></p>\n`);

    // Anchors in small blocks, spread over the text: inline paragraphs and related-link lists.
    const blocks: string[] = [];
    for (let i = 0; i < rest.length; ) {
      const n = Math.min(rest.length - i, layout.range(1, 6));
      const items = rest.slice(i, i + n).map((l) => this.anchor(l, base, allowRaw, layout));
      blocks.push(layout.chance(0.5) ? `<ul class="related">${items.map((a) => `<li>${a}</li>`).join("")}</ul>\n` : `<p>See also: ${items.join(", ")}.</p>\n`);
      i += n;
    }
    const footer: string[] = [`</main>\n<!-- <a href="${o}/old/removed-page.html">removed</a> -->\n`];
    if (p.change.churn === "timestamp") footer.push(`<p class="generated">Generated ${isoMinute(churn * 60_000)}</p>\n`);
    if (p.change.churn === "ad") footer.push(`<div class="ad" id="ad-slot">Sponsored offer #${hex16(mix(p.seed, churn), 0)}</div>\n`);
    footer.push(`<footer id="comments"><p>&copy; 2025 ${h.info.name} &middot; page ${p.id}</p></footer>\n</body>\n</html>\n`);

    const fixed: Buffer[] = [];
    if (cs.bom) fixed.push(Buffer.from([0xef, 0xbb, 0xbf]));
    fixed.push(encodeText(head.join("") + top.join(""), charset));
    const blockBufs = blocks.map((b) => encodeText(b, charset));
    const tail = encodeText(footer.join(""), charset);
    let fixedLen = tail.length;
    for (const b of fixed) fixedLen += b.length;
    for (const b of blockBufs) fixedLen += b.length;
    const fillLen = Math.max(0, p.size - fixedLen);
    const pool = this.pools[charset];
    const length = fixedLen + fillLen;
    const contentType = cs.contentType;

    if (p.huge) {
      return {
        contentType, length, version, churn,
        chunks: function* () {
          yield* fixed;
          yield* blockBufs;
          yield* fillChunks(pool, content, fillLen);
          yield tail;
        },
      };
    }
    // Interleave text and link blocks: blocks go after evenly spaced filler paragraphs.
    const parts: Buffer[] = [...fixed];
    const filler = [...fillChunks(pool, content, fillLen)];
    const every = blockBufs.length > 0 ? Math.max(1, Math.floor(filler.length / blockBufs.length)) : Infinity;
    let bi = 0;
    for (let i = 0; i < filler.length; i++) {
      parts.push(filler[i] as Buffer);
      if ((i + 1) % every === 0 && bi < blockBufs.length) parts.push(blockBufs[bi++] as Buffer);
    }
    while (bi < blockBufs.length) parts.push(blockBufs[bi++] as Buffer);
    parts.push(tail);
    return { contentType, length, version, churn, buffer: Buffer.concat(parts, length) };
  }

  private renderFile(p: PageSpec, version: number, churn: number): Body {
    const r = new Rng(mix(p.seed, 11, version));
    let head: Buffer;
    let tail: Buffer;
    let contentType: string;
    switch (p.kind) {
      case "pdf":
        contentType = "application/pdf";
        head = Buffer.from(`%PDF-1.4\n%\xe2\xe3\xcf\xd3\n1 0 obj\n<< /Type /Catalog /Version ${version} >>\nendobj\nstream\n`, "latin1");
        tail = Buffer.from("\nendstream\n%%EOF\n", "latin1");
        break;
      case "image":
        contentType = "image/jpeg";
        head = Buffer.from([0xff, 0xd8, 0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]);
        tail = Buffer.from([0xff, 0xd9]);
        break;
      case "json":
        contentType = "application/json";
        head = Buffer.from(`{"id":${p.id},"host":"${p.host.info.name}","version":${version},"pad":"`, "utf8");
        tail = Buffer.from(`","links":["/not/a/link.html"]}\n`, "utf8");
        break;
      default:
        contentType = "text/plain; charset=utf-8";
        head = Buffer.from(`${p.slug} (version ${isoMinute(version)})\n\n`, "utf8");
        tail = Buffer.from("\n-- end --\n", "utf8");
    }
    const fill = Math.max(0, p.size - head.length - tail.length);
    const parts = [head];
    if (p.kind === "pdf" || p.kind === "image") {
      const noise = Buffer.allocUnsafe(fill);
      for (let i = 0; i + 4 <= fill; i += 4) noise.writeUInt32LE(r.u32(), i);
      for (let i = fill - (fill % 4); i < fill; i++) noise[i] = r.int(256);
      parts.push(noise);
    } else {
      parts.push(asciiPad(fill, r.int(ASCII_PAD.length)));
    }
    parts.push(tail);
    const length = head.length + fill + tail.length;
    return { contentType, length, version, churn, buffer: Buffer.concat(parts, length) };
  }

  /** A small HTML page inside a trap space (calendar or session ids). */
  renderTrap(h: HostModel, trap: "calendar" | "session", path: string): Body {
    const links = this.world.trapLinks(h, trap, path);
    const r = new Rng(hashString(path, h.seed));
    const base = new URL(this.world.origin(h) + path);
    const anchors = links.map((l) => this.anchor(l, base, false, r)).join("\n");
    const pad = asciiPad(r.range(1_000, 4_000), r.int(1000)).toString("latin1");
    const html = `<!DOCTYPE html>\n<html><head><meta charset="utf-8"><title>${trap} ${escapeText(path)}</title></head>\n<body><h1>${trap}</h1>\n<p>${pad}</p>\n${anchors}\n</body></html>\n`;
    const buffer = Buffer.from(html, "utf8");
    return { contentType: "text/html; charset=utf-8", length: buffer.length, buffer, version: 0, churn: 0 };
  }
}

/** Filler paragraphs from the pool totalling exactly `len` bytes (the last one padded with ASCII). */
function* fillChunks(pool: Buffer[], r: Rng, len: number): Generator<Buffer> {
  let left = len;
  while (left > 0) {
    const para = pool[r.int(pool.length)] as Buffer;
    if (para.length + 8 <= left) {
      yield para;
      left -= para.length;
    } else {
      if (left >= 8) yield Buffer.concat([Buffer.from("<p>"), asciiPad(left - 8, r.int(1000)), Buffer.from("</p>\n")]);
      else yield Buffer.alloc(left, 0x20);
      left = 0;
    }
  }
}

function asciiPad(len: number, offset: number): Buffer {
  if (len <= ASCII_PAD.length - (offset % ASCII_PAD.length)) return ASCII_PAD.subarray(offset % ASCII_PAD.length, (offset % ASCII_PAD.length) + len);
  const out = Buffer.allocUnsafe(len);
  for (let i = 0; i < len; i += ASCII_PAD.length) ASCII_PAD.copy(out, i, 0, Math.min(ASCII_PAD.length, len - i));
  return out;
}
