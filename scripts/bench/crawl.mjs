#!/usr/bin/env node
// End-to-end benchmark of one shardcrawl node crawling simweb over loopback, HTTP and HTTPS, pages
// cut at 250 KB, gzip WARC output. Measures pages/s; CPU seconds per page summed over EVERY process
// of the node (supervisor, fetchers, parsers and their threads, and Redis) from /proc; peak memory
// per process (VmHWM); Redis bytes per queued frontier URL and per seen URL; Redis commands and
// microseconds per page by command (INFO commandstats; BENCH_SLOWLOG=1 splits the scripts' time by
// script, BENCH_MONITOR=1 counts what clients send by command and key). Then, over the same
// URLs: the floor of HTTP cost (a bare undici GET loop) and, with --profile, a per-page CPU
// breakdown from V8 CPU profiles of every node process (NODE_OPTIONS=--cpu-prof).
// --connections kept,new (real web only): the same crawl with kept-alive connections and with a new
// connection per page (the web answers "Connection: close"), alternating, side by side.
// --args="--shard 0/12" --real-hosts 792: one node of a 12-node fleet over a web 12 times as big (its
// share as big as the usual web), other nodes' links written to its outbox, as on the fleet.
// Usage: node scripts/bench/crawl.mjs [--mode quick|full] [--out FILE] [--profile] [--connections kept,new]
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync, existsSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import {
  BENCH_UA, ROOT, RESULTS_DIR, SHARDCRAWL_CLI, SIMWEB_CLI, args, fmt, median, procCpu, randomLoopback, sampleNodeCpu,
  startRedisServer, startSimweb, writeResult, benchRequire, spawnServer, writeSimwebSeeds,
} from "./common.mjs";
import { analyseProfiles } from "./profile.mjs";

const opts = args({ webs: { type: "string", default: "real,simweb" }, "real-max-pages": { type: "string" }, "max-pages": { type: "string" }, compare: { type: "string" }, "a-args": { type: "string", default: "" }, args: { type: "string", default: "" }, "real-hosts": { type: "string" }, "broad-max-pages": { type: "string" }, "a-node-args": { type: "string", default: "" }, "a-env": { type: "string", default: "" }, profile: { type: "boolean", default: false }, "skip-peers": { type: "boolean", default: false }, schemes: { type: "string", default: "http,https" }, reps: { type: "string" }, connections: { type: "string", default: "kept" }, cli: { type: "string" } });
const FULL = opts.mode === "full";
/** Extra crawl flags for this build's runs (not for the --compare build's). */
const aArgs = opts["a-args"].split(" ").filter(Boolean);
/** Extra crawl flags for every run of both builds, e.g. "--shard 0/12" (the fleet's link exchange: other nodes' links to the outbox). */
const bothArgs = opts.args.split(" ").filter(Boolean);
/** Node flags for this build's supervisor (forked children inherit them), e.g. V8 GC flags. */
const aNodeArgs = opts["a-node-args"].split(" ").filter(Boolean);
/** Environment variables (KEY=VALUE, space separated) for this build's runs, e.g. feature switches. */
const aEnv = Object.fromEntries(opts["a-env"].split(" ").filter(Boolean).map((kv) => [kv.slice(0, kv.indexOf("=")), kv.slice(kv.indexOf("=") + 1)]));
const HOSTS = FULL ? 500 : 200;
const MAX_PAGES = Number(opts["max-pages"] ?? (FULL ? 3000 : 1500));
const REPS = Number(opts.reps ?? 3);
// Crawlee takes several times longer per page; one run in quick mode.
const CRAWLEE_REPS = Math.min(REPS, FULL ? 3 : 1);
const DELAY_MS = 100;
/** The real-page web (simweb realweb over htmlparser-benchmark's pages): its hosts and page budget. */
const REAL_HOSTS = Number(opts["real-hosts"] ?? 66);
const REAL_MAX_PAGES = Number(opts["real-max-pages"] ?? 3000);
/**
 * "real-broad": the same pages spread on 12 times the hosts, with a budget to match, so that ~800
 * hosts are crawled at once and the frontier reaches ~1 M URLs (what the 66-host web never shows).
 */
const BROAD_HOSTS = 792;
const BROAD_MAX_PAGES = Number(opts["broad-max-pages"] ?? 40_000);
const isReal = (web) => web === "real" || web === "real-broad";
const hostsOf = (web) => (web === "real-broad" ? BROAD_HOSTS : REAL_HOSTS);
const REAL_CORPUS = join(benchRequire.resolve("htmlparser-benchmark/package.json"), "..", "files");
const budgetOf = (web) => (web === "real-broad" ? BROAD_MAX_PAGES : web === "real" ? REAL_MAX_PAGES : MAX_PAGES);
const CUT = 250 * 1024;
const work = mkdtempSync(join(tmpdir(), "bench-crawl-"));

/** simweb's `polite` web; "simweb-reallinks": the same with links per page drawn from real pages' counts. */
function simwebConfig(scheme, web = "simweb") {
  return { preset: "polite", hosts: HOSTS, seed: 11, httpsShare: scheme === "https" ? 1 : 0, ...(web === "simweb-reallinks" ? { outDegreeFrom: "real" } : {}) };
}

/**
 * The web to crawl: simweb (`polite` preset) or the real-page web (`simweb realweb`), on ports 80/443
 * of a private loopback address when we may bind them, so peers need only DNS.
 */
async function startWeb(scheme, dir, web = "simweb", { connectionClose = false } = {}) {
  if (connectionClose && !isReal(web)) throw new Error("a new connection per page (--connections new) needs the real web (--webs real)");
  const start = async (netArgs) => {
    if (!isReal(web)) return startSimweb(simwebConfig(scheme, web), netArgs, dir);
    const seeds = join(dir, `seeds-${scheme}.txt`);
    const sim = await spawnServer([SIMWEB_CLI, "realweb", "--corpus", REAL_CORPUS, "--hosts", String(hostsOf(web)), "--seeds-out", seeds, "--scheme", scheme, "--ca-dir", join(dir, "ca"), ...(connectionClose ? ["--connection-close"] : []), ...netArgs], dir);
    return { ...sim, seedsFile: seeds };
  };
  if (process.getuid?.() === 0) {
    for (let i = 0; i < 5; i++) {
      const ip = randomLoopback();
      try {
        const sim = await start(["--bind", ip, "--port", "80", "--https-port", "443"]);
        return { ...sim, ip, web };
      } catch { /* address taken: try another */ }
    }
  }
  const sim = await start([]);
  return { ...sim, ip: "127.0.0.1", web };
}

function seedsFor(sim, file) {
  if (sim.seedsFile) {
    const text = readFileSync(sim.seedsFile, "utf8");
    writeFileSync(file, text);
    return text.trim().split("\n").length;
  }
  return writeSimwebSeeds(sim, file);
}

/** One crawl run; samples every process of the node while it runs. */
async function crawlOnce(scheme, sim, redisDir, label, profileDir, cli = SHARDCRAWL_CLI, extraArgs = []) {
  const out = join(work, `${label}`);
  const seeds = join(work, `seeds-${sim.web}-${scheme}.txt`);
  const seedCount = seedsFor(sim, seeds);
  const maxPages = budgetOf(sim.web);
  const redis = await startRedisServer(redisDir);
  // BENCH_MONITOR=1: counts the commands clients send (not those scripts run), by name; costs CPU.
  const monitor = process.env.BENCH_MONITOR ? await redis.client.duplicate().monitor() : undefined;
  if (process.env.BENCH_SLOWLOG) await startSlowlog(redis.client);
  const sent = {};
  // Keyed by command and the key's first two name parts ("hget sc:stats"), to tell callers apart.
  monitor?.on("monitor", (_t, a, source) => {
    if (source.startsWith("lua")) return;
    const k = `${a[0]} ${String(a[1] ?? "").split(":").slice(0, 2).join(":")}`;
    sent[k] = (sent[k] ?? 0) + 1;
  });
  const self0 = procCpu();
  const redis0 = redis.cpu();
  const argv = [
    cli, "crawl", "--seeds", seeds, "--out", out, "--redis", redis.url, "--progress", "off",
    "--max-pages", String(maxPages), "--delay", String(DELAY_MS), "--max-page-bytes", String(CUT),
    "--allow-private", "--ca-file", sim.ca, "--user-agent", BENCH_UA,
    "--connect-to", `:80:${sim.ip}:${sim.http}`, "--connect-to", `:443:${sim.ip}:${sim.https}`,
    "--expected-urls", "1000000", ...bothArgs, ...extraArgs,
  ];
  // Node 20 refuses --cpu-prof in NODE_OPTIONS; as execArgv it is inherited by fork() and by
  // worker threads, so every process and thread of the node writes its own profile.
  const execArgv = [...(profileDir ? ["--cpu-prof", `--cpu-prof-dir=${profileDir}`] : []), ...(cli === SHARDCRAWL_CLI ? aNodeArgs : [])];
  const t0 = performance.now();
  const env = { ...process.env, ...(cli === SHARDCRAWL_CLI ? aEnv : {}) };
  const proc = spawn(process.execPath, [...execArgv, ...argv], { stdio: ["ignore", "ignore", "pipe"], env });
  let stderr = "";
  proc.stderr.on("data", (b) => { stderr = (stderr + b).slice(-20_000); });
  // (CPU of every node process so far, pages fetched so far) pairs for the steady-state window.
  const sampler = sampleNodeCpu(proc, redis);
  const marks = sampler.marks;
  const code = await new Promise((r) => proc.once("exit", r));
  const wall = (performance.now() - t0) / 1000;
  if (code !== 0) {
    sampler.stop();
    throw new Error(`crawl exited ${code}: ${stderr.slice(-2000)}`);
  }
  const self1 = procCpu();
  const redisCpu = redis.cpu() - redis0;
  sampler.stop(); // Redis' last figure
  // The node's own processes were reaped by us (supervisor) and by it (children): cutime holds them all.
  const nodeCpu = self1.children - self0.children;
  const pages = readPages(out);
  const fetched = pages.filter((p) => p.status !== null && p.status !== undefined).length;
  const commands = await redisCommandCount(redis.client);
  const byScript = process.env.BENCH_SLOWLOG ? await readSlowlog(redis.client, cli) : undefined;
  if (monitor) {
    monitor.disconnect();
    process.stderr.write(`commands sent per page: ${JSON.stringify(Object.fromEntries(Object.entries(sent).map(([c, n]) => [c, +(n / fetched).toFixed(3)])))}\n`);
  }
  const statFetched = Number((await redis.client.hget("sc:stats", "fetched")) ?? 0);
  const stats = await redis.client.hgetall("sc:stats");
  const links = linkCounts(stats, pages);
  // The fetchers' connection counters (fetch/connection-stats.ts): robots.txt fetches included.
  const connections = { opened: Number(stats["conn:opened"] ?? 0), tlsHandshakes: Number(stats["tls:handshakes"] ?? 0), tlsResumed: Number(stats["tls:resumed"] ?? 0) };
  const memory = await redisMemory(redis.client);
  await redis.stop();
  const byRole = sampler.byRole();
  byRole.redis.cpuSeconds = redisCpu;
  const totalCpu = nodeCpu + redisCpu;
  const bytes = pages.reduce((n, p) => n + (p.bytes ?? 0), 0);
  const steady = steadyWindow(marks, statFetched);
  return {
    scheme, seeds: seedCount, pages: pages.length, fetched, bytes, wallSeconds: wall,
    pagesPerSecond: fetched / wall, cpuSeconds: totalCpu, nodeCpuSeconds: nodeCpu, redisCpuSeconds: redisCpu,
    pagesPerCpuSecond: fetched / totalCpu, cpuMsPerPage: (totalCpu / fetched) * 1000, steady, byRole, redis: memory,
    redisCommandsPerPage: commands.total / fetched, redisCommands: commands.byCommand,
    redisUsec: commands.usecByCommand, redisScriptUsPerPage: commands.scriptUsec / fetched,
    ...(byScript ? { redisSlowlog: byScript } : {}),
    truncated: pages.filter((p) => p.truncated).length, links, connections, rssGrowth: rssGrowth(marks, statFetched), maxPages,
    urls: pages.filter((p) => p.status === 200).map((p) => p.url),
    out,
  };
}

/**
 * Pages per CPU-second while the crawl runs at full speed: between the samples where STEADY_FROM
 * and STEADY_TO of its pages were fetched, so process start, module loading and the drain at the
 * end are left out (what a long crawl pays per page). Crawlee's peer reports the same window.
 */
const STEADY_FROM = 0.2;
const STEADY_TO = 0.9;
function steadyWindow(marks, total) {
  const a = marks.find((m) => m.fetched >= STEADY_FROM * total);
  const b = marks.findLast((m) => m.fetched <= STEADY_TO * total);
  if (!a || !b || b.fetched - a.fetched < 0.3 * total || b.cpu <= a.cpu) return undefined;
  const pages = b.fetched - a.fetched;
  const cpu = b.cpu - a.cpu;
  const msPerPageByRole = Object.fromEntries(Object.keys(b.roles).map((r) => [r, (((b.roles[r] ?? 0) - (a.roles[r] ?? 0)) / pages) * 1000]));
  return { from: STEADY_FROM, to: STEADY_TO, pages, cpuSeconds: cpu, pagesPerCpuSecond: pages / cpu, cpuMsPerPage: (cpu / pages) * 1000, msPerPageByRole };
}

/**
 * Links per parsed page as the crawler saw them (after its per-page de-duplication): in scope
 * (sent to the frontier), out of scope, and the share of in-scope links the seen filter already had.
 */
function linkCounts(stats, pages) {
  const parsed = Number(stats.parsed ?? 0) || 1;
  const inScope = pages.reduce((n, p) => n + (p.outlinks ?? 0), 0);
  const outOfScope = Number(stats.outOfScope ?? 0);
  // "duplicates" includes the links a parser's seen cache answered ("seenCached").
  const duplicates = Number(stats.duplicates ?? 0);
  return {
    perPage: (inScope + outOfScope) / parsed, inScopePerPage: inScope / parsed, outOfScopePerPage: outOfScope / parsed,
    duplicateShare: duplicates / Math.max(1, inScope), newPerPage: Number(stats.discovered ?? 0) / parsed,
    seenCachedPerPage: Number(stats.seenCached ?? 0) / parsed,
  };
}

/**
 * Redis per page, medians over the runs: CPU ms (whole run, steady state), commands served (those
 * scripts run included), script time, and calls and microseconds per command (INFO commandstats;
 * a script's time includes its commands').
 */
function redisPerPage(runs) {
  const med = (f) => median(runs.map(f));
  const commands = new Set(runs.flatMap((r) => Object.keys(r.redisUsec ?? {})));
  const byCommand = {};
  for (const c of commands) {
    byCommand[c] = { calls: med((r) => (r.redisCommands[c] ?? 0) / r.fetched), usec: med((r) => (r.redisUsec?.[c] ?? 0) / r.fetched) };
  }
  return {
    cpuMs: med((r) => (r.redisCpuSeconds / r.fetched) * 1000), steadyCpuMs: med((r) => r.steady?.msPerPageByRole?.redis ?? NaN),
    commands: med((r) => r.redisCommandsPerPage), scriptUsec: med((r) => r.redisScriptUsPerPage ?? NaN), byCommand,
  };
}

/** Resident memory per role at 30% and at 90% of the crawl's pages, and the growth in between (MB). */
function rssGrowth(marks, total) {
  const a = marks.find((m) => m.fetched >= 0.3 * total);
  const b = marks.findLast((m) => m.fetched <= 0.9 * total);
  if (!a || !b || a === b) return undefined;
  const out = {};
  for (const r of Object.keys(b.rss)) out[r] = { at30: a.rss[r] ?? 0, at90: b.rss[r], growthMB: b.rss[r] - (a.rss[r] ?? 0) };
  return out;
}

function readPages(out) {
  const dir = join(out, "pages");
  const lines = [];
  for (const f of existsSync(dir) ? readdirSync(dir).sort() : []) {
    for (const l of readFileSync(join(dir, f), "utf8").split("\n")) {
      if (!l.trim()) continue;
      try { lines.push(JSON.parse(l)); } catch { /* partial line */ }
    }
  }
  return lines;
}

/**
 * Commands Redis served during the crawl (INFO commandstats; the bench's own PING, HGET of the
 * page count and the end-of-run reads are the only other callers): calls and microseconds spent in
 * each command. A script's time (fcall, or evalsha in builds before the scripts became Redis functions) includes the commands it runs, which are also counted
 * under their own names (calls made from Lua), so the sum of usec counts script bodies twice;
 * `scriptUsec` is the scripts' total (BENCH_SLOWLOG splits it by script).
 */
async function redisCommandCount(r) {
  const byCommand = {};
  const usecByCommand = {};
  let total = 0;
  for (const m of (await r.info("commandstats")).matchAll(/^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/gm)) {
    byCommand[m[1]] = Number(m[2]);
    usecByCommand[m[1]] = Number(m[3]);
    total += Number(m[2]);
  }
  const scriptUsec = (usecByCommand.fcall ?? 0) + (usecByCommand.evalsha ?? 0) + (usecByCommand.eval ?? 0);
  return { total, byCommand, usecByCommand, scriptUsec };
}

/**
 * Redis time per script, from the slow log with a threshold of 0 (BENCH_SLOWLOG=1: every command is
 * logged, which costs Redis CPU, so the run's CPU figures are not comparable): script name ->
 * {calls, usec}, and the same for commands sent directly. Script names come from the function name
 * (FCALL sc<tag>_<script>), or for older builds from the SHA-1 of the sources they sent (EVALSHA).
 */
async function startSlowlog(r) {
  await r.config("SET", "slowlog-log-slower-than", "0");
  await r.config("SET", "slowlog-max-len", "2000000");
  await r.slowlog("RESET");
}
async function readSlowlog(r, cli) {
  const names = await scriptNames(cli);
  const entries = await r.slowlog("GET", "-1");
  const by = {};
  for (const [, , usec, argv] of entries) {
    const cmd = String(argv[0]).toLowerCase();
    const name = cmd === "fcall" ? `script:${String(argv[1]).replace(/^sc[0-9a-f]+_/, "")}` : cmd === "evalsha" ? `script:${names.get(String(argv[1])) ?? String(argv[1]).slice(0, 8)}` : cmd;
    const e = (by[name] ??= { calls: 0, usec: 0 });
    e.calls++;
    e.usec += Number(usec);
  }
  return by;
}
async function scriptNames(cli) {
  const dist = join(cli, "../../frontier/scripts.js");
  const { Scripts, SCRIPT_FILES } = await import(dist);
  const { createHash } = await import("node:crypto");
  const s = new Scripts({ options: {} });
  return new Map(Object.keys(SCRIPT_FILES).map((n) => [createHash("sha1").update(s.source(n)).digest("hex"), n]));
}

// Queue elements are decoded by the frontier's own code (packed, depth-byte and older forms).
const { decodeElement } = await import(join(ROOT, "packages/shardcrawl/dist/frontier/element.js"));

/** Redis bytes per queued URL (host queues + per-host hashes) against raw path bytes, and per seen URL. */
async function redisMemory(r) {
  let queued = 0, queueBytes = 0, rawBytes = 0, hostBytes = 0, hosts = 0, bloomBytes = 0;
  let cursor = "0";
  do {
    const [next, keys] = await r.scan(cursor, "COUNT", 1000);
    cursor = next;
    for (const k of keys) {
      if (/^sc:q\d+:/.test(k)) {
        // Packed elements are binary: read them as bytes. Raw bytes = the path+query with its
        // leading "/" (or the whole URL for an element that holds one), as the scaling bench counts.
        const items = await r.lrangeBuffer(k, 0, -1);
        queued += items.length;
        for (const it of items) rawBytes += Buffer.byteLength(decodeElement(it).url);
        queueBytes += Number(await r.memory("USAGE", k, "SAMPLES", "0"));
      } else if (k.startsWith("sc:h:")) {
        hosts++;
        hostBytes += Number(await r.memory("USAGE", k));
      } else if (/^sc:bf:\d+$/.test(k)) {
        bloomBytes += Number(await r.strlen(k));
      }
    }
  } while (cursor !== "0");
  const stats = await r.hgetall("sc:stats");
  const params = JSON.parse((await r.get("sc:bf:params")) ?? "{}");
  const seen = Number(stats.seeds ?? 0) + Number(stats.discovered ?? 0);
  return {
    usedMemory: Number(/used_memory:(\d+)/.exec(await r.info("memory"))?.[1]), queued, queueBytes, rawPathBytes: rawBytes,
    queueBytesPerUrl: queueBytes / Math.max(1, queued), rawBytesPerUrl: rawBytes / Math.max(1, queued), queueVsRaw: queueBytes / Math.max(1, rawBytes),
    hosts, hostStateBytesPerHost: hostBytes / Math.max(1, hosts), bloomBytes, bloomParams: params,
    bloomBitsPerPlannedUrl: params.m ? params.m / 1_000_000 : undefined, seenUrls: seen,
  };
}

/** The floor of HTTP cost: a bare undici GET loop over the same URLs in a child process. */
function undiciFloor(sim, urls, scheme, fresh = false) {
  const file = join(work, `floor-urls-${scheme}.json`);
  writeFileSync(file, JSON.stringify(urls));
  const r = spawnSync(process.execPath, [new URL("./undici-floor.mjs", import.meta.url).pathname, "--urls", file, "--ip", sim.ip, "--http", String(sim.http), "--https", String(sim.https), "--ca", sim.ca, "--cut", String(CUT), ...(fresh ? ["--fresh-connections"] : [])], { encoding: "utf8", maxBuffer: 16 << 20 });
  if (r.status !== 0) throw new Error(`undici floor: ${r.stderr}`);
  return JSON.parse(r.stdout);
}

/** Crawlee's CheerioCrawler on the same site, in its own process (packages/bench). */
function crawleePeer(sim, scheme, seedsFile) {
  if (sim.http !== 80) return { skipped: "simweb could not bind ports 80/443 (not root), and Crawlee has no connect-to" };
  const dir = join(work, `crawlee-${sim.web}-${scheme}`);
  const maxPages = budgetOf(sim.web);
  const r = spawnSync(process.execPath, [new URL("../../packages/bench/crawlee-peer.mjs", import.meta.url).pathname,
    "--seeds", seedsFile, "--ip", sim.ip, "--max-pages", String(maxPages), "--delay", String(DELAY_MS), "--cut", String(CUT), "--dir", dir, "--user-agent", BENCH_UA],
  { encoding: "utf8", maxBuffer: 16 << 20, env: { ...process.env, NODE_EXTRA_CA_CERTS: sim.ca, CRAWLEE_STORAGE_DIR: dir }, timeout: 30 * 60_000 });
  if (r.status !== 0) return { error: `exit ${r.status}: ${(r.stderr ?? "").slice(-1500)}` };
  return JSON.parse(r.stdout.trim().split("\n").pop());
}

/** (web, scheme) pairs of this run: every web for each scheme in turn (so a run cut short has both webs side by side). */
function webSchemes() {
  return opts.schemes.split(",").flatMap((s) => opts.webs.split(",").map((w) => [w, s]));
}

const results = [];
// Written after each scheme, so a run cut short keeps what it measured.
const save = () => writeResult(opts.out ?? join(RESULTS_DIR, `crawl-${opts.mode}.json`), {
  bench: "crawl", mode: opts.mode, hosts: HOSTS, maxPages: MAX_PAGES, realHosts: REAL_HOSTS, realMaxPages: REAL_MAX_PAGES, broadHosts: BROAD_HOSTS, broadMaxPages: BROAD_MAX_PAGES, delayMs: DELAY_MS, cutBytes: CUT, reps: REPS, crawleeReps: CRAWLEE_REPS,
  command: `node scripts/bench/crawl.mjs --mode ${opts.mode}${opts.profile ? " --profile" : ""}${opts.connections !== "kept" ? ` --connections ${opts.connections} --webs ${opts.webs} --schemes ${opts.schemes}${opts.compare ? ` --compare ${opts.compare}` : ""}` : opts.webs !== "real,simweb" ? ` --webs ${opts.webs}${opts.reps ? ` --reps ${opts.reps}` : ""}${opts["skip-peers"] ? " --skip-peers" : ""}` : ""}`, results,
});
/**
 * A/B: this build (with --a-args added to its crawl flags) and the one at --compare (a
 * dist/cli/main.js), alternating over the same simweb.
 */
async function compareBuilds(cliB) {
  for (const [web, scheme] of webSchemes()) {
    const sim = await startWeb(scheme, join(work, `web-${web}-${scheme}`), web);
    try {
      const runs = { a: [], b: [] };
      for (let i = 0; i < REPS; i++) {
        for (const [k, cli] of i % 2 ? [["b", cliB], ["a", SHARDCRAWL_CLI]] : [["a", SHARDCRAWL_CLI], ["b", cliB]]) {
          const run = await crawlOnce(scheme, sim, join(work, `redis-${web}-${scheme}-${k}${i}`), `crawl-${web}-${scheme}-${k}${i}`, undefined, cli, k === "a" ? aArgs : []);
          const roles = Object.entries(run.byRole).map(([n, r]) => `${n} ${fmt((r.cpuSeconds / run.fetched) * 1000, 2)}`).join(", ");
          process.stderr.write(`${web} ${scheme} ${k}${i} (load ${loadavg()[0].toFixed(2)}): ${run.fetched} pages, ${fmt(run.links.perPage)} links/page (${fmt(run.links.inScopePerPage)} in scope), ${fmt(run.pagesPerSecond)} pages/s, ${fmt(run.pagesPerCpuSecond)} pages/CPU-s (steady ${fmt(run.steady?.pagesPerCpuSecond)}: ${Object.entries(run.steady?.msPerPageByRole ?? {}).map(([r, v]) => `${r} ${fmt(v, 2)}`).join(", ")}), ${fmt(run.redisCommandsPerPage, 2)} redis cmds/page, ${fmt(run.redisScriptUsPerPage, 0)} us/page in scripts (ms/page: ${roles})\n`);
          runs[k].push(run);
        }
      }
      for (const k of ["a", "b"]) {
        const cmds = {};
        for (const [c, n] of Object.entries(runs[k][0].redisCommands)) cmds[c] = fmt(n / runs[k][0].fetched, 2);
        const med = (f) => fmt(median(runs[k].map(f)), 2);
        const rp = redisPerPage(runs[k]);
        const top = Object.entries(rp.byCommand).sort((x, y) => y[1].usec - x[1].usec).slice(0, 12).map(([c, v]) => `${c} ${fmt(v.calls, 2)}x ${fmt(v.usec, 1)}us`).join(", ");
        process.stderr.write(`${web} ${scheme} ${k === "a" ? "this build" : cliB}: redis per page (medians): ${fmt(rp.cpuMs, 3)} ms CPU (steady ${fmt(rp.steadyCpuMs, 3)}), ${fmt(rp.commands, 1)} commands, ${fmt(rp.scriptUsec, 0)} us in scripts; by command: ${top}\n`);
        process.stderr.write(`${web} ${scheme} ${k === "a" ? "this build" : cliB}: per-page ms median: ${["supervisor", "fetcher", "parser", "redis"].map((r) => `${r} ${med((x) => (x.byRole[r]?.cpuSeconds ?? NaN) / x.fetched * 1000)}`).join(", ")}; median ${fmt(median(runs[k].map((r) => r.pagesPerCpuSecond)))} pages/CPU-s (steady ${fmt(median(runs[k].map((r) => r.steady?.pagesPerCpuSecond ?? NaN)))}), ${fmt(median(runs[k].map((r) => r.redisCommandsPerPage)), 2)} redis cmds/page ${JSON.stringify(cmds)}\n`);
      }
    } finally {
      await sim.stop();
    }
  }
}

/**
 * Kept-alive connections against a new connection per page, over the same pages: two copies of the
 * real web, one answering "Connection: close", crawled in alternation (kept, new, new, kept, ...).
 * A new connection per page is the fleet's regime (a host's delay outlasts the keep-alive time);
 * its runs crawl with --cut-drain-bytes 0, as the node does at such delays. Prints and saves CPU ms
 * per page by process (whole run and steady state), pages/s (throughput must stay comparable), and
 * the connections and full TLS handshakes the fetchers counted, which prove the regime. With
 * --compare, each mode also runs the other build, alternating, and the ratios are printed; --cli
 * runs another copy of this build's dist (so the checkout can be rebuilt while the bench runs).
 */
async function compareConnections(modes, cliB) {
  // Each mode with this build ("a") and, with --compare, with the other build too ("b").
  const variants = modes.flatMap((m) => [{ key: m, mode: m, cli: opts.cli ?? SHARDCRAWL_CLI, extra: aArgs }, ...(cliB ? [{ key: `${m} b`, mode: m, cli: cliB, extra: [] }] : [])]);
  for (const [web, scheme] of webSchemes()) {
    if (!isReal(web)) {
      process.stderr.write(`--connections: skipping the ${web} web (only the real web can close connections)\n`);
      continue;
    }
    const sims = {};
    try {
      for (const m of modes) sims[m] = await startWeb(scheme, join(work, `web-${web}-${scheme}-${m}`), web, { connectionClose: m === "new" });
      const runs = Object.fromEntries(variants.map((v) => [v.key, []]));
      for (let i = 0; i < REPS; i++) {
        for (const v of i % 2 ? [...variants].reverse() : variants) {
          const extra = v.mode === "new" ? ["--cut-drain-bytes", "0"] : [];
          const tag = v.key.replace(" ", "-");
          const run = await crawlOnce(scheme, sims[v.mode], join(work, `redis-${web}-${scheme}-${tag}${i}`), `crawl-${web}-${scheme}-${tag}${i}`, undefined, v.cli, [...v.extra, ...extra]);
          run.load = loadavg().map((x) => Number(x.toFixed(2)));
          const c = run.connections;
          const roles = Object.entries(run.byRole).map(([n, r]) => `${n} ${fmt((r.cpuSeconds / run.fetched) * 1000, 2)}`).join(", ");
          process.stderr.write(`${web} ${scheme} ${v.key} ${i} (load ${run.load[0]}): ${run.fetched} pages, ${fmt(run.pagesPerSecond)} pages/s, ${fmt(run.cpuMsPerPage, 2)} ms CPU/page (steady ${fmt(run.steady?.cpuMsPerPage, 2)}: ${Object.entries(run.steady?.msPerPageByRole ?? {}).map(([r, x]) => `${r} ${fmt(x, 2)}`).join(", ")}); whole run ms/page: ${roles}; ${c.opened} connections (${fmt(c.opened / run.fetched, 3)}/page), TLS ${c.tlsHandshakes} full + ${c.tlsResumed} resumed\n`);
          runs[v.key].push(run);
        }
      }
      const summary = {};
      for (const v of variants) {
        const rs = runs[v.key];
        const med = (f) => median(rs.map(f));
        const tls = med((r) => r.connections.tlsHandshakes + r.connections.tlsResumed);
        summary[v.key] = {
          pagesPerSecond: med((r) => r.pagesPerSecond),
          fetcherMsPerPage: med((r) => ((r.byRole.fetcher?.cpuSeconds ?? NaN) / r.fetched) * 1000),
          steadyFetcherMsPerPage: med((r) => r.steady?.msPerPageByRole?.fetcher ?? NaN),
          nodeMsPerPage: med((r) => r.cpuMsPerPage),
          steadyNodeMsPerPage: med((r) => r.steady?.cpuMsPerPage ?? NaN),
          msPerPageByRole: Object.fromEntries(["supervisor", "fetcher", "parser", "redis"].map((role) => [role, med((r) => ((r.byRole[role]?.cpuSeconds ?? NaN) / r.fetched) * 1000)])),
          connectionsPerPage: med((r) => r.connections.opened / r.fetched),
          connections: med((r) => r.connections.opened),
          tlsFullHandshakes: med((r) => r.connections.tlsHandshakes),
          tlsResumed: med((r) => r.connections.tlsResumed),
          tlsResumedShare: tls > 0 ? med((r) => r.connections.tlsResumed / Math.max(1, r.connections.tlsHandshakes + r.connections.tlsResumed)) : undefined,
          truncated: med((r) => r.truncated),
        };
        const x = summary[v.key];
        process.stderr.write(`${web} ${scheme} ${v.key} (medians of ${rs.length}): fetcher ${fmt(x.fetcherMsPerPage, 3)} ms/page (steady ${fmt(x.steadyFetcherMsPerPage, 3)}), node ${fmt(x.nodeMsPerPage, 2)} (steady ${fmt(x.steadyNodeMsPerPage, 2)}), ${fmt(x.pagesPerSecond)} pages/s, ${fmt(x.connectionsPerPage, 3)} connections/page, TLS ${x.tlsFullHandshakes} full / ${x.tlsResumed} resumed${x.tlsResumedShare === undefined ? "" : ` (${fmt(x.tlsResumedShare * 100, 1)}% resumed)`}\n`);
      }
      const fields = ["fetcherMsPerPage", "steadyFetcherMsPerPage", "nodeMsPerPage", "steadyNodeMsPerPage"];
      for (const b of cliB ? ["", " b"] : [""]) {
        const kept = summary[`kept${b}`], fresh = summary[`new${b}`];
        if (!kept || !fresh) continue;
        const d = (summary[`newMinusKept${b}`] = Object.fromEntries(fields.map((f) => [f, fresh[f] - kept[f]])));
        process.stderr.write(`${web} ${scheme}${b ? ` (${cliB})` : ""} new connection minus kept-alive, ms/page: fetcher ${fmt(d.fetcherMsPerPage, 3)} (steady ${fmt(d.steadyFetcherMsPerPage, 3)}), node ${fmt(d.nodeMsPerPage, 3)} (steady ${fmt(d.steadyNodeMsPerPage, 3)})\n`);
      }
      for (const m of cliB ? modes : []) {
        const a = summary[m], b = summary[`${m} b`];
        process.stderr.write(`${web} ${scheme} ${m}: this build / ${cliB}: fetcher ${fmt(a.fetcherMsPerPage / b.fetcherMsPerPage, 3)} (steady ${fmt(a.steadyFetcherMsPerPage / b.steadyFetcherMsPerPage, 3)}), node ${fmt(a.nodeMsPerPage / b.nodeMsPerPage, 3)} (steady ${fmt(a.steadyNodeMsPerPage / b.steadyNodeMsPerPage, 3)})\n`);
      }
      const profiles = {};
      for (const m of opts.profile ? modes : []) {
        const pdir = join(work, `profiles-${web}-${scheme}-${m}`);
        const run = await crawlOnce(scheme, sims[m], join(work, `redis-${web}-${scheme}-${m}-prof`), `crawl-${web}-${scheme}-${m}-prof`, pdir, SHARDCRAWL_CLI, [...aArgs, ...(m === "new" ? ["--cut-drain-bytes", "0"] : [])]);
        profiles[m] = analyseProfiles(pdir, run.fetched);
        process.stderr.write(`${web} ${scheme} ${m} profile ms/page: ${JSON.stringify(profiles[m].msPerPage)}\n`);
      }
      results.push({ web, scheme, ...(cliB ? { compare: cliB } : {}), connections: summary, ...(opts.profile ? { profiles } : {}), runs: Object.fromEntries(variants.map((v) => [v.key, runs[v.key].map(({ urls: _u, ...r }) => r)])) });
      save();
    } finally {
      for (const sim of Object.values(sims)) await sim.stop();
    }
  }
}

if (opts.connections !== "kept") {
  const modes = opts.connections.split(",").filter(Boolean);
  if (modes.some((m) => m !== "kept" && m !== "new")) throw new Error(`--connections: expected kept, new or kept,new; got ${opts.connections}`);
  await compareConnections(modes, opts.compare);
  if (opts.profile) process.stderr.write(`profiles kept under ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
  process.exit(0);
}

if (opts.compare) {
  await compareBuilds(opts.compare);
  if (process.env.BENCH_KEEP === "1") process.stderr.write(`work kept under ${work}\n`);
  else rmSync(work, { recursive: true, force: true });
  process.exit(0);
}

for (const [web, scheme] of webSchemes()) {
  const sim = await startWeb(scheme, join(work, `web-${web}-${scheme}`), web);
  try {
    const runs = [];
    for (let i = 0; i < REPS; i++) {
      const run = await crawlOnce(scheme, sim, join(work, `redis-${web}-${scheme}-${i}`), `crawl-${web}-${scheme}-${i}`, undefined, SHARDCRAWL_CLI, aArgs);
      run.load = loadavg().map((x) => Number(x.toFixed(2)));
      process.stderr.write(`${web} ${scheme} run ${i} (load ${run.load[0]}): ${run.fetched} pages, ${fmt(run.links.perPage)} links/page, ${fmt(run.pagesPerSecond)} pages/s, ${fmt(run.pagesPerCpuSecond)} pages/CPU-s, steady ${fmt(run.steady?.pagesPerCpuSecond)} (redis ${fmt(run.redisCpuSeconds, 2)} s)\n`);
      runs.push(run);
    }
    const urls = runs[0].urls;
    const floors = [];
    for (let i = 0; i < REPS && !opts["skip-peers"]; i++) floors.push(undiciFloor(sim, urls, scheme));
    process.stderr.write(`${scheme} undici floor: ${fmt(median(floors.map((f) => f.pagesPerCpuSecond)))} pages/CPU-s\n`);
    // The same loop with a new connection for every request (sessions resumed): the HTTP cost of a
    // page when per-host delays outlast keep-alive, as in a crawl of many domains at 70 s each.
    const freshFloors = [];
    for (let i = 0; i < REPS && !opts["skip-peers"]; i++) freshFloors.push(undiciFloor(sim, urls, scheme, true));
    process.stderr.write(`${scheme} undici floor, a new connection per page: ${fmt(median(freshFloors.map((f) => f.pagesPerCpuSecond)))} pages/CPU-s\n`);
    const crawlee = [];
    for (let i = 0; i < CRAWLEE_REPS && !opts["skip-peers"]; i++) {
      const c = crawleePeer(sim, scheme, join(work, `seeds-${web}-${scheme}.txt`));
      crawlee.push(c);
      process.stderr.write(`${scheme} crawlee run ${i}: ${JSON.stringify({ ...c, urls: undefined }).slice(0, 300)}\n`);
      if (c.skipped || c.error) break;
    }
    let profile;
    if (opts.profile) {
      const pdir = join(work, `profiles-${web}-${scheme}`);
      const run = await crawlOnce(scheme, sim, join(work, `redis-${web}-${scheme}-prof`), `crawl-${web}-${scheme}-prof`, pdir, SHARDCRAWL_CLI, aArgs);
      profile = { ...analyseProfiles(pdir, run.fetched), redisMsPerPage: (run.redisCpuSeconds / run.fetched) * 1000, profiledPagesPerCpuSecond: run.pagesPerCpuSecond };
      process.stderr.write(`${scheme} profile: ${JSON.stringify(profile.msPerPage)}\n`);
    }
    const ok = crawlee.filter((c) => c.pagesPerCpuSecond);
    results.push({
      web, scheme, webInfo: sim.info?.stats,
      links: Object.fromEntries(["perPage", "inScopePerPage", "outOfScopePerPage", "duplicateShare", "newPerPage", "seenCachedPerPage"].map((k) => [k, median(runs.map((r) => r.links[k]))])),
      redisPerPage: redisPerPage(runs),
      runs: runs.map(({ urls: _u, ...r }) => r),
      median: {
        pagesPerSecond: median(runs.map((r) => r.pagesPerSecond)),
        pagesPerCpuSecond: median(runs.map((r) => r.pagesPerCpuSecond)),
        cpuMsPerPage: median(runs.map((r) => r.cpuMsPerPage)),
        steadyPagesPerCpuSecond: median(runs.map((r) => r.steady?.pagesPerCpuSecond ?? NaN)),
        steadyCpuMsPerPage: median(runs.map((r) => r.steady?.cpuMsPerPage ?? NaN)),
      },
      undiciFloor: { runs: floors, pagesPerCpuSecond: median(floors.map((f) => f.pagesPerCpuSecond)), cpuMsPerPage: median(floors.map((f) => f.cpuMsPerPage)) },
      undiciFreshConnectionFloor: { runs: freshFloors, pagesPerCpuSecond: median(freshFloors.map((f) => f.pagesPerCpuSecond)), cpuMsPerPage: median(freshFloors.map((f) => f.cpuMsPerPage)) },
      crawlee: {
        runs: crawlee,
        pagesPerCpuSecond: ok.length ? median(ok.map((c) => c.pagesPerCpuSecond)) : undefined,
        steadyPagesPerCpuSecond: ok.some((c) => c.steady) ? median(ok.filter((c) => c.steady).map((c) => c.steady.pagesPerCpuSecond)) : undefined,
      },
      profile,
    });
    save();
  } finally {
    await sim.stop();
  }
}
if (opts.profile) process.stderr.write(`profiles kept under ${work}\n`);
else if (process.env.BENCH_KEEP === "1") process.stderr.write(`work kept under ${work}\n`);
else rmSync(work, { recursive: true, force: true });
