#!/usr/bin/env node
// Parse-stage benchmark: shardcrawl's full parse step (parsePage: payload digest, content decoding,
// charset, links + URL normalization, page facts, text digest) against cheerio (load + a[href],
// Crawlee's default parser) and parse5 (spec-compliant tree), side by side in one run, on
//   - the real-world pages shipped by the npm package htmlparser-benchmark, and
//   - simweb's size mix (fetched over loopback HTTP, cut at 250 KB like the reference crawl).
// Also checks that our links agree with a parse5 tree walk and lists every difference.
// Usage: node scripts/bench/parse.mjs [--mode quick|full] [--out FILE] [--ours-only (ours timed, links still checked)]
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import { request, Agent } from "node:http";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { mkdtempSync, rmSync } from "node:fs";
import { ROOT, RESULTS_DIR, args, benchRequire, median, startSimweb, writeResult, fmt } from "./common.mjs";

const { parsePage } = await import(join(ROOT, "packages/shardcrawl/dist/parse/parse-page.js"));
const { extractPage } = await import(join(ROOT, "packages/shardcrawl/dist/parse/extract.js"));
const { decodeTextChunks } = await import(join(ROOT, "packages/shardcrawl/dist/parse/charset.js"));
const { normalizeUrl } = await import(join(ROOT, "packages/shardcrawl/dist/url/normalize.js"));
const { World, makeConfig } = await import(join(ROOT, "packages/simweb/dist/index.js"));
const cheerio = benchRequire("cheerio");
const parse5 = benchRequire("parse5");
const htmlparser2 = createRequire(benchRequire.resolve("cheerio"))("htmlparser2");

const opts = args({ "ours-only": { type: "boolean", default: false } });
const FULL = opts.mode === "full";
const ROUNDS = FULL ? 9 : 3;
const SIMWEB_PAGES = FULL ? 400 : 120;
const CUT = 250 * 1024;
const OPTIONS = { userAgentToken: "shardcrawl" };

function realWorldCorpus() {
  const dir = join(benchRequire.resolve("htmlparser-benchmark/package.json"), "..", "files");
  return readdirSync(dir).filter((f) => f.endsWith(".html")).sort().map((f, i) => ({
    name: f,
    url: `https://www.site${i}.example/dir/page-${i}.html`,
    status: 200,
    headers: [["content-type", "text/html"]],
    body: readFileSync(join(dir, f)),
  }));
}

async function simwebCorpus() {
  const config = { preset: "polite", hosts: 1000, seed: 7 };
  const dir = mkdtempSync(join(tmpdir(), "bench-parse-"));
  const sim = await startSimweb(config, [], dir);
  try {
    const w = new World(makeConfig(config));
    const hosts = w.hosts();
    const urls = [];
    for (let i = 0; urls.length < SIMWEB_PAGES && i < 1e6; i++) {
      const h = hosts[i % hosts.length];
      const p = w.page(w.model(h.index), Math.floor(i / hosts.length) % h.pageCount);
      if (p.kind === "html" && !p.huge) urls.push({ host: h.name, path: p.path });
    }
    const agent = new Agent({ keepAlive: true, maxSockets: 8 });
    const get = (u) => new Promise((res, rej) => {
      const req = request({ host: "127.0.0.1", port: sim.http, path: u.path, agent, headers: { host: u.host, "user-agent": "shardcrawl-bench" }, timeout: 30_000 }, (r) => {
        const parts = [];
        let n = 0;
        r.on("data", (c) => { if (n < CUT) { parts.push(c); n += c.length; } });
        r.on("end", () => {
          const headers = Object.entries(r.headers).filter(([, v]) => typeof v === "string");
          res({ name: u.host + u.path, url: `http://${u.host}${u.path}`, status: r.statusCode, headers, body: Buffer.concat(parts).subarray(0, CUT) });
        });
        r.on("error", rej);
      });
      req.on("timeout", () => req.destroy(new Error("timeout")));
      req.on("error", rej);
      req.end();
    });
    const pages = [];
    for (let i = 0; i < urls.length; i += 8) pages.push(...(await Promise.all(urls.slice(i, i + 8).map(get))));
    agent.destroy();
    return pages.filter((p) => p.status === 200);
  } finally {
    await sim.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** CPU seconds of `fn` over all pages, per round; median of ROUNDS after one warm-up pass. */
function measure(pages, fn) {
  for (const p of pages) fn(p);
  const times = [];
  for (let r = 0; r < ROUNDS; r++) {
    const c0 = process.cpuUsage();
    for (const p of pages) fn(p);
    const c = process.cpuUsage(c0);
    times.push((c.user + c.system) / 1e6);
  }
  const bytes = pages.reduce((n, p) => n + p.body.length, 0);
  const t = median(times);
  return { cpuSeconds: t, rounds: times, mbPerCpuSecond: bytes / 1e6 / t, pagesPerCpuSecond: pages.length / t };
}

// --- the contenders -------------------------------------------------------------------------

const ours = (p) => parsePage(p, OPTIONS).links.length;

/** cheerio.load + a[href] resolved against the page (or its <base>), as Crawlee's enqueueLinks does. */
function cheerioLinksOf($, url) {
  const base = $("base[href]").attr("href");
  const out = new Set();
  $("a[href]").each((_, el) => {
    try {
      out.add(new URL($(el).attr("href"), base ? new URL(base, url) : url).href);
    } catch { /* invalid href */ }
  });
  return out.size;
}
/** cheerio's default load (parse5 backend for documents). */
const cheerioDefault = (p) => cheerioLinksOf(cheerio.load(p.body.toString("utf8")), p.url);
/** cheerio with htmlparser2, as CheerioCrawler loads it (_useHtmlParser2). */
const cheerioHp2 = (p) => cheerioLinksOf(cheerio.load(p.body.toString("utf8"), { _useHtmlParser2: true }), p.url);
/** What CheerioCrawler does per page (3.18 _parseHTML): parseDocument AND cheerio.load, then links. */
const crawleePage = (p) => {
  const body = p.body.toString("utf8");
  htmlparser2.parseDocument(body, { decodeEntities: true, xmlMode: false });
  return cheerioLinksOf(cheerio.load(body, { xmlMode: false, _useHtmlParser2: true }), p.url);
};

function walk(node, visit) {
  visit(node);
  for (const c of node.childNodes ?? []) walk(c, visit);
}
function attr(el, name) {
  return el.attrs?.find((a) => a.name === name)?.value;
}
/** parse5 tree (scripting off, so <noscript> content is markup as a non-scripting crawler sees it). */
function parse5Hrefs(html) {
  const doc = parse5.parse(html, { scriptingEnabled: false });
  let base;
  const hrefs = [];
  walk(doc, (n) => {
    if (n.tagName === "base" && base === undefined && attr(n, "href") !== undefined) base = attr(n, "href");
    if ((n.tagName === "a" || n.tagName === "area") && n.namespaceURI === "http://www.w3.org/1999/xhtml") {
      const h = attr(n, "href");
      if (h !== undefined) hrefs.push(h);
    }
  });
  return { base, hrefs };
}
const parse5Only = (p) => parse5Hrefs(p.body.toString("utf8")).hrefs.length;

// --- link agreement ----------------------------------------------------------------------------

function agreement(pages) {
  let same = 0, oursOnly = 0, parse5Only = 0, total = 0;
  const examples = [];
  for (const p of pages) {
    const html = decodeTextChunks(p.body, "utf-8").join("");
    const ex = extractPage(html, { pageUrl: p.url, honourNofollow: false, maxLinks: 1e6 });
    const mine = new Set(ex.links);
    const { base, hrefs } = parse5Hrefs(html);
    let baseUrl = p.url;
    if (base !== undefined) {
      try {
        const b = new URL(base, p.url);
        if (b.protocol === "http:" || b.protocol === "https:") baseUrl = b.href;
      } catch { /* unusable base is ignored */ }
    }
    const theirs = new Set();
    for (const h of hrefs) {
      const u = normalizeUrl(h, baseUrl);
      if (u !== null && u !== normalizeUrl(p.url)) theirs.add(u);
    }
    for (const u of mine) {
      total++;
      if (theirs.has(u)) same++;
      else { oursOnly++; if (examples.length < 12) examples.push({ page: p.name, side: "ours only", url: u }); }
    }
    for (const u of theirs) if (!mine.has(u)) { parse5Only++; total++; if (examples.length < 24) examples.push({ page: p.name, side: "parse5 only", url: u }); }
  }
  return { links: total, agree: same, oursOnly, parse5Only, examples };
}

// --- run -----------------------------------------------------------------------------------------

const corpora = [["htmlparser-benchmark (real pages)", realWorldCorpus()], ["simweb size mix, cut at 250 KB", await simwebCorpus()]];
const results = [];
for (const [name, pages] of corpora) {
  const bytes = pages.reduce((n, p) => n + p.body.length, 0);
  const links = pages.reduce((n, p) => n + ours(p), 0);
  const row = { corpus: name, pages: pages.length, meanKB: bytes / pages.length / 1024, linksPerPage: links / pages.length };
  // Interleaved in one run: ours, cheerio, parse5, ours again (drift shows as a gap between the two).
  row.shardcrawl = measure(pages, ours);
  if (opts["ours-only"]) {
    // The agreement is one untimed pass: a change to the extractor is checked without the peers' rounds.
    row.agreement = agreement(pages);
    process.stderr.write(`${name}: ours ${fmt(row.shardcrawl.mbPerCpuSecond)} MB/s (${fmt(row.shardcrawl.pagesPerCpuSecond, 0)} pages/s) rounds ${row.shardcrawl.rounds.map((t) => fmt(t, 3)).join(" ")}; links agree ${row.agreement.agree}/${row.agreement.links} (ours only ${row.agreement.oursOnly}, parse5 only ${row.agreement.parse5Only})\n`);
    results.push(row);
    continue;
  }
  row.cheerio = measure(pages, cheerioDefault);
  row.cheerioHtmlparser2 = measure(pages, cheerioHp2);
  row.crawleeCheerioPage = measure(pages, crawleePage);
  row.parse5 = measure(pages, parse5Only);
  const again = measure(pages, ours);
  row.shardcrawlRepeat = again;
  // Against the faster cheerio variant, so the ratio is never flattered.
  row.vsCheerio = row.shardcrawl.mbPerCpuSecond / Math.max(row.cheerio.mbPerCpuSecond, row.cheerioHtmlparser2.mbPerCpuSecond);
  row.vsParse5 = row.shardcrawl.mbPerCpuSecond / row.parse5.mbPerCpuSecond;
  row.agreement = agreement(pages);
  results.push(row);
  process.stderr.write(`${name}: ours ${fmt(row.shardcrawl.mbPerCpuSecond)} MB/s (${fmt(row.shardcrawl.pagesPerCpuSecond, 0)} pages/s), cheerio ${fmt(row.cheerio.mbPerCpuSecond)} / hp2 ${fmt(row.cheerioHtmlparser2.mbPerCpuSecond)} / crawlee ${fmt(row.crawleeCheerioPage.mbPerCpuSecond)} MB/s, parse5 ${fmt(row.parse5.mbPerCpuSecond)} MB/s -> ${fmt(row.vsCheerio)}x cheerio; links agree ${row.agreement.agree}/${row.agreement.links}\n`);
}
writeResult(opts.out ?? join(RESULTS_DIR, `parse-${opts.mode}.json`), { bench: "parse", mode: opts.mode, rounds: ROUNDS, command: `node scripts/bench/parse.mjs --mode ${opts.mode}`, results });
