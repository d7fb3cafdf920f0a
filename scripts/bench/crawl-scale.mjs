#!/usr/bin/env node
// A whole crawl at scale: one node crawls simweb with 10^5 hosts (full; quick: 10^4) while its
// frontier grows by decades from 10^4 to 10^7 URLs (quick: 10^5). Crawling alone would need ~10^6
// pages to discover 10^7 URLs (hours on this machine), so each decade is reached by restarting the
// node on the same output folder with simweb page URLs as extra seeds; it then crawls a window of
// pages at that size (pages carry real pages' link counts, simweb outDegreeFrom "real"). Every few
// seconds it samples the CPU seconds and resident memory of every process of the node
// (supervisor, fetchers, parsers, redis-server) and Redis's memory. CPU per page per decade shows
// whether the per-page cost stays flat as the frontier grows; on a shared machine read the ratios
// between decades, not the speeds.
// Usage: node scripts/bench/crawl-scale.mjs [--mode quick|full] [--out FILE] [--samples FILE]
import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import {
  ROOT, RESULTS_DIR, SHARDCRAWL_CLI, args, benchRequireRoot, descendants, fmt, procCmd, procCpu, procRss, startRedisServer, startSimweb, writeResult,
} from "./common.mjs";

const opts = args({ samples: { type: "string" }, "target-urls": { type: "string" }, window: { type: "string" }, hosts: { type: "string" }, "seed-hosts": { type: "string" } });
const FULL = opts.mode === "full";
const HOSTS = Number(opts.hosts ?? (FULL ? 100_000 : 10_000));
const TARGET = Number(opts["target-urls"] ?? (FULL ? 1e7 : 1e5));
// Seeds are a tenth of the hosts' home pages: the frontier starts near 10^4 and the other hosts
// are discovered through cross-host links (--scope any).
const SEED_HOSTS = Number(opts["seed-hosts"] ?? Math.min(10_000, HOSTS / 10));
const DECADES = [1e4, 1e5, 1e6, 1e7].filter((d) => d <= TARGET);
/** Pages measured at each decade (after a fifth as many more for start-up). */
const WINDOW = Number(opts.window ?? (FULL ? 2000 : 1000));
const SAMPLE_MS = 3000;
const work = mkdtempSync(join(tmpdir(), "bench-crawl-scale-"));
const samplesFile = opts.samples ?? join(work, "samples.jsonl");
writeFileSync(samplesFile, "");

function roleOf(pid, redisPid) {
  if (pid === redisPid) return "redis";
  const script = procCmd(pid).find((x) => x.endsWith(".js"))?.split("/").pop() ?? "";
  if (script === "main.js") return "supervisor";
  if (script.startsWith("fetcher")) return "fetcher";
  if (script.startsWith("parser")) return "parser";
  return procCmd(pid)[0]?.split("/").pop() || "other";
}

const SIM_CONFIG = { preset: "polite", hosts: HOSTS, seed: 17, httpsShare: 0, outDegreeFrom: "real" };
const sim = await startSimweb(SIM_CONFIG, [], join(work, "simweb"));
const seeds = join(work, "seeds.txt");
const redis = await startRedisServer(join(work, "redis"));
const { World, makeConfig } = await import(join(ROOT, "packages/simweb/dist/index.js"));
const world = new World(makeConfig(SIM_CONFIG));

/**
 * Page URLs of simweb in a fixed order (page id j of every host that has one, j = 1, 2, ...): the
 * seeds that bring the frontier to the next decade. Home pages (id 0) are the first segment's seeds.
 */
function* pageUrls() {
  const n = world.hostCount();
  for (let j = 1; ; j++) {
    let any = false;
    for (let i = 0; i < n; i++) {
      const h = world.model(i);
      if (j < h.info.pageCount) { any = true; yield world.pageUrl(h, j); }
    }
    if (!any) return;
  }
}
const urlGen = pageUrls();

/**
 * Adds `n` simweb page URLs to the stopped node's frontier through the frontier's own batch
 * admission (seeds through the crawl command go one by one: hours for 10^7 on this machine).
 */
async function preload(n) {
  const { Frontier } = await import(join(ROOT, "packages/shardcrawl/dist/frontier/index.js"));
  const { Redis } = benchRequireRoot("ioredis");
  const r = new Redis({ port: redis.port, host: "127.0.0.1", enableAutoPipelining: true, maxRetriesPerRequest: null, commandTimeout: 600_000 });
  // The filter's parameters are the node's, stored by its first start.
  const frontier = await Frontier.open(r, { prefix: "sc:" });
  let added = 0;
  while (added < n) {
    const batch = [];
    for (let i = 0; i < 5000; i++) {
      const u = urlGen.next();
      if (u.done) break;
      batch.push({ url: u.value, host: new URL(u.value).hostname, tier: 1, depth: 1, hops: 0 });
    }
    if (!batch.length) break;
    added += (await frontier.addLinks(batch, { kind: "seeds" })).added;
  }
  // The node's counters (seeds + discovered = frontier size) include what was added here.
  await r.hincrby("sc:stats", "seeds", added);
  r.disconnect();
}

const perPid = new Map();
const samples = [];
const redis0 = redis.cpu();
let crawl;
let t0 = Date.now();

async function sample(segment) {
  for (const pid of [crawl.pid, ...descendants(crawl.pid), redis.pid]) {
    const c = procCpu(pid);
    if (!c) continue;
    const p = perPid.get(pid) ?? { role: roleOf(pid, redis.pid), cpu: 0, rss: 0, peak: 0 };
    p.cpu = c.self - (pid === redis.pid ? redis0 : 0);
    p.rss = procRss(pid);
    p.peak = Math.max(p.peak, p.rss);
    perPid.set(pid, p);
  }
  // An exited process keeps its last CPU figure, so the sums never go back.
  const cpu = {}, rss = {};
  for (const [pid, p] of perPid) {
    cpu[p.role] = (cpu[p.role] ?? 0) + p.cpu;
    if (procCpu(pid)) rss[p.role] = (rss[p.role] ?? 0) + p.rss / 1e6;
  }
  const stats = await redis.client.hgetall("sc:stats").catch(() => ({}));
  const info = await redis.client.info("memory").catch(() => "");
  const s = {
    segment, elapsedS: (Date.now() - t0) / 1000, load1: loadavg()[0], cpu, rssMB: rss,
    redisUsedMB: Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN) / 1e6, redisRssMB: Number(/used_memory_rss:(\d+)/.exec(info)?.[1] ?? NaN) / 1e6,
    fetched: Number(stats.fetched ?? 0), frontier: Number(stats.seeds ?? 0) + Number(stats.discovered ?? 0), discovered: Number(stats.discovered ?? 0),
    duplicates: Number(stats.duplicates ?? 0), parsed: Number(stats.parsed ?? 0),
  };
  samples.push(s);
  appendFileSync(samplesFile, JSON.stringify(s) + "\n");
  return s;
}

const total = (s) => Object.values(s.cpu).reduce((n, c) => n + c, 0);
const windows = [];
let last = { frontier: 0, fetched: 0 };
/**
 * One segment per decade: the node is (re)started on the same output folder with seeds that bring
 * its frontier to the decade, crawls WINDOW pages there, and is stopped. CPU per page is taken over
 * the segment's pages after its first fifth (start-up and seed loading left out).
 */
for (const [k, size] of DECADES.entries()) {
  if (k === 0) writeFileSync(seeds, world.seeds(SEED_HOSTS).join("\n") + "\n");
  else await preload(size - last.frontier);
  const argv = [
    SHARDCRAWL_CLI, "crawl", "--seeds", seeds, "--out", join(work, "crawl"), "--redis", redis.url, "--progress", "off",
    "--scope", "any", "--delay", "1000", "--max-page-bytes", String(250 * 1024), "--allow-private", "--ca-file", sim.ca,
    "--user-agent", "shardcrawl-bench/0.1 (+https://github.com/shardcrawl/shardcrawl)",
    "--connect-to", `:80:127.0.0.1:${sim.http}`, "--connect-to", `:443:127.0.0.1:${sim.https}`,
    "--expected-urls", String(TARGET),
    // WARC files are deleted once closed: 10^5 pages of simweb's sizes would otherwise fill the disk.
    "--on-file-closed", "true", "--delete-shipped", "--warc-max-file-bytes", String(256 << 20),
  ];
  crawl = spawn(process.execPath, argv, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  crawl.stderr.on("data", (b) => { stderr = (stderr + b).slice(-20_000); });
  let exited = null;
  crawl.once("exit", (c, s) => { exited = c ?? s; });
  const startFetched = last.fetched;
  let first;
  for (;;) {
    await new Promise((r) => setTimeout(r, SAMPLE_MS));
    last = await sample(k);
    const done = last.fetched - startFetched;
    if (!first && done >= WINDOW / 5) first = last;
    if (exited !== null || done >= WINDOW + WINDOW / 5) break;
    if (samples.length % 20 === 0) process.stderr.write(`crawl-scale segment ${size}: ${fmt(last.elapsedS, 0)} s, ${last.fetched} pages, frontier ${last.frontier} URLs, redis ${fmt(last.redisUsedMB, 0)} MB, load ${fmt(last.load1)}\n`);
  }
  if (exited === null) {
    crawl.kill("SIGTERM");
    await Promise.race([new Promise((r) => crawl.once("exit", r)), new Promise((r) => setTimeout(r, 300_000))]);
    if (crawl.exitCode === null) crawl.kill("SIGKILL");
  } else {
    process.stderr.write(`segment ${size}: crawl ended early (${exited}): ${stderr.slice(-2000)}\n`);
  }
  if (first && last.fetched > first.fetched) {
    const pages = last.fetched - first.fetched;
    windows.push({
      size, frontierFrom: first.frontier, frontierTo: last.frontier, pages, cpuMsPerPage: ((total(last) - total(first)) / pages) * 1000,
      msPerPageByRole: Object.fromEntries(Object.keys(last.cpu).map((r) => [r, (((last.cpu[r] ?? 0) - (first.cpu[r] ?? 0)) / pages) * 1000])),
      linksNewPerPage: (last.discovered - first.discovered) / Math.max(1, last.parsed - first.parsed),
      duplicatesPerPage: (last.duplicates - first.duplicates) / Math.max(1, last.parsed - first.parsed),
      rssMB: last.rssMB, redisUsedMB: last.redisUsedMB, load1: last.load1,
    });
    save();
  }
}
await redis.stop();
await sim.stop();

function save() {
  const base = windows[0];
  for (const w of windows) w.vsFirst = w.cpuMsPerPage / base.cpuMsPerPage;
  const peakRssMB = {};
  for (const p of perPid.values()) peakRssMB[p.role] = Math.max(peakRssMB[p.role] ?? 0, p.peak / 1e6);
  writeResult(opts.out ?? join(RESULTS_DIR, `crawl-scale-${opts.mode}.json`), {
    bench: "crawl-scale", mode: opts.mode, hosts: HOSTS, seedHosts: SEED_HOSTS, targetUrls: TARGET, window: WINDOW,
    reached: { frontier: last.frontier, fetched: last.fetched, elapsedS: last.elapsedS, redisUsedMB: last.redisUsedMB },
    windows, peakRssMB, samplesFile: opts.samples ? samplesFile : undefined,
    // Every 10th sample kept in the result, for a chart of memory and CPU through the run.
    trace: samples.filter((_, j) => j % 10 === 0),
    command: `node scripts/bench/crawl-scale.mjs --mode ${opts.mode}`,
  });
}
for (const w of windows) process.stderr.write(`frontier ${w.size}: ${fmt(w.cpuMsPerPage, 2)} ms CPU/page (x${fmt(w.vsFirst, 2)} of the first) over ${w.pages} pages; ${JSON.stringify(Object.fromEntries(Object.entries(w.msPerPageByRole ?? {}).map(([r, v]) => [r, +v.toFixed(2)])))}\n`);
if (!opts.samples) rmSync(work, { recursive: true, force: true });
else rmSync(join(work, "crawl"), { recursive: true, force: true });
process.exit(0);
