#!/usr/bin/env node
// A whole crawl at scale: one node crawls simweb with 10^5 hosts (full; quick: 10^4) while its
// frontier grows by decades from 10^4 to 10^7 URLs (quick: 10^5). Crawling alone would need ~10^6
// pages to discover 10^7 URLs (hours on this machine), so each decade is reached by restarting the
// node on the same output folder with simweb page URLs as extra seeds; it then crawls a window of
// pages at that size (pages carry real pages' link counts, simweb outDegreeFrom "real"). Every few
// seconds it samples the CPU seconds and resident memory of every process of the node
// (supervisor, fetchers, parsers, redis-server) and Redis's memory. CPU per page per decade shows
// whether the per-page cost stays flat as the frontier grows; on a shared machine read the ratios
// between decades, not the speeds. Like is compared with like: every host's robots.txt is in the
// robots cache before the first decade (--warm-robots), so no decade's window is made of first
// visits to new hosts; what each window did is counted from simweb's request log (pages, first
// pages of a host, robots.txt requests, failures, new connections) and CPU is given per page and
// per HTTP request, by process. A long run must not die silently: progress lines go to a file
// (--progress), every sample to --samples, the result is rewritten after each decade, a decade
// that fails is recorded in "problems" and the run goes on, and --max-minutes (or a signal) ends
// the run with the decades measured so far.
// Usage: node scripts/bench/crawl-scale.mjs [--mode quick|full] [--out FILE] [--samples FILE]
//          [--progress FILE] [--max-minutes N] [--segment-minutes N] [--window PAGES]
//          [--hosts N] [--target-urls N] [--seed-hosts N] [--unserved exclude|crawl] [--warm-robots model|http|off]
import { spawn } from "node:child_process";
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import {
  BENCH_UA, ROOT, RESULTS_DIR, SHARDCRAWL_CLI, args, benchRequireRoot, fmt, nodeCpuSampler, startRedisServer, startSimweb, writeResult,
} from "./common.mjs";

const opts = args({
  samples: { type: "string" }, "target-urls": { type: "string" }, window: { type: "string" }, hosts: { type: "string" }, "seed-hosts": { type: "string" },
  "max-minutes": { type: "string" }, "segment-minutes": { type: "string" }, progress: { type: "string" }, unserved: { type: "string", default: "exclude" },
  "warm-robots": { type: "string", default: "model" },
});
if (opts.unserved !== "exclude" && opts.unserved !== "crawl") throw new Error(`--unserved must be exclude or crawl, got ${opts.unserved}`);
if (!["model", "http", "off"].includes(opts["warm-robots"])) throw new Error(`--warm-robots must be model, http or off, got ${opts["warm-robots"]}`);
const WARM = opts["warm-robots"];
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
/** The whole run stops here (partial results kept): a long run must end in time on a shared machine. */
const MAX_MS = Number(opts["max-minutes"] ?? (FULL ? 90 : 20)) * 60_000;
/** A segment that has not crawled its window by then is ended with the pages it has. */
const SEGMENT_MS = Number(opts["segment-minutes"] ?? (FULL ? 12 : 5)) * 60_000;
const tStart = Date.now();
const work = mkdtempSync(join(tmpdir(), "bench-crawl-scale-"));
const samplesFile = opts.samples ?? join(work, "samples.jsonl");
writeFileSync(samplesFile, "");
/** Progress lines (timestamped) for a run nobody watches: appended as it goes, never lost with the run. */
const progressFile = opts.progress ?? join(work, "progress.log");
function progress(line) {
  const l = `${new Date().toISOString().slice(11, 19)}Z ${line}`;
  process.stderr.write(`crawl-scale ${l}\n`);
  try { appendFileSync(progressFile, `${l}\n`); } catch { /* the run goes on without its log */ }
}
const timeLeft = () => MAX_MS - (Date.now() - tStart);

const SIM_CONFIG = { preset: "polite", hosts: HOSTS, seed: 17, httpsShare: 0, outDegreeFrom: "real" };
// simweb's request log tells each window's requests apart (pages, robots.txt, failures, first pages of a host).
const requestLog = join(work, "simweb-requests.jsonl");
const sim = await startSimweb(SIM_CONFIG, ["--log", requestLog], join(work, "simweb"));
const seeds = join(work, "seeds.txt");
const excludeFile = join(work, "exclude.txt");
writeFileSync(excludeFile, "invalid simweb's unserved hosts\n");
const redis = await startRedisServer(join(work, "redis"));
const { World, makeConfig } = await import(join(ROOT, "packages/simweb/dist/index.js"));
const world = new World(makeConfig(SIM_CONFIG));

/** Per host, the next page id to preload (home pages, id 0, are the first segment's seeds). */
const nextPage = new Uint32Array(world.hostCount()).fill(1);

/**
 * `n` more simweb page URLs, spread evenly over the hosts (each host gives its next q pages, q the
 * same for all, hosts with fewer pages give what they have) and emitted host by host: a batch
 * then holds a few hosts' runs of URLs, so the frontier's per-host work (host hash, queue, ready
 * schedule) is paid once per run, not once per URL as in a round-robin over 10^5 hosts.
 */
function* pageUrls(n) {
  const hosts = world.hostCount();
  let left = n;
  while (left > 0) {
    const q = Math.max(1, Math.ceil(left / hosts));
    let any = false;
    for (let i = 0; i < hosts && left > 0; i++) {
      const h = world.model(i);
      const end = Math.min(h.info.pageCount, nextPage[i] + q, nextPage[i] + left);
      for (let j = nextPage[i]; j < end; j++) yield world.pageUrl(h, j);
      if (end > nextPage[i]) any = true;
      left -= end - nextPage[i];
      nextPage[i] = end;
    }
    if (!any) return;
  }
}

/**
 * Adds `n` simweb page URLs to the stopped node's frontier through the frontier's own batch
 * admission (Frontier.addLinks: seen filter, caps, domain politeness; these URLs are simweb pages of served hosts, so the opt-out list of --unserved exclude has nothing to refuse), two batches
 * in flight so packing on this side overlaps the script in Redis. Returns what was added.
 */
async function preload(n) {
  const { Frontier } = await import(join(ROOT, "packages/shardcrawl/dist/frontier/index.js"));
  const { Redis } = benchRequireRoot("ioredis");
  const r = new Redis({ port: redis.port, host: "127.0.0.1", enableAutoPipelining: true, maxRetriesPerRequest: null, commandTimeout: 600_000 });
  const t = Date.now();
  let added = 0, seen = 0, dropped = 0, offered = 0, lastNote = t;
  try {
    // The filter's parameters are the node's, stored by its first start.
    const frontier = await Frontier.open(r, { prefix: "sc:" });
    const gen = pageUrls(n);
    const inFlight = new Set();
    for (;;) {
      const batch = [];
      for (let i = 0; i < 10_000; i++) {
        const u = gen.next();
        if (u.done) break;
        batch.push({ url: u.value, host: new URL(u.value).hostname, tier: 1, depth: 1, hops: 0 });
      }
      if (!batch.length) break;
      offered += batch.length;
      const p = frontier.addLinks(batch, { kind: "seeds" }).then((res) => { added += res.added; seen += res.seen; dropped += res.dropped; });
      inFlight.add(p);
      void p.finally(() => inFlight.delete(p));
      if (inFlight.size >= 2) await Promise.race(inFlight);
      if (Date.now() - lastNote > 30_000) {
        lastNote = Date.now();
        progress(`  loading: ${offered} offered, ${added} added, ${fmt(offered / ((lastNote - t) / 1000), 0)} URLs/s`);
      }
      if (timeLeft() <= 0) throw new Error("out of time while loading");
    }
    await Promise.all(inFlight);
  } finally {
    // add_links credits what it adds to the node's "seeds" counter (seeds + discovered = frontier size).
    r.disconnect();
  }
  const seconds = (Date.now() - t) / 1000;
  return { offered, added, seen, dropped, seconds, urlsPerS: offered / Math.max(seconds, 1e-3) };
}

/** The node's --robots-outage-max default: a good entry is kept that long as the last cached copy (robots-step.ts). */
const ROBOTS_KEEP_MS = 30 * 24 * 3600_000;

/**
 * Puts every served host's robots.txt in the frontier's robots cache before the first measured
 * decade, as the node's robots step stores a good answer (rules or allow-all, fresh 24 h, kept 30
 * days). Without it a decade's window is mostly first visits once the frontier spans all 10^5
 * hosts (measured at 10^6 URLs: 6.2 leases per page, each new host's robots.txt fetch and
 * requeue), while the 10^4 decade crawls hosts it already knows: the decades would compare request
 * mixes, not frontier sizes. Hosts whose robots.txt is unreachable (simweb's server-error and
 * unreachable kinds) are left to the crawler: their outage retries stay in every window, counted
 * as robots requests. "http" fetches each file once with the crawler's fetchRobots and HTTP client
 * (one request per host, redirects after the node's delay; ~45 hosts/s on this loaded machine: 37
 * minutes for 10^5 hosts); "model" (default) writes the bytes simweb serves, cut at 500 KiB as the
 * fetch cuts them, without the requests. Either way the node's own robots.txt fetches are not in
 * any window: their cost is measured by --warm-robots off (requests counted per window).
 */
async function warmRobots() {
  return WARM === "http" ? warmRobotsHttp() : warmRobotsModel();
}

async function warmRobotsModel() {
  const { Listings } = await import(join(ROOT, "packages/simweb/dist/index.js"));
  const { RobotsCache, FrontierKeys } = await import(join(ROOT, "packages/shardcrawl/dist/frontier/index.js"));
  const { ROBOTS_MAX_BYTES } = await import(join(ROOT, "packages/shardcrawl/dist/fetch/robots.js"));
  const listings = new Listings(world);
  const cache = new RobotsCache(redis.client, new FrontierKeys("sc:"));
  const t = Date.now();
  const kinds = {};
  let bytes = 0;
  const pending = [];
  for (let i = 0; i < HOSTS; i++) {
    const h = world.model(i);
    const kind = h.info.robots;
    kinds[kind] = (kinds[kind] ?? 0) + 1;
    if (world.robots.disallowsAll(h)) continue;
    const text = world.robots.text(h);
    const origin = world.origin(h);
    let entry;
    if (kind === "absent" && text === null) entry = { kind: "allow-all", fetchedAt: Date.now() };
    else {
      let body = (text ?? "") + listings.robotsLines(h);
      const buf = Buffer.from(body, "utf8");
      if (buf.length > ROBOTS_MAX_BYTES) {
        // The fetch reads 500 KiB and drops the cut line (fetch/robots.ts robotsText).
        body = new TextDecoder("utf-8").decode(buf.subarray(0, ROBOTS_MAX_BYTES));
        const lastBreak = Math.max(body.lastIndexOf("\n"), body.lastIndexOf("\r"));
        body = lastBreak === -1 ? "" : body.slice(0, lastBreak + 1);
      }
      bytes += body.length;
      entry = { kind: "rules", body, fetchedAt: Date.now() };
    }
    pending.push(cache.set(origin, entry, 24 * 3600_000, ROBOTS_KEEP_MS));
    if (pending.length >= 500) await Promise.all(pending.splice(0));
  }
  await Promise.all(pending);
  return { mode: "model", hosts: HOSTS, kinds, bodyChars: bytes, seconds: (Date.now() - t) / 1000 };
}

async function warmRobotsHttp() {
  const { createHttpClient } = await import(join(ROOT, "packages/shardcrawl/dist/fetch/http-client.js"));
  const { fetchRobots } = await import(join(ROOT, "packages/shardcrawl/dist/fetch/robots.js"));
  const { RobotsCache, FrontierKeys } = await import(join(ROOT, "packages/shardcrawl/dist/frontier/index.js"));
  const client = createHttpClient({
    userAgent: BENCH_UA, connectTo: [`:80:127.0.0.1:${sim.http}`, `:443:127.0.0.1:${sim.https}`], allowPrivate: true, caFile: sim.ca,
    maxBodyBytes: 250 * 1024, keepAliveTimeoutMs: 1000,
  });
  const cache = new RobotsCache(redis.client, new FrontierKeys("sc:"));
  const t = Date.now();
  const kinds = {};
  let next = 0, lastNote = t;
  const one = async (i) => {
    const origin = world.origin(world.model(i));
    const r = await fetchRobots(client, origin, BENCH_UA, { redirectDelayMs: 1050, unavailableRetryMs: 0, minRetryMs: 0, maxRetryMs: ROBOTS_KEEP_MS });
    kinds[r.entry.kind] = (kinds[r.entry.kind] ?? 0) + 1;
    if (r.entry.kind !== "disallow-all") await cache.set(origin, r.entry, r.ttlMs, ROBOTS_KEEP_MS);
  };
  try {
    await Promise.all(Array.from({ length: 48 }, async () => {
      while (next < HOSTS) {
        await one(next++);
        if (Date.now() - lastNote > 30_000) {
          lastNote = Date.now();
          progress(`  warming robots.txt: ${next} of ${HOSTS} hosts, ${fmt(next / ((lastNote - t) / 1000), 0)} hosts/s`);
        }
        if (timeLeft() <= 0) throw new Error("out of time while warming robots.txt");
      }
    }));
  } finally {
    await client.close();
  }
  // The node's first request to a host keeps its delay after ours.
  await new Promise((r) => setTimeout(r, 1100));
  return { mode: "http", hosts: HOSTS, kinds, seconds: (Date.now() - t) / 1000 };
}

/**
 * The requests simweb served while `from`..`to` (epoch ms; by response end), from its request log:
 * pages vs robots.txt (either path a host serves its rules on), failures (no response or 5xx),
 * 429s, first page request a host ever got vs later ones, and connections first seen then.
 */
function requestsBetween(from, to) {
  const pageHosts = new Set(), conns = new Set();
  const w = { requests: 0, pages: 0, pagesFirstOfHost: 0, pagesFailed: 0, robots: 0, robotsFailed: 0, status429: 0, newConnections: 0, bytes: 0 };
  let text = "";
  try { text = readFileSync(requestLog, "utf8"); } catch { return undefined; }
  for (const line of text.split("\n")) {
    if (!line) continue;
    let e;
    try { e = JSON.parse(line); } catch { continue; }
    const robots = e.path === "/robots.txt" || e.path === "/meta/robots.txt";
    const inside = e.end > from && e.end <= to;
    const firstPage = !robots && !pageHosts.has(e.host);
    if (firstPage) pageHosts.add(e.host);
    const newConn = e.conn !== undefined && !conns.has(e.conn);
    if (newConn) conns.add(e.conn);
    if (!inside) continue;
    const failed = e.status === 0 || e.status >= 500;
    w.requests++;
    w.bytes += e.bytes ?? 0;
    if (e.status === 429) w.status429++;
    if (newConn) w.newConnections++;
    if (robots) { w.robots++; if (failed) w.robotsFailed++; }
    else { w.pages++; if (failed) w.pagesFailed++; if (firstPage) w.pagesFirstOfHost++; }
  }
  return w;
}

const samples = [];
// One sampler for the whole run: the nodes of every segment add up (an exited process keeps its last figure).
const sampler = nodeCpuSampler(redis);
let crawl;
let t0 = Date.now();

async function sample(segment, phase = "crawl") {
  const { roles: cpu, rss } = sampler.sample(crawl?.exitCode === null ? crawl.pid : undefined);
  const stats = await redis.client.hgetall("sc:stats").catch(() => ({}));
  const info = await redis.client.info("memory").catch(() => "");
  const s = {
    segment, phase, elapsedS: (Date.now() - t0) / 1000, load1: loadavg()[0], cpu, rssMB: rss,
    redisUsedMB: Number(/used_memory:(\d+)/.exec(info)?.[1] ?? NaN) / 1e6, redisRssMB: Number(/used_memory_rss:(\d+)/.exec(info)?.[1] ?? NaN) / 1e6,
    fetched: Number(stats.fetched ?? 0), frontier: Number(stats.seeds ?? 0) + Number(stats.discovered ?? 0), discovered: Number(stats.discovered ?? 0),
    queued: Number(stats.queued ?? 0), hostsQueued: Number(stats.hostsQueued ?? 0),
    duplicates: Number(stats.duplicates ?? 0), parsed: Number(stats.parsed ?? 0),
    // Leases include robots.txt fetches of hosts seen for the first time (the URL is requeued).
    leased: Number(stats.leased ?? 0), requeued: Number(stats.requeued ?? 0), connOpened: Number(stats["conn:opened"] ?? 0),
    robotsDeferred: Number(stats.robotsDeferred ?? 0), t: Date.now(),
  };
  samples.push(s);
  appendFileSync(samplesFile, JSON.stringify(s) + "\n");
  return s;
}

const total = (s) => Object.values(s.cpu).reduce((n, c) => n + c, 0);

/**
 * Calls and time per command from INFO commandstats. The time is Redis's wall time inside the
 * command (a Lua script's "fcall" (or "evalsha") includes the commands it calls, and on a loaded machine the
 * time redis-server waits for a core): read it as where Redis's work goes, not as CPU.
 */
async function commandStats() {
  const text = await redis.client.info("commandstats").catch(() => "");
  const out = {};
  for (const m of text.matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) out[m[1]] = { calls: Number(m[2]), usec: Number(m[3]) };
  return out;
}
const windows = [];
const problems = [];
let last = { frontier: 0, fetched: 0 };
let stopping = false;
// A signal ends the run as --max-minutes does: the node is stopped and what was measured is kept.
for (const sig of ["SIGINT", "SIGTERM", "SIGHUP"]) process.on(sig, () => { stopping = true; progress(`${sig}: stopping after this step`); });

/** Starts the node on the output folder, crawls until WINDOW + WINDOW/5 more pages, stops it. */
async function crawlSegment(k, size, loading) {
  const argv = [
    SHARDCRAWL_CLI, "crawl", "--seeds", seeds, "--out", join(work, "crawl"), "--redis", redis.url, "--progress", "off",
    "--scope", "any", "--delay", "1000", "--max-page-bytes", String(250 * 1024), "--allow-private", "--ca-file", sim.ca,
    "--user-agent", BENCH_UA,
    "--connect-to", `:80:127.0.0.1:${sim.http}`, "--connect-to", `:443:127.0.0.1:${sim.https}`,
    "--expected-urls", String(TARGET),
    // simweb's links to hosts it does not serve (.invalid) reach simweb too (--connect-to) and are
    // reset: with --scope any each such host is a robots.txt outage retried for days, and at 10^5+
    // hosts those retries take most leases (measured at 10^6 URLs: 6.8 leases and 6 connections per
    // page fetched). On the opt-out list they are refused at admission; --unserved crawl keeps them.
    ...(opts.unserved === "exclude" ? ["--exclude-file", excludeFile] : []),
    // WARC files are deleted once closed: 10^5 pages of simweb's sizes would otherwise fill the disk.
    "--on-file-closed", "true", "--delete-shipped", "--warc-max-file-bytes", String(256 << 20),
  ];
  crawl = spawn(process.execPath, argv, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  crawl.stderr.on("data", (b) => { stderr = (stderr + b).slice(-20_000); });
  let exited = null;
  crawl.once("exit", (c, s) => { exited = c ?? s; });
  const startFetched = last.fetched;
  const segStart = Date.now();
  let first, firstCmds;
  let endReason = "window";
  let stopped;
  for (;;) {
    await new Promise((r) => setTimeout(r, SAMPLE_MS));
    last = await sample(k);
    const done = last.fetched - startFetched;
    if (!first && done >= WINDOW / 5) { first = last; firstCmds = await commandStats(); }
    if (exited !== null) { endReason = `node exited (${exited})`; break; }
    if (done >= WINDOW + WINDOW / 5) break;
    if (stopping) { endReason = "signal"; break; }
    if (timeLeft() <= 0) { endReason = "--max-minutes"; break; }
    if (Date.now() - segStart > SEGMENT_MS) { endReason = "segment time limit"; break; }
    if (samples.length % 20 === 0) progress(`  segment ${size}: ${fmt(last.elapsedS, 0)} s, ${done} pages this segment, frontier ${last.frontier} URLs, redis ${fmt(last.redisUsedMB, 0)} MB, load ${fmt(last.load1)}`);
  }
  const lastCmds = await commandStats();
  if (exited === null) {
    crawl.kill("SIGTERM");
    await Promise.race([new Promise((r) => crawl.once("exit", r)), new Promise((r) => setTimeout(r, 300_000))]);
    if (crawl.exitCode === null && crawl.signalCode === null) crawl.kill("SIGKILL");
    // The stopping node still acks the pages in flight: the next decade starts from what it left.
    stopped = await sample(k, "stopped");
  } else {
    problems.push({ size, what: `crawl ended early (${exited})`, stderr: stderr.slice(-2000) });
    progress(`segment ${size}: crawl ended early (${exited}): ${stderr.slice(-500).replace(/\n/g, " | ")}`);
  }
  if (endReason !== "window") progress(`segment ${size}: ended by ${endReason}`);
  if (first && last.fetched > first.fetched) {
    const pages = last.fetched - first.fetched;
    const w = {
      size, frontierFrom: first.frontier, frontierTo: last.frontier, hostsQueued: last.hostsQueued, pages, endReason,
      cpuMsPerPage: ((total(last) - total(first)) / pages) * 1000,
      msPerPageByRole: Object.fromEntries(Object.keys(last.cpu).map((r) => [r, (((last.cpu[r] ?? 0) - (first.cpu[r] ?? 0)) / pages) * 1000])),
      linksNewPerPage: (last.discovered - first.discovered) / Math.max(1, last.parsed - first.parsed),
      duplicatesPerPage: (last.duplicates - first.duplicates) / Math.max(1, last.parsed - first.parsed),
      leasesPerPage: (last.leased - first.leased) / pages, connectionsPerPage: (last.connOpened - first.connOpened) / pages,
      rssMB: last.rssMB, redisUsedMB: last.redisUsedMB, redisBytesPerUrl: (last.redisUsedMB * 1e6) / Math.max(1, last.frontier),
      load1: last.load1, elapsedS: (Date.now() - segStart) / 1000, loading,
    };
    // Per HTTP request as simweb saw them (robots.txt and failures included): a window whose mix
    // differs from the first decade's shows it here, not as a hidden change in the per-page cost.
    const req = requestsBetween(first.t, last.t);
    if (req?.requests) {
      w.requests = req;
      w.cpuMsPerRequest = ((total(last) - total(first)) / req.requests) * 1000;
      w.msPerRequestByRole = Object.fromEntries(Object.keys(last.cpu).map((r) => [r, (((last.cpu[r] ?? 0) - (first.cpu[r] ?? 0)) / req.requests) * 1000]));
    }
    w.robotsDeferredPerPage = (last.robotsDeferred - first.robotsDeferred) / pages;
    // Where Redis's work went (commands with at least 0.05 ms per page): calls and wall ms per page.
    const cmds = lastCmds ?? {};
    w.redisCommandsPerPage = Object.fromEntries(Object.entries(cmds)
      .map(([c, v]) => [c, { calls: (v.calls - (firstCmds?.[c]?.calls ?? 0)) / pages, ms: (v.usec - (firstCmds?.[c]?.usec ?? 0)) / 1000 / pages }])
      .filter(([, v]) => v.ms >= 0.05).sort((a, b) => b[1].ms - a[1].ms));
    w.wallS = (last.t - first.t) / 1000;
    w.span = { from: first.t, to: last.t };
    windows.push(w);
    if (w.requests) progress(`segment ${size}: ${w.requests.requests} requests (${w.requests.pages} pages, ${w.requests.pagesFirstOfHost} first of their host, ${w.requests.robots} robots.txt, ${w.requests.robotsFailed + w.requests.pagesFailed} failed, ${w.requests.newConnections} new connections), ${fmt(w.cpuMsPerRequest, 2)} ms CPU/request`);
    progress(`segment ${size}: ${pages} pages measured, ${fmt(w.cpuMsPerPage, 2)} ms CPU/page ${JSON.stringify(Object.fromEntries(Object.entries(w.msPerPageByRole).map(([r, v]) => [r, +v.toFixed(2)])))}, frontier ${last.frontier} URLs, ${last.hostsQueued} hosts queued, redis ${fmt(last.redisUsedMB, 0)} MB (${fmt(w.redisBytesPerUrl, 0)} B/URL), RSS MB ${JSON.stringify(Object.fromEntries(Object.entries(last.rssMB).map(([r, v]) => [r, Math.round(v)])))}, load ${fmt(last.load1)}`);
  } else {
    problems.push({ size, what: `too few pages to measure (${last.fetched - startFetched})` });
    progress(`segment ${size}: too few pages to measure (${last.fetched - startFetched})`);
  }
  if (stopped) last = stopped;
  save();
}

/**
 * One segment per decade: seeds that bring the frontier to the decade are loaded into the stopped
 * node's frontier, then the node is (re)started on the same output folder, crawls WINDOW pages
 * there, and is stopped. CPU per page is taken over the segment's pages after its first fifth
 * (start-up left out). A decade that fails is recorded and the run goes on to the next one.
 */
progress(`start: ${HOSTS} hosts, decades ${DECADES.join(", ")}, window ${WINDOW} pages, max ${MAX_MS / 60_000} min, samples ${samplesFile}`);
let warm;
for (const [k, size] of DECADES.entries()) {
  if (stopping || timeLeft() <= 0) { progress(`stopped before the ${size} decade (${stopping ? "signal" : "--max-minutes"})`); break; }
  let loading;
  try {
    if (k === 0) writeFileSync(seeds, world.seeds(SEED_HOSTS).join("\n") + "\n");
    if (k === 0 && WARM !== "off") {
      progress(`warming robots.txt of all ${HOSTS} hosts`);
      warm = await warmRobots();
      progress(`warmed robots.txt in ${fmt(warm.seconds, 0)} s: ${JSON.stringify(warm.kinds)}`);
    }
    if (k > 0 && size > last.frontier) {
      progress(`decade ${size}: loading ${size - last.frontier} URLs (frontier ${last.frontier})`);
      loading = await preload(size - last.frontier);
      last = await sample(k, "loaded");
      progress(`decade ${size}: loaded ${loading.added} of ${loading.offered} in ${fmt(loading.seconds, 0)} s (${fmt(loading.urlsPerS, 0)} URLs/s), frontier ${last.frontier} URLs, redis ${fmt(last.redisUsedMB, 0)} MB`);
    }
    await crawlSegment(k, size, loading);
  } catch (err) {
    problems.push({ size, what: String(err?.stack ?? err) });
    progress(`decade ${size} failed: ${String(err?.message ?? err)}`);
    if (crawl && crawl.exitCode === null && crawl.signalCode === null) crawl.kill("SIGKILL");
    save();
  }
}
await redis.stop();
await sim.stop();

function save() {
  const base = windows[0];
  for (const w of windows) w.vsFirst = base ? w.cpuMsPerPage / base.cpuMsPerPage : undefined;
  const peakRssMB = Object.fromEntries(Object.entries(sampler.byRole()).map(([r, v]) => [r, v.peakRssMB]));
  const ratios = windows.map((w) => w.vsFirst).filter(Number.isFinite);
  writeResult(opts.out ?? join(RESULTS_DIR, `crawl-scale-${opts.mode}.json`), {
    bench: "crawl-scale", mode: opts.mode, hosts: HOSTS, seedHosts: SEED_HOSTS, targetUrls: TARGET, window: WINDOW,
    complete: windows.length === DECADES.length && problems.length === 0,
    reached: { frontier: last.frontier, fetched: last.fetched, elapsedS: last.elapsedS, redisUsedMB: last.redisUsedMB },
    flatWithin20pct: ratios.length > 1 ? Math.max(...ratios) / Math.min(...ratios) <= 1.2 : undefined,
    windows, problems, peakRssMB, samplesFile: opts.samples ? samplesFile : undefined,
    // Every 10th sample kept in the result, for a chart of memory and CPU through the run.
    trace: samples.filter((_, j) => j % 10 === 0),
    unserved: opts.unserved, warmRobots: warm ?? WARM,
    command: ["node scripts/bench/crawl-scale.mjs", ...process.argv.slice(2)].join(" "),
  });
}
save();
for (const w of windows) progress(`frontier ${w.size}: ${fmt(w.cpuMsPerPage, 2)} ms CPU/page (x${fmt(w.vsFirst, 2)} of the first) over ${w.pages} pages; ${JSON.stringify(Object.fromEntries(Object.entries(w.msPerPageByRole ?? {}).map(([r, v]) => [r, +v.toFixed(2)])))}`);
progress(`done in ${fmt((Date.now() - tStart) / 60_000, 1)} min${problems.length ? `, ${problems.length} problems (see the result's "problems")` : ""}`);
if (!opts.samples) rmSync(work, { recursive: true, force: true });
else rmSync(join(work, "crawl"), { recursive: true, force: true });
process.exit(0);
