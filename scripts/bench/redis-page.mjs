#!/usr/bin/env node
// Redis cost of one page's way through the frontier, without fetching or parsing: lease, complete
// with a spooled page, take from the parse queue, ack with the page's links (through the parser's
// seen cache, as node/open-frontier.ts ackPage does) -- on a real redis-server (AOF everysec, as
// a node runs it). The links are the real corpus' (htmlparser-benchmark) rewritten onto 66 hosts:
// each host's pages are 16 corpus pages (simweb realweb's layout), so navigation repeats within a
// host and most links that reach Redis past the seen cache are new, as on the real-page web.
// Prints redis-server CPU per page (from /proc, after a warm-up) and Redis commands per page by
// name (INFO commandstats), for this build and, with --compare DIST, another build's
// packages/shardcrawl/dist, alternating runs; the ratio of medians is the A/B figure.
// BENCH_BLOOM_LAYOUT=classic|blocked picks the seen filter's layout (builds that know it; default: the build's default).
// Usage: node scripts/bench/redis-page.mjs [--compare /path/to/packages/shardcrawl/dist] [--reps 5] [--pages 3000]
import { spawnSync } from "node:child_process";
import { createRequire } from "node:module";
import { mkdtempSync, readFileSync, readdirSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, args, benchRequire, crawlerRequire, fmt, median, procCpu, startRedisServer } from "./common.mjs";

const require = createRequire(import.meta.url);
const opts = args({ compare: { type: "string" }, reps: { type: "string", default: "5" }, pages: { type: "string", default: "3000" }, worker: { type: "string" }, dist: { type: "string" } });
const PAGES = Number(opts.pages);
const WARMUP = Math.round(PAGES / 5);
const HOSTS = 66;

if (opts.worker) {
  process.stdout.write(JSON.stringify(await worker(opts.worker)) + "\n");
  process.exit(0);
}

const distA = opts.dist ?? join(ROOT, "packages/shardcrawl/dist");
const builds = opts.compare ? [["a", distA], ["b", opts.compare]] : [["a", distA]];
const runs = { a: [], b: [] };
for (let i = 0; i < Number(opts.reps); i++) {
  for (const [k, dist] of i % 2 ? [...builds].reverse() : builds) {
    const r = spawnSync(process.execPath, [new URL(import.meta.url).pathname, "--worker", dist, "--pages", String(PAGES)], { encoding: "utf8", maxBuffer: 16 << 20 });
    if (r.status !== 0) throw new Error(`worker ${dist}: ${r.stderr.slice(-3000)}`);
    const run = JSON.parse(r.stdout.trim().split("\n").pop());
    runs[k].push(run);
    if (run.irByStep) {
      const all = Object.values(run.irByStep).reduce((x, y) => x + y, 0);
      const ack = run.irByStep.ack_page ?? 0;
      process.stderr.write(`${k}${i} redis-server instructions per page by step: ${Object.entries(run.irByStep).map(([st, v]) => `${st} ${fmt(v / 1000, 1)}k`).join(", ")}; ` +
        `ack_page ${fmt((100 * ack) / all, 1)}% of them, ${fmt(ack / run.linksToRedisPerPage / 1000, 1)}k per link sent, ${fmt(ack / run.addedPerPage / 1000, 1)}k per new link\n`);
    }
    process.stderr.write(`${k}${i} (load ${loadavg()[0].toFixed(1)}): redis ${fmt(run.redisUsPerPage, 1)} us/page,${run.irPerPage ? ` ${fmt(run.irPerPage / 1000, 1)}k instructions/page,` : ""} client ${fmt(run.clientUsPerPage, 1)} us/page, ${fmt(run.commandsPerPage, 1)} cmds/page, ${fmt(run.linksToRedisPerPage, 1)} links to Redis/page (${fmt(run.addedPerPage, 1)} new)\n`);
  }
}
for (const [k, dist] of builds) {
  const rs = runs[k];
  const cmds = {};
  for (const c of new Set(rs.flatMap((r) => Object.keys(r.byCommand)))) cmds[c] = median(rs.map((r) => r.byCommand[c] ?? 0));
  const top = Object.entries(cmds).filter(([, n]) => n >= 0.05).sort((x, y) => y[1] - x[1]).map(([c, n]) => `${c} ${fmt(n, 2)}`).join(", ");
  if (rs[0].slow) process.stderr.write(`${k} slowlog (calls/page, median us/call): ${Object.entries(rs[0].slow).sort((x, y) => y[1].perPage * y[1].medianUs - x[1].perPage * x[1].medianUs).map(([nm, v]) => `${nm} ${fmt(v.perPage, 2)}x ${fmt(v.medianUs, 1)}`).join(", ")}\n`);
  process.stderr.write(`${k} ${dist}: median redis ${fmt(median(rs.map((r) => r.redisUsPerPage)), 1)} us/page, client ${fmt(median(rs.map((r) => r.clientUsPerPage)), 1)} us/page, ${fmt(median(rs.map((r) => r.commandsPerPage)), 1)} cmds/page: ${top}\n`);
}
if (opts.compare && runs.a[0]?.irPerPage) {
  process.stderr.write(`redis-server instructions per page (callgrind), this build / compared: ${fmt(median(runs.a.map((r) => r.irPerPage)) / median(runs.b.map((r) => r.irPerPage)), 3)}\n`);
}
if (opts.compare) {
  const ra = median(runs.a.map((r) => r.redisUsPerPage)), rb = median(runs.b.map((r) => r.redisUsPerPage));
  process.stderr.write(`redis CPU per page, this build / compared: ${fmt(ra / rb, 3)}\n`);
}

async function worker(dist) {
  const { Frontier } = await import(join(dist, "frontier/frontier.js"));
  const { SeenCache } = await import(join(dist, "frontier/seen-cache.js"));
  const { normalizeUrl } = await import(join(dist, "url/normalize.js"));
  const { Redis } = crawlerRequire("ioredis");
  const htmlparser2 = crawlerRequire("htmlparser2");
  // The corpus' links per page (normalized against a made-up base, de-duplicated).
  const dir = join(benchRequire.resolve("htmlparser-benchmark/package.json"), "..", "files");
  const corpus = readdirSync(dir).filter((f) => f.endsWith(".html")).sort().map((f, i) => {
    const hrefs = [];
    const p = new htmlparser2.Parser({ onopentag: (name, attrs) => { if ((name === "a" || name === "area") && attrs.href !== undefined) hrefs.push(attrs.href); } });
    p.write(readFileSync(join(dir, f), "utf8"));
    p.end();
    const base = `https://www.site${i}.example/dir/page-${i}.html`;
    return [...new Set(hrefs.map((h) => normalizeUrl(h, base)).filter((u) => u !== null && /^https?:/.test(u)))];
  });
  const hash = (s) => {
    let h = 2166136261;
    for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619);
    return h >>> 0;
  };
  const hostName = (h) => `www.site${h}.example`;
  // A served page's links, as simweb realweb serves them: the page's body is one of its host's 16
  // corpus pages (by a hash of the path); links to the page's own site go to the serving host, links
  // to half of the other sites to the served host that site maps to, the rest are out of scope.
  const linksOf = (url) => {
    const { hostname, pathname } = new URL(url);
    const h = hash(hostname);
    const ci = hash(`${h}:${hash(pathname) % 16}`) % corpus.length;
    const out = [];
    for (const link of corpus[ci]) {
      const u = new URL(link);
      let host;
      if (u.hostname === `www.site${ci}.example`) host = hostname;
      else if (hash(u.hostname) % 2 === 0) host = hostName(hash(u.hostname) % HOSTS);
      else continue;
      out.push({ url: `http://${host}${u.pathname}${u.search}`, host, tier: 1, depth: 2, hops: 0 });
    }
    return out;
  };

  const work = mkdtempSync(join(tmpdir(), "bench-redis-page-"));
  const server = process.env.BENCH_CALLGRIND ? await startUnderCallgrind(work) : await startRedisServer(join(work, "redis"));
  const client = new Redis(server.url, { maxRetriesPerRequest: 1, enableAutoPipelining: true });
  try {
    const f = await Frontier.open(client, { prefix: "sc:", bloom: { expectedUrls: 1_000_000, falsePositiveRate: 0.01, ...(process.env.BENCH_BLOOM_LAYOUT ? { layout: process.env.BENCH_BLOOM_LAYOUT } : {}) }, delayMs: 100, parseQueueMax: 256 });
    await f.addLinks(Array.from({ length: HOSTS }, (_, h) => ({ url: `http://${hostName(h)}/`, host: hostName(h), tier: 0, depth: 0, hops: 0 })), { now: 0, kind: "seeds" });
    const cache = new SeenCache();
    let now = 1_000_000, pages = 0, offset = 0, sent = 0, added = 0;
    let cpu0, c0, stats0, base;
    // BENCH_CALLGRIND_PHASES=1 (with BENCH_CALLGRIND): instructions by step of the page's way.
    const phaseIr = {};
    const phase = async (name) => {
      if (cpu0 === undefined || !process.env.BENCH_CALLGRIND_PHASES || !server.phaseIr) return;
      phaseIr[name] = (phaseIr[name] ?? 0) + server.phaseIr();
    };
    const commandStats = async () => Object.fromEntries([...(await client.info("commandstats")).matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)].map((m) => [m[1], Number(m[2])]));
    while (pages < PAGES + WARMUP) {
      if (pages >= WARMUP && cpu0 === undefined) {
        if (process.env.BENCH_SLOWLOG) await client.config("SET", "slowlog-log-slower-than", "0").then(() => client.config("SET", "slowlog-max-len", "1000000")).then(() => client.slowlog("RESET"));
        stats0 = await commandStats();
        await server.instrument?.(true);
        cpu0 = server.cpu();
        c0 = process.cpuUsage();
        base = pages;
        sent = 0;
        added = 0;
      }
      now += 150;
      await phase("other");
      const batch = await f.lease(16, now, 120_000, "f0.1");
      await phase("lease");
      for (const l of batch.leases) {
        const bytes = 60_000 + (hash(l.url) % 50_000);
        const spool = { file: "f0.1-000001.spool", offset, bytes, crc: hash(l.url) };
        offset += bytes;
        const page = { url: l.url, host: l.host, depth: l.depth, hops: l.hops, fetchedAt: new Date(now).toISOString(), ip: "127.0.0.1", status: 200, httpVersion: "1.1", statusText: "OK",
          headers: [["content-type", "text/html"], ["content-length", String(bytes)]], requestHeaders: [["user-agent", "bench"]], timings: { start: now, headers: 5, end: 20 }, spool };
        await f.completeWithPage(l, page, now + 20, { signal: "ok", latencyMs: 5, startedAt: now });
      }
      await phase("complete_page");
      const taken = await f.parse.take("p0", 16);
      await phase("take_pages");
      await Promise.all(taken.map(async (t) => {
        const links = linksOf(t.page.url);
        pages++;
        const send = cache.unknown(links);
        const r = await f.parse.ack("p0", t.id, send, { now: now + 30 });
        sent += send.length;
        added += r.added;
        if (r.dropped === 0) for (const u of r.sentUrls) cache.remember(u);
      }));
      await phase("ack_page");
      if (batch.leases.length === 0 && taken.length === 0) now += 1000;
    }
    const c = process.cpuUsage(c0);
    const n = pages - base;
    const ir = await server.instrument?.(false);
    const redisUs = ((server.cpu() - cpu0) * 1e6) / n;
    const stats1 = await commandStats();
    const byCommand = {};
    let total = 0;
    for (const [cmd, v] of Object.entries(stats1)) {
      const d = v - (stats0[cmd] ?? 0);
      if (cmd === "info") continue;
      byCommand[cmd] = d / n;
      total += d;
    }
    // BENCH_SLOWLOG=1: median microseconds per call by script and command (medians resist preemption on a loaded machine).
    let slow;
    if (process.env.BENCH_SLOWLOG) {
      const { Scripts, SCRIPT_FILES } = await import(join(dist, "frontier/scripts.js"));
      const { createHash } = await import("node:crypto");
      const src = new Scripts({ options: {} });
      const names = new Map(Object.keys(SCRIPT_FILES).map((nm) => [createHash("sha1").update(src.source(nm)).digest("hex"), nm]));
      const by = {};
      for (const [, , usec, argv] of await client.slowlog("GET", "-1")) {
        const cmd = String(argv[0]).toLowerCase();
        const name = cmd === "fcall" ? `script:${String(argv[1]).replace(/^sc[0-9a-f]+_/, "")}` : cmd === "evalsha" ? `script:${names.get(String(argv[1])) ?? "?"}` : cmd;
        (by[name] ??= []).push(Number(usec));
      }
      slow = Object.fromEntries(Object.entries(by).map(([nm, xs]) => [nm, { perPage: xs.length / n, medianUs: median(xs) }]));
    }
    const irByStep = Object.keys(phaseIr).length ? Object.fromEntries(Object.entries(phaseIr).map(([k, v]) => [k, v / n])) : undefined;
    return { slow, irByStep, ...(ir ? { irPerPage: ir / n } : {}), pages: n, redisUsPerPage: redisUs, clientUsPerPage: (c.user + c.system) / n, commandsPerPage: total / n, byCommand, linksToRedisPerPage: sent / n, addedPerPage: added / n };
  } finally {
    client.disconnect();
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * BENCH_CALLGRIND=1: redis-server under valgrind's callgrind, its counters zeroed when the measured pages
 * start, so the figure is instructions per page: independent of the machine's load (CPU time on
 * a shared machine is not). Slow (~50x): use a few hundred pages.
 */
async function startUnderCallgrind(work) {
  const { spawn, execFileSync } = await import("node:child_process");
  const { mkdirSync, readFileSync: read } = await import("node:fs");
  const { createServer } = await import("node:net");
  const port = await new Promise((r) => { const s = createServer().listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => r(p)); }); });
  const dir = join(work, "redis");
  mkdirSync(dir, { recursive: true });
  const out = join(work, "callgrind.out");
  const proc = spawn("valgrind", ["--tool=callgrind", "--collect-atstart=yes", `--callgrind-out-file=${out}`, "redis-server", "--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--logfile", "redis.log"], { stdio: "ignore" });
  const { Redis } = crawlerRequire("ioredis");
  const probe = new Redis({ port, host: "127.0.0.1", lazyConnect: true, maxRetriesPerRequest: 1 });
  probe.on("error", () => {});
  for (let i = 0; ; i++) {
    try { await probe.connect(); await probe.ping(); break; } catch (e) { if (i > 300) throw e; probe.disconnect(); await new Promise((r) => setTimeout(r, 200)); }
  }
  probe.disconnect();
  return {
    url: `redis://127.0.0.1:${port}`, pid: proc.pid, cpu: () => procCpu(proc.pid)?.self ?? NaN,
    instrument: async (on) => {
      if (on) { execFileSync("callgrind_control", ["--zero", String(proc.pid)], { stdio: "ignore" }); return 0; }
      execFileSync("callgrind_control", ["--dump", String(proc.pid)], { stdio: "ignore" });
      // The dump's totals line: instructions executed while instrumented.
      const files = (await import("node:fs")).readdirSync(work).filter((f) => f.startsWith("callgrind.out"));
      let ir = 0;
      for (const f of files) { const m = /^(?:totals|summary): (\d+)/m.exec(read(join(work, f), "utf8")); if (m) ir = Math.max(ir, Number(m[1])); }
      if (process.env.BENCH_CALLGRIND_KEEP) for (const f of files) execFileSync("cp", [join(work, f), `${process.env.BENCH_CALLGRIND_KEEP}-${f}`]);
      return ir;
    },
    // Instructions since the last call (dump, read, zero): per step of the page's way.
    phaseIr: () => {
      execFileSync("callgrind_control", ["--dump", String(proc.pid)], { stdio: "ignore" });
      const fs = require("node:fs");
      const files = fs.readdirSync(work).filter((f) => /^callgrind\.out\.\d+$/.test(f)).sort((x, y) => Number(x.split(".").pop()) - Number(y.split(".").pop()));
      const last = files.pop();
      if (!last) return 0;
      const m = /^(?:totals|summary): (\d+)/m.exec(read(join(work, last), "utf8"));
      fs.unlinkSync(join(work, last));
      execFileSync("callgrind_control", ["--zero", String(proc.pid)], { stdio: "ignore" });
      return m ? Number(m[1]) : 0;
    },
    stop: async () => { proc.kill("SIGTERM"); await new Promise((r) => proc.once("exit", r)); },
  };
}
