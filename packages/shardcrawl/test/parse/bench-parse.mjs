// Micro-benchmark of the parse step (run by hand, not a test):
//
//   pnpm build && node packages/shardcrawl/test/parse/bench-parse.mjs [--dir DIR] [--files N]
//       [--min-bytes B] [--rounds R] [--cheerio PATH_TO_node_modules]
//
// Measures parsePage (payload digest, content-decoding, charset, extraction, URL normalization, text
// digest) in MB/s of decoded HTML on one core, over a corpus of HTML files (--dir: real pages on
// disk, e.g. saved crawl samples or local documentation) and/or built-in synthetic pages shaped like
// real ones (inline scripts and JSON, style, long navigation, entity-rich text). With --cheerio it
// also runs the same job with cheerio (load, a[href] resolved with URL, title, body text), the
// baseline the design brief compares against. Prints one table.

import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { gzipSync } from "node:zlib";
import { createRequire } from "node:module";
import { parsePage } from "../../dist/parse/parse-page.js";
import { extractPage } from "../../dist/parse/extract.js";
import { decodeTextChunks } from "../../dist/parse/charset.js";

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : process.argv[i + 1];
}

const rounds = Number(arg("rounds", "5"));
const maxFiles = Number(arg("files", "400"));
const minBytes = Number(arg("min-bytes", "1024"));

// Deterministic PRNG so runs compare.
let seed = 0x2545f491;
function rand() {
  seed ^= seed << 13;
  seed ^= seed >>> 17;
  seed ^= seed << 5;
  return (seed >>> 0) / 4294967296;
}
const pick = (xs) => xs[Math.floor(rand() * xs.length)];
const words = "the of and to in is for on with as by at from crawler page link index data news world time people year way day man thing woman life child school state family student group country problem hand part place case week company system program question work government number night point home water room mother area money story fact month lot right study book eye job word business issue side kind head house service friend father power hour game line end member law car city community name president team minute idea kid body information back parent face others level office door health person art war history party result change morning reason research girl guy moment air teacher force education".split(" ");
function sentence(n) {
  let s = "";
  for (let i = 0; i < n; i++) s += (i ? " " : "") + pick(words);
  return s;
}
function syntheticPage(targetBytes, i) {
  const parts = [];
  parts.push(`<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>${sentence(6)} &amp; ${sentence(3)} | Site ${i}</title>`);
  parts.push(`<meta name="viewport" content="width=device-width, initial-scale=1"><link rel="canonical" href="https://www.site${i % 50}.example/articles/${i}">`);
  for (let k = 0; k < 6; k++) parts.push(`<link rel="stylesheet" href="/static/css/app.${k}.${Math.floor(rand() * 1e9).toString(16)}.css">`);
  parts.push(`<style>${".c{margin:0;padding:0;color:#333} ".repeat(Math.floor(targetBytes / 400))}</style>`);
  // Inline JSON / scripts: a big share of modern pages.
  const state = JSON.stringify(Array.from({ length: Math.floor(targetBytes / 350) }, (_, k) => ({ id: k, title: sentence(5), url: `/item/${k}?ref=home&amp;x=${k}`, html: "<a href=\"/x\">x</a>" })));
  parts.push(`<script>window.__STATE__=${state};</script><script src="/static/js/main.js" async></script></head>`);
  parts.push(`<body class="page page-${i}"><header><nav class="nav">`);
  const links = 80 + Math.floor(rand() * 150);
  for (let k = 0; k < links; k++) {
    const kind = rand();
    const href =
      kind < 0.5 ? `/section/${pick(words)}/${Math.floor(rand() * 5000)}`
        : kind < 0.7 ? `https://www.site${Math.floor(rand() * 200)}.example/${pick(words)}?id=${Math.floor(rand() * 1e6)}&amp;utm_source=x`
          : kind < 0.8 ? `${pick(words)}.html#top`
            : kind < 0.85 ? "javascript:void(0)"
              : kind < 0.9 ? `//cdn.site${i % 7}.example/${pick(words)}`
                : `/tag/${pick(words)}`;
    parts.push(`<li class="nav-item nav-item-${k}" data-track="nav:${k}"><a class="nav-link" href="${href}"${rand() < 0.05 ? ' rel="nofollow noopener"' : ""} title="${sentence(3)}">${sentence(2)}</a></li>\n`);
  }
  parts.push(`</nav></header><main><article>`);
  let size = parts.reduce((n, p) => n + p.length, 0);
  while (size < targetBytes) {
    const p = `<p class="para">${sentence(30)} &mdash; <a href="/read/${Math.floor(rand() * 1e5)}">${sentence(3)}</a> ${sentence(20)}&nbsp;&hellip;</p>\n`;
    parts.push(p);
    size += p.length;
  }
  parts.push(`</article></main><footer>${sentence(10)} &copy; 2025</footer></body></html>`);
  return parts.join("");
}

function collectFiles(dir, out) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) collectFiles(p, out);
    else if (/\.html?$/i.test(e.name)) out.push(p);
  }
}

function corpusFromDir(dir) {
  const files = [];
  collectFiles(resolve(dir), files);
  // Deterministic sample across the tree.
  files.sort();
  const sized = files.filter((f) => {
    const size = statSync(f).size;
    return size >= minBytes && size < 5_000_000;
  });
  const step = Math.max(1, Math.floor(sized.length / maxFiles));
  const chosen = [];
  for (let i = 0; i < sized.length && chosen.length < maxFiles; i += step) chosen.push(readFileSync(sized[i]));
  return chosen;
}

function syntheticCorpus() {
  // Size mix roughly like the reference crawl (median ~140 KB, cut at 250 KB).
  const sizes = [20e3, 45e3, 80e3, 120e3, 140e3, 160e3, 200e3, 250e3];
  return sizes.flatMap((s, k) => [0, 1, 2].map((j) => Buffer.from(syntheticPage(s, k * 3 + j))));
}

const OPTIONS = { userAgentToken: "shardcrawl" };

function timeIt(pages, fn) {
  const bytes = pages.reduce((n, p) => n + p.decodedBytes, 0);
  fn(pages[0]); // warm-up
  for (const p of pages) fn(p);
  // CPU time of this process, not wall time: the number we want is per core, and it is far less
  // disturbed by other work on a shared machine. Best round wins.
  let best = Infinity;
  for (let r = 0; r < rounds; r++) {
    const c0 = process.cpuUsage();
    for (const p of pages) fn(p);
    const c = process.cpuUsage(c0);
    best = Math.min(best, (c.user + c.system) / 1000);
  }
  return { mbps: bytes / 1e6 / (best / 1000), pagesPerSec: pages.length / (best / 1000), bytes };
}

function loadCheerio() {
  const path = arg("cheerio", undefined);
  if (!path) return undefined;
  const require = createRequire(join(resolve(path), "noop.js"));
  return require("cheerio");
}

const corpora = [];
const dir = arg("dir", undefined);
if (dir) corpora.push([dir.split("/").filter(Boolean).slice(-2).join("/"), corpusFromDir(dir)]);
corpora.push(["synthetic", syntheticCorpus()]);
const cheerio = loadCheerio();

const rows = [];
for (const [name, bodies] of corpora) {
  if (bodies.length === 0) continue;
  const pages = bodies.map((body, i) => ({
    url: `https://www.site${i}.example/dir/page-${i}.html`,
    status: 200,
    headers: [["Content-Type", "text/html"]],
    body,
    decodedBytes: body.length,
  }));
  const gzPages = pages.map((p) => ({ ...p, headers: [["Content-Type", "text/html"], ["Content-Encoding", "gzip"]], body: gzipSync(p.body) }));
  const strings = pages.map((p) => ({ ...p, html: decodeTextChunks(p.body, "utf-8") }));
  const mean = pages.reduce((n, p) => n + p.decodedBytes, 0) / pages.length;
  const sample = parsePage(pages[0], OPTIONS);
  const linkCount = pages.reduce((n, p) => n + parsePage(p, OPTIONS).links.length, 0);
  rows.push([name, "pages", `${pages.length} (mean ${(mean / 1024).toFixed(0)} KB, ${(linkCount / pages.length).toFixed(0)} links/page)`]);
  const full = timeIt(pages, (p) => parsePage(p, OPTIONS));
  rows.push([name, "parsePage, identity", `${full.mbps.toFixed(1)} MB/s, ${full.pagesPerSec.toFixed(0)} pages/s`]);
  const gz = timeIt(gzPages, (p) => parsePage(p, OPTIONS));
  rows.push([name, "parsePage, gzip", `${gz.mbps.toFixed(1)} MB/s (decoded), ${gz.pagesPerSec.toFixed(0)} pages/s`]);
  const ex = timeIt(strings, (p) => extractPage(p.html, { pageUrl: p.url, userAgentToken: "shardcrawl" }));
  rows.push([name, "extractPage only", `${ex.mbps.toFixed(1)} MB/s (text already decoded)`]);
  if (cheerio) {
    const ch = timeIt(pages, (p) => {
      const $ = cheerio.load(p.body.toString("utf8"));
      const base = p.url;
      const out = new Set();
      $("a[href], area[href]").each((_, el) => {
        try {
          const u = new URL($(el).attr("href"), base);
          u.hash = "";
          if (u.protocol === "http:" || u.protocol === "https:") out.add(u.href);
        } catch {
          /* invalid */
        }
      });
      $("title").first().text();
      $("script, style, noscript, template").remove();
      $("body").text().replace(/\s+/g, " ");
    });
    rows.push([name, "cheerio equivalent", `${ch.mbps.toFixed(1)} MB/s -> parsePage is ${(full.mbps / ch.mbps).toFixed(1)}x`]);
  }
  void sample;
}

const width = Math.max(...rows.map((r) => r[0].length));
console.log(`node ${process.version}, best of ${rounds} rounds, MB (1e6 bytes of decoded HTML) per CPU-second`);
for (const [corpus, what, value] of rows) console.log(`${corpus.padEnd(width)}  ${what.padEnd(22)}  ${value}`);
