// The demo: simweb (the synthetic web) plus a 3-node local shardcrawl cluster, run in crawl rounds
// by scripts/cluster.sh (each node crawls its own shard against its own Redis; links owned by
// other nodes travel as outbox files between rounds). Live progress from the nodes' /status, then
// a final report: pages, pages/s, per-node shares, and coverage and politeness over the union of
// the nodes' requests, checked by `simweb verify` from the server's own request log.
// Usage: node scripts/demo.mjs [--hosts N] [--nodes N] [--delay MS] [--page-cap N] [--out DIR]
/* global fetch */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const root = resolve(new URL("..", import.meta.url).pathname);
const { values: v } = parseArgs({
  options: {
    hosts: { type: "string", default: "60" },
    nodes: { type: "string", default: "3" },
    seed: { type: "string", default: "7" },
    preset: { type: "string", default: "polite" },
    delay: { type: "string", default: "50" },
    "page-cap": { type: "string", default: "80" },
    "max-pages": { type: "string" },
    out: { type: "string", default: join(root, "out", "demo") },
  },
});

const SIMWEB = join(root, "packages/simweb/dist/cli.js");
const CLUSTER_SH = join(root, "scripts/cluster.sh");
const UA = "shardcrawl-demo/0.1 (+https://github.com/shardcrawl/shardcrawl)";
const nodeUa = (name) => UA.replace(")", `; ${name})`);
const nodeCount = Number(v.nodes);
if (!Number.isInteger(nodeCount) || nodeCount < 1 || nodeCount > 16) throw new Error(`--nodes: expected 1..16, got ${v.nodes}`);
const names = Array.from({ length: nodeCount }, (_, i) => `node${i}`);

function run(cmd, args, opts = {}) {
  return new Promise((res, rej) => {
    const p = spawn(cmd, args, { stdio: ["ignore", opts.capture ? "pipe" : "inherit", "inherit"] });
    let out = "";
    p.stdout?.on("data", (d) => {
      out += d;
      opts.onData?.(String(d));
    });
    p.on("error", rej);
    p.on("exit", (code) => res({ code, out }));
  });
}

const out = resolve(v.out);
rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const state = join(out, "simweb");
// Realistic HTML with smaller pages and a cap on pages per host, so the demo takes a minute or two.
const simConfig = join(out, "simweb-config.json");
writeFileSync(simConfig, JSON.stringify({ hostPageCap: Number(v["page-cap"]), pageSize: { median: 40_000, mean: 60_000, min: 2_000, max: 1_000_000 } }));
const cfgFlags = ["--preset", v.preset, "--seed", v.seed, "--hosts", v.hosts, "--config", simConfig];

console.log(`== starting simweb (${v.hosts} hosts, preset ${v.preset}) on loopback`);
const sim = await run("bash", [CLUSTER_SH, "sim", "up", "--state", state, "--sim-args", [...cfgFlags, "--port", "0", "--https-port", "0"].join(" ")], { capture: true });
if (sim.code !== 0) process.exit(1);
const ports = JSON.parse(sim.out.trim().split("\n").pop());
console.log(`   http on 127.0.0.1:${ports.http}, https on 127.0.0.1:${ports.https}, CA ${ports.ca}`);
const stopSim = () => run("bash", [CLUSTER_SH, "sim", "down", "--state", state], { capture: true });

const seedsFile = join(out, "seeds.txt");
const seeds = await run(process.execPath, [SIMWEB, "seeds", ...cfgFlags], { capture: true });
writeFileSync(seedsFile, seeds.out);

const cluster = join(out, "cluster.yaml");
writeFileSync(cluster, JSON.stringify({
  name: "demo", seeds: "seeds.txt", outRoot: "nodes",
  defaults: {
    exitWhenDone: true, allowPrivate: true, caFile: ports.ca, delayMs: Number(v.delay), maxCrawlDelayMs: 500, maxDeferWaitMs: 10000,
    connectTo: [`:80:127.0.0.1:${ports.http}`, `:443:127.0.0.1:${ports.https}`],
    fetchers: 1, parsers: 1, expectedUrls: 1_000_000, progress: "off",
    ...(v["max-pages"] ? { maxPages: Number(v["max-pages"]) } : {}),
  },
  nodes: names.map((name) => ({ name, config: { userAgent: nodeUa(name) } })),
}, null, 2));
console.log(`== ${seeds.out.trim().split("\n").length} seeds; ${nodeCount}-node cluster in ${cluster} (every node reads the seed list and keeps its own shard)`);

// Live progress: poll every node's /status (its port is in <out>/status.json while it runs) and
// render the cluster's totals with shardcrawl's own progress line (rates over the last 10 s,
// queue depths, errors, and an ETA when --max-pages is set).
const { ProgressLine } = await import(join(root, "packages/shardcrawl/dist/node/progress.js"));
const outs = names.map((n) => join(out, "nodes", n));
// The last stats each node reported: between rounds a node is down and keeps its last numbers.
const lastStats = new Map();
async function nodeStatus(i) {
  const file = join(outs[i], "status.json");
  if (!existsSync(file)) return null;
  try {
    const { statusPort } = JSON.parse(readFileSync(file, "utf8"));
    const r = await fetch(`http://127.0.0.1:${statusPort}/status`, { signal: AbortSignal.timeout(1000) });
    const s = await r.json();
    lastStats.set(i, s.stats);
    return s.stats;
  } catch {
    return null; // between rounds, or not started yet
  }
}
const tty = Boolean(process.stdout.isTTY);
const t0 = Date.now();
let round = 0;
let lastPrint = 0;
const progress = new ProgressLine(10_000);
const clusterMaxPages = v["max-pages"] ? Number(v["max-pages"]) * nodeCount : undefined;
const timer = setInterval(async () => {
  const up = await Promise.all(names.map((_, i) => nodeStatus(i)));
  const all = names.map((_, i) => lastStats.get(i)).filter(Boolean);
  const sum = (k) => all.reduce((a, s) => a + (s[k] ?? 0), 0);
  progress.add({
    t: Date.now(), fetched: sum("fetched"), parsed: sum("parsed"), errors: sum("errors"), failed: sum("failed"),
    queued: sum("queued"), hosts: sum("hostsQueued"), leases: sum("leases"), parseQueue: sum("parseQueue") + sum("parseInFlight"),
    ...(clusterMaxPages ? { maxPages: clusterMaxPages } : {}),
  });
  const nodesPart = names.map((n, i) => `${n} ${lastStats.get(i)?.fetched ?? 0}${up[i] ? "" : " (idle)"}`).join(" ");
  const line = `round ${round} | ${nodesPart} | ${progress.render(t0)}`;
  if (tty) {
    const width = process.stdout.columns ? process.stdout.columns - 1 : 200;
    process.stdout.write(`\r\x1b[K${line.slice(0, width)}`);
  } else if (Date.now() - lastPrint >= 5000) {
    lastPrint = Date.now();
    console.log(line);
  }
}, 1000);

console.log(`== crawling: scripts/cluster.sh rounds --cluster ${cluster}`);
const rounds = await run("bash", [CLUSTER_SH, "rounds", "--cluster", cluster, "--max-rounds", "10"], {
  capture: true,
  onData: (d) => {
    for (const l of d.split("\n")) {
      const m = /^== round (\d+)/.exec(l);
      if (m) round = Number(m[1]);
      if (/^(exchange:|== done)/.test(l)) process.stdout.write(`${tty ? "\r\x1b[K" : ""}${l}\n`);
    }
  },
});
clearInterval(timer);
if (tty) process.stdout.write("\n");
const elapsedMs = Date.now() - t0;
await stopSim();
if (rounds.code !== 0) {
  console.error(`cluster rounds failed (exit ${rounds.code}); node logs: ${outs.map((o) => join(o, "node.log")).join(", ")}`);
  process.exit(1);
}

console.log("== verifying politeness and coverage over the union of the nodes' requests, from simweb's own log");
const simLog = join(state, "simweb-requests.jsonl");
const verifyArgs = [SIMWEB, "verify", "--log", simLog, ...cfgFlags, "--min-gap-ms", v.delay, "--max-concurrency", "1", "--user-agent", UA, "--max-crawl-delay", "500"];
if (!v["max-pages"]) verifyArgs.push("--seeds", seedsFile, "--scope", "domains");
const verify = await run(process.execPath, verifyArgs, { capture: true });
const report = JSON.parse(verify.out);
writeFileSync(join(out, "verify.json"), JSON.stringify(report, null, 2));

// Which node fetched each host (the user agent names the node): a host must have exactly one.
const byUa = new Map(names.map((n) => [nodeUa(n), n]));
const fetchers = new Map();
for (const l of readFileSync(simLog, "utf8").split("\n")) {
  if (!l) continue;
  const e = JSON.parse(l);
  const set = fetchers.get(e.host) ?? new Set();
  set.add(byUa.get(e.ua) ?? "?");
  fetchers.set(e.host, set);
}
const sharedHosts = [...fetchers.values()].filter((s) => s.size !== 1).length;

const summaries = outs.map((o) => JSON.parse(readFileSync(join(o, "summary.json"), "utf8")));
const totalPages = summaries.reduce((a, s) => a + s.stats.fetched, 0);
console.log("");
console.log("== report");
for (const s of summaries) {
  const c = s.stats.counters;
  console.log(`${s.node.padEnd(6)} pages ${String(s.stats.fetched).padStart(6)}  links sent to other nodes ${c.outboxLinks ?? 0}  errors ${s.stats.errors}  robots-refused ${s.stats.robotsDisallowed}`);
}
console.log(`pages fetched      ${totalPages} by ${nodeCount} nodes in ${(elapsedMs / 1000).toFixed(1)} s (${(totalPages / (elapsedMs / 1000)).toFixed(1)} pages/s for the cluster, rounds and restarts included)`);
console.log(`sharding           ${fetchers.size} hosts, each fetched by ${sharedHosts === 0 ? "exactly one node (its owner)" : `more than one node: ${sharedHosts} hosts`}`);
const vio = Object.entries(report.violations).map(([k, x]) => `${k} ${x.count}`).join(", ");
console.log(`politeness         ${report.ok ? "OK" : "VIOLATED"} (${report.requests} requests checked; violations: ${vio})`);
if (report.coverage) {
  const c = report.coverage;
  console.log(`coverage           ${c.fetchedExpected}/${c.expected} reachable, robots-allowed, in-scope pages fetched; missing ${c.missing.count}, duplicate fetches ${c.duplicates.extraFetches}`);
}
console.log(`output             ${join(out, "nodes")}/<node>/ (warc/, pages/, summary.json, node.log); verify report ${join(out, "verify.json")}`);
process.exit(report.ok && sharedHosts === 0 ? 0 : 1);
