#!/usr/bin/env node
// Bytes the robots.txt cache stores per origin, whole file vs the trimmed copy the fetcher caches
// (fetch/robots-trim.ts), over crawl-scale.mjs's simweb world (by robots kind) and the real web
// bench's file. Counts bytes of the stored JSON value (what Redis holds besides per-key overhead);
// the load on the machine does not change them.
// Usage: node scripts/bench/robots-cache-bytes.mjs [--hosts N] [--ua "shardcrawl/0.1 (+...)"]
import { join } from "node:path";
import { BENCH_UA, ROOT, args } from "./common.mjs";

const opts = args({ hosts: { type: "string" }, ua: { type: "string" } });
const HOSTS = Number(opts.hosts ?? 100_000);
const UA = opts.ua ?? BENCH_UA;
const { World, makeConfig, RealWeb } = await import(join(ROOT, "packages/simweb/dist/index.js"));
const { trimRobotsBody } = await import(join(ROOT, "packages/shardcrawl/dist/fetch/robots-trim.js"));
const { ROBOTS_MAX_BYTES } = await import(join(ROOT, "packages/shardcrawl/dist/fetch/robots.js"));
const world = new World(makeConfig({ preset: "polite", hosts: HOSTS, seed: 17, httpsShare: 0, outDegreeFrom: "real" }));

/** The text the fetch keeps: 500 KiB at most, the cut line dropped (fetch/robots.ts robotsText). */
function fetched(text) {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= ROBOTS_MAX_BYTES) return text;
  const body = new TextDecoder("utf-8").decode(buf.subarray(0, ROBOTS_MAX_BYTES));
  const lastBreak = Math.max(body.lastIndexOf("\n"), body.lastIndexOf("\r"));
  return lastBreak === -1 ? "" : body.slice(0, lastBreak + 1);
}
const stored = (body) => Buffer.byteLength(JSON.stringify({ kind: "rules", body, fetchedAt: 1764700000000, fresh: 1764786400000 }));

const byKind = {};
let whole = 0, trimmed = 0, files = 0;
for (let i = 0; i < HOSTS; i++) {
  const h = world.model(i);
  if (world.robots.disallowsAll(h)) continue;
  const text = world.robots.text(h);
  if (text === null) continue;
  const body = fetched(text);
  const a = stored(body), b = stored(trimRobotsBody(body, UA));
  const k = (byKind[h.info.robots] ??= { files: 0, whole: 0, trimmed: 0 });
  k.files++; k.whole += a; k.trimmed += b;
  whole += a; trimmed += b; files++;
}
const real = RealWeb.prototype.robots.call(undefined);
const rows = Object.entries(byKind).map(([kind, k]) => ({ kind, files: k.files, wholeBytesPerOrigin: Math.round(k.whole / k.files), trimmedBytesPerOrigin: Math.round(k.trimmed / k.files) }));
rows.push({ kind: "realweb (every host)", files: 1, wholeBytesPerOrigin: stored(real), trimmedBytesPerOrigin: stored(trimRobotsBody(real, UA)) });
console.table(rows);
console.log(JSON.stringify({ hosts: HOSTS, files, wholeMB: whole / 1e6, trimmedMB: trimmed / 1e6, ratio: trimmed / whole }));
