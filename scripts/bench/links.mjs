#!/usr/bin/env node
// Per-link cost on the real corpus (htmlparser-benchmark's pages): what each stage of a link's way
// from an href to the frontier costs, in microseconds of CPU per link, each stage measured alone
// over the same links: normalization (resolve + canonical form), scope (host + registrable domain),
// URL filters (the node's default chain), priority tier, Bloom hashing, client encoding (packLinks:
// the script's argument layout), and Redis (the add_links script on a real redis-server: the
// server's CPU from /proc and the client's round trip, for new links and for links already seen).
// Usage: node scripts/bench/links.mjs [--mode quick|full] [--out FILE]
import { readFileSync, readdirSync, mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { tmpdir } from "node:os";
import { ROOT, RESULTS_DIR, args, benchRequire, median, startRedisServer, writeResult, fmt, crawlerRequire } from "./common.mjs";

const dist = (p) => import(join(ROOT, "packages/shardcrawl/dist", p));
const { normalizeUrl, hostOf } = await dist("url/normalize.js");
const { registrableDomain } = await dist("url/scope.js");
const { buildUrlFilters, filterUrl } = await dist("admit/trap-filters.js");
const { UrlPrioritizer } = await dist("schedule/priority.js");
const { BloomHasher, bloomParamsFor } = await dist("frontier/bloom.js");
const { packLinks } = await dist("frontier/links.js");
const { Frontier } = await dist("frontier/frontier.js");
const { defaultConfig } = await dist("node/config.js").catch(() => ({}));
const extra = await import(join(ROOT, "packages/shardcrawl/dist/frontier/seen-cache.js")).catch(() => undefined);
const parse5 = benchRequire("parse5");
const { Redis } = crawlerRequire("ioredis");

const opts = args();
const ROUNDS = opts.mode === "full" ? 9 : 5;

// --- the corpus: raw hrefs per page (parse5 walk, as the parse bench's agreement check) --------
function walk(node, visit) {
  visit(node);
  for (const c of node.childNodes ?? []) walk(c, visit);
}
const dir = join(benchRequire.resolve("htmlparser-benchmark/package.json"), "..", "files");
const pages = readdirSync(dir).filter((f) => f.endsWith(".html")).sort().map((f, i) => {
  const doc = parse5.parse(readFileSync(join(dir, f), "utf8"), { scriptingEnabled: false });
  const hrefs = [];
  walk(doc, (n) => {
    if ((n.tagName === "a" || n.tagName === "area") && n.attrs) {
      const h = n.attrs.find((a) => a.name === "href")?.value;
      if (h !== undefined) hrefs.push(h);
    }
  });
  return { url: `https://www.site${i}.example/dir/page-${i}.html`, hrefs };
});
const hrefCount = pages.reduce((n, p) => n + p.hrefs.length, 0);
// Normalized, de-duplicated per page (what the parser hands on), for the later stages.
for (const p of pages) p.links = [...new Set(p.hrefs.map((h) => normalizeUrl(h, p.url)).filter((u) => u !== null))];
const linkCount = pages.reduce((n, p) => n + p.links.length, 0);

/** CPU microseconds per item of `fn` over the corpus: median of ROUNDS after a warm-up. */
function perItem(items, fn) {
  fn();
  const t = [];
  for (let r = 0; r < ROUNDS; r++) {
    const c0 = process.cpuUsage();
    fn();
    const c = process.cpuUsage(c0);
    t.push((c.user + c.system) / items);
  }
  return median(t);
}

const rows = [];
const row = (stage, us, per, note) => {
  rows.push({ stage, usPerLink: us, per, note });
  process.stderr.write(`${stage.padEnd(44)} ${fmt(us, 3).padStart(8)} us per ${per}\n`);
};

let sink = 0;
row("normalization (resolve + canonical form)", perItem(hrefCount, () => {
  for (const p of pages) for (const h of p.hrefs) sink += normalizeUrl(h, p.url)?.length ?? 0;
}), "raw href", "normalizeUrl(href, pageUrl): WHATWG URL (Ada) + percent-encoding + fragment/credentials");
row("host of a normalized URL", perItem(linkCount, () => {
  for (const p of pages) for (const u of p.links) sink += hostOf(u)?.length ?? 0;
}), "link");
row("scope: registrable domain (tldts)", perItem(linkCount, () => {
  for (const p of pages) for (const u of p.links) sink += registrableDomain(hostOf(u) ?? "").length;
}), "link", "hostOf + tldts getDomain, no memo");
{
  const { ScopeFilter, buildAdmissionChain } = await dist("admit/index.js");
  const keys = [...new Set(pages.map((p) => registrableDomain(hostOf(p.url))))];
  const scope = new ScopeFilter({ mode: "domains", keys });
  row("scope as the parser runs it (per-host memo)", perItem(linkCount, () => {
    for (const p of pages) for (const u of p.links) sink += scope.allowsHost(hostOf(u) ?? "") ? 1 : 0;
  }), "link", "hostOf + memo of the host's answer (admit/scope-filter.ts)");
  // The parser's part of the admission chain: the same scope filter behind the chain's interface,
  // refusals counted, one check in 256 timed.
  const chain = buildAdmissionChain([new ScopeFilter({ mode: "domains", keys })]);
  row("admission chain as the parser runs it (scope)", perItem(linkCount, () => {
    for (const p of pages) for (const u of p.links) sink += chain.check(u, hostOf(u) ?? "") ? 1 : 0;
  }), "link", "hostOf + AdmissionChain.check: counted, sampled timing (admit/chain.ts)");
}
if (extra?.SeenCache) {
  const cache = new extra.SeenCache();
  for (const p of pages) for (const u of p.links) cache.remember(u);
  row("seen cache lookup (URL known seen)", perItem(linkCount, () => {
    for (const p of pages) for (const u of p.links) sink += cache.has(u) ? 1 : 0;
  }), "link", "frontier/seen-cache.ts: a known link skips hashing, encoding and Redis");
}
const filters = buildUrlFilters(defaultConfig?.().urlFilters ?? ["max-path-depth=32", "max-repeated-segment=4", "max-query-params=12"]);
row("URL filters (the node's default chain)", perItem(linkCount, () => {
  for (const p of pages) for (const u of p.links) sink += filterUrl(filters, u) ? 1 : 0;
}), "link");
const prio = new UrlPrioritizer([]);
row("priority tier (heuristic)", perItem(linkCount, () => {
  for (const p of pages) for (const u of p.links) sink += prio.tier(u, 2);
}), "link");
const bloom = bloomParamsFor({ expectedUrls: 1_000_000, falsePositiveRate: 0.01 });
const hasher = new BloomHasher(bloom);
row("Bloom hashing (MD5 + k positions)", perItem(linkCount, () => {
  for (const p of pages) for (const u of p.links) sink += hasher.positions(u)[0];
}), "link", `k = ${bloom.k}`);
// The links as the parser hands them to the frontier (hashed).
const hashedPages = pages.map((p) => p.links.map((url) => ({ url, host: hostOf(url), tier: prio.tier(url, 2), depth: 2, hops: 0, bloom: hasher.positions(url) })).filter((l) => l.host));
const caps = { maxQueuedPerHost: 1_000_000, maxQueuedTotal: 100_000_000 };
row("client encoding (packLinks: records + text)", perItem(linkCount, () => {
  for (const links of hashedPages) sink += packLinks(links, hasher, bloom, caps).count;
}), "link", "the add_links argument layout, one call per page");

// --- Redis: add_links per page on a real redis-server (AOF everysec, as a node runs it) ----------
const work = mkdtempSync(join(tmpdir(), "bench-links-"));
const redis = await startRedisServer(join(work, "redis"));
const client = new Redis(redis.url, { maxRetriesPerRequest: 1 });
const redisRows = [];
try {
  const frontier = await Frontier.open(client, { prefix: "lb:", bloom: { expectedUrls: 1_000_000, falsePositiveRate: 0.01 }, delayMs: 100 });
  const pass = async (label) => {
    const s0 = redis.cpu();
    const c0 = process.cpuUsage();
    let added = 0, seen = 0;
    for (const links of hashedPages) {
      const r = await frontier.addLinks(links);
      added += r.added;
      seen += r.seen;
    }
    const c = process.cpuUsage(c0);
    const server = ((redis.cpu() - s0) * 1e6) / linkCount;
    const clientUs = (c.user + c.system) / linkCount;
    redisRows.push({ label, added, seen, serverUsPerLink: server, clientUsPerLink: clientUs });
    process.stderr.write(`redis ${label}: server ${fmt(server, 2)} us/link, client ${fmt(clientUs, 2)} us/link (added ${added}, seen ${seen})\n`);
  };
  // First pass: every link new; later passes: every link already seen (the common case in a crawl).
  // /proc CPU has 10 ms ticks: several passes over the corpus make the figure steady.
  await pass("new links (first time)");
  for (let i = 0; i < 3; i++) await pass("links already seen");
} finally {
  client.disconnect();
  await redis.stop();
  rmSync(work, { recursive: true, force: true });
}
const seenRows = redisRows.filter((r) => r.label.startsWith("links already"));
row("Redis add_links, new link: redis-server CPU", redisRows[0].serverUsPerLink, "link", "Bloom test-and-set + queue push + host state");
row("Redis add_links, seen link: redis-server CPU", median(seenRows.map((r) => r.serverUsPerLink)), "link", "Bloom test only");
row("Redis add_links, seen link: client CPU (ioredis + packLinks)", median(seenRows.map((r) => r.clientUsPerLink)), "link");

writeResult(opts.out ?? join(RESULTS_DIR, `links-${opts.mode}.json`), {
  bench: "links", mode: opts.mode, rounds: ROUNDS, command: `node scripts/bench/links.mjs --mode ${opts.mode}`,
  corpus: "htmlparser-benchmark", pages: pages.length, hrefs: hrefCount, links: linkCount, linksPerPage: linkCount / pages.length, hrefsPerPage: hrefCount / pages.length,
  rows, redis: redisRows, sink: sink > 0,
});
