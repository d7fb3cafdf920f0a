#!/usr/bin/env node
// The fetch layer alone, kept-alive vs a new connection per page: the GET loop of undici-floor.mjs
// over the real-page web, through a bare undici Agent and through the crawler's HTTP client (the
// build at --dist, default this checkout's, and each --compare DIST: other builds'
// packages/shardcrawl/dist), against two copies of `simweb realweb`, one answering "Connection: close". Runs alternate (ABBA), so load
// drifts hit every variant alike; prints CPU ms per page, medians per variant, and the connections
// and resumed TLS sessions each loop counted.
// Usage: node scripts/bench/fetch-connections.mjs [--dist DIST] [--scheme https] [--pages 3000] [--reps 5] [--compare DIST[,DIST]] [--clients undici,shardcrawl]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, SIMWEB_CLI, args, benchRequire, fmt, median, spawnServer, writeResult } from "./common.mjs";

const opts = args({ scheme: { type: "string", default: "https" }, pages: { type: "string", default: "3000" }, reps: { type: "string", default: "5" }, compare: { type: "string" }, clients: { type: "string", default: "undici,shardcrawl" }, dist: { type: "string", default: join(ROOT, "packages/shardcrawl/dist") } });
const HOSTS = 66;
const CUT = 250 * 1024;
const work = mkdtempSync(join(tmpdir(), "bench-fetch-conn-"));
const corpus = join(benchRequire.resolve("htmlparser-benchmark/package.json"), "..", "files");

async function realweb(close) {
  const dir = join(work, close ? "close" : "keep");
  return spawnServer([SIMWEB_CLI, "realweb", "--corpus", corpus, "--hosts", String(HOSTS), "--ca-dir", join(work, "ca"), ...(close ? ["--connection-close"] : [])], dir);
}

// Round robin over the hosts, as a crawl of many hosts visits them.
const urls = Array.from({ length: Number(opts.pages) }, (_, i) => `${opts.scheme}://www.real${i % HOSTS}.test/page/${Math.floor(i / HOSTS)}`);
const urlFile = join(work, "urls.json");
writeFileSync(urlFile, JSON.stringify(urls));

const variants = [];
for (const c of opts.clients.split(",")) {
  if (c === "undici") variants.push({ name: "undici", args: ["--client", "undici"] });
  if (c === "shardcrawl") {
    variants.push({ name: "shardcrawl", args: ["--client", "shardcrawl", "--client-dist", opts.dist] });
    for (const [i, d] of (opts.compare ?? "").split(",").filter(Boolean).entries()) variants.push({ name: `shardcrawl-compare${i + 1}`, args: ["--client", "shardcrawl", "--client-dist", d] });
  }
}

const sims = { kept: await realweb(false), new: await realweb(true) };
const results = {};
const loop = (sim, variantArgs) => spawnSync(process.execPath, [join(ROOT, "scripts/bench/undici-floor.mjs"), "--urls", urlFile, "--ip", "127.0.0.1", "--http", String(sim.http), "--https", String(sim.https), "--ca", sim.ca, "--cut", String(CUT), ...variantArgs], { encoding: "utf8" });
try {
  // Untimed: the web renders and compresses each page on its first request.
  for (const sim of Object.values(sims)) loop(sim, ["--client", "undici"]);
  const order = variants.flatMap((v) => ["kept", "new"].map((m) => ({ ...v, mode: m, key: `${v.name} ${m}` })));
  for (let i = 0; i < Number(opts.reps); i++) {
    for (const v of i % 2 ? [...order].reverse() : order) {
      const sim = sims[v.mode];
      const r = loop(sim, v.args);
      if (r.status !== 0) throw new Error(`${v.key}: ${r.stderr}`);
      const x = JSON.parse(r.stdout.trim().split("\n").pop());
      x.load = loadavg()[0];
      (results[v.key] ??= []).push(x);
      process.stderr.write(`${v.key} ${i} (load ${x.load.toFixed(2)}): ${fmt(x.cpuMsPerPage, 3)} ms/page, ${x.pages} pages (${x.failed} failed${x.failures ? `: ${JSON.stringify(x.failures)}` : ""}), ${x.connections} connections, TLS ${x.tlsFull} full + ${x.tlsResumed} resumed, ${fmt(x.pagesPerSecond)} pages/s\n`);
    }
  }
} finally {
  await sims.kept.stop();
  await sims.new.stop();
}
const summary = {};
for (const [k, rs] of Object.entries(results)) {
  summary[k] = { cpuMsPerPage: median(rs.map((r) => r.cpuMsPerPage)), connectionsPerPage: median(rs.map((r) => r.connections / r.pages)), tlsResumed: median(rs.map((r) => r.tlsResumed)), tlsFull: median(rs.map((r) => r.tlsFull)) };
  process.stderr.write(`${k}: median ${fmt(summary[k].cpuMsPerPage, 3)} ms/page, ${fmt(summary[k].connectionsPerPage, 3)} connections/page, TLS ${summary[k].tlsFull} full / ${summary[k].tlsResumed} resumed\n`);
}
for (const v of variants) {
  const k = summary[`${v.name} kept`], n = summary[`${v.name} new`];
  if (k && n) process.stderr.write(`${v.name}: new connection minus kept-alive ${fmt(n.cpuMsPerPage - k.cpuMsPerPage, 3)} ms/page (ratio ${fmt(n.cpuMsPerPage / k.cpuMsPerPage, 2)})\n`);
}
if (opts.out) writeResult(opts.out, { bench: "fetch-connections", scheme: opts.scheme, pages: urls.length, reps: Number(opts.reps), compare: opts.compare, summary, results });
rmSync(work, { recursive: true, force: true });
