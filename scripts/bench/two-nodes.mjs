#!/usr/bin/env node
// One node or two on one machine, over the same real-page web and the same page total: CPU per page
// summed over every process of every node (supervisors, fetchers, parsers and each node's own
// redis-server) from /proc, redis-server ms per page of each node, and the links that crossed
// between the two (outbox files this script moves into the other node's inbox every 0.5 s, as the
// fleet's exchange timer does every 15 minutes). What running two nodes per machine, each with its
// own Redis (docs/operations.md), costs against one node. Alternating runs, medians.
// Usage: node scripts/bench/two-nodes.mjs [--reps 3] [--pages 3000] [--scheme http|https] [--nodes 1,2] [--one-node-processes F,P] [--profile DIR] [--out FILE]
// (--profile DIR: V8 CPU profiles of every node process into DIR; profiling inflates the CPU figures.)
/* global fetch */
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { BENCH_UA, RESULTS_DIR, SHARDCRAWL_CLI, SIMWEB_CLI, args, benchRequire, descendants, fmt, machine, median, procCmd, procCpu, spawnServer, writeResult } from "./common.mjs";

const opts = args({ "one-node-processes": { type: "string" }, profile: { type: "string" }, nodes: { type: "string", default: "1,2" }, reps: { type: "string", default: "3" }, pages: { type: "string", default: "3000" }, scheme: { type: "string", default: "http" } });
const PAGES = Number(opts.pages);
const REPS = Number(opts.reps);
const SCHEME = opts.scheme;
if (SCHEME !== "http" && SCHEME !== "https") throw new Error(`--scheme must be http or https, got ${SCHEME}`);
const CORPUS = join(benchRequire.resolve("htmlparser-benchmark/package.json"), "..", "files");
const HOSTS = 66;
const DELAY_MS = 100;
const CUT = 250 * 1024;
const EXCHANGE_MS = 500;
const work = mkdtempSync(join(tmpdir(), "bench-two-nodes-"));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const ONE = opts["one-node-processes"] ? opts["one-node-processes"].split(",").map(Number) : null;
const ROLES = ["supervisor", "fetcher", "parser", "redis"];

/** The web every run crawls: simweb realweb (htmlparser-benchmark's pages on 66 hosts). */
const seeds = join(work, "seeds.txt");
const sim = await spawnServer([SIMWEB_CLI, "realweb", "--corpus", CORPUS, "--hosts", String(HOSTS), "--seeds-out", seeds, "--scheme", SCHEME, "--ca-dir", join(work, "ca"), "--port", "0", "--https-port", "0"], work);

/** Moves finished outbox files (<out>/outbox/<dest>/*.urls.gz) into their owner's inbox; returns files and bytes moved. */
function exchange(outs) {
  let files = 0;
  let bytes = 0;
  for (const [name, out] of outs) {
    const box = join(out, "outbox");
    if (!existsSync(box)) continue;
    for (const dest of readdirSync(box)) {
      const to = outs.get(dest);
      if (!to) continue;
      for (const f of readdirSync(join(box, dest))) {
        if (!f.endsWith(".urls.gz")) continue;
        mkdirSync(join(to, "inbox"), { recursive: true });
        bytes += statSync(join(box, dest, f)).size;
        renameSync(join(box, dest, f), join(to, "inbox", `${name}-${f}`));
        files++;
      }
    }
  }
  return { files, bytes };
}

async function stats(out) {
  try {
    const { statusPort } = JSON.parse(readFileSync(join(out, "status.json"), "utf8"));
    const r = await fetch(`http://127.0.0.1:${statusPort}/status`, { signal: AbortSignal.timeout(2000) });
    return (await r.json()).stats;
  } catch {
    return null;
  }
}

async function runOnce(nodes, label) {
  const dir = join(work, label);
  const names = Array.from({ length: nodes }, (_, i) => `n${i}`);
  const cluster = {
    name: "bench", shardKey: "domain", seeds, outRoot: join(dir, "nodes"),
    defaults: {
      exitWhenDone: false, progress: "off", maxPages: Math.ceil(PAGES / nodes), delayMs: DELAY_MS, maxPageBytes: CUT,
      allowPrivate: true, caFile: sim.ca, userAgent: BENCH_UA, expectedUrls: 1_000_000,
      connectTo: [`:80:127.0.0.1:${sim.http}`, `:443:127.0.0.1:${sim.https}`], inboxPollMs: EXCHANGE_MS, outboxMaxFileAgeMs: EXCHANGE_MS,
    },
    // --one-node-processes F,P: the single node runs F fetchers and P parsers (as many processes as two nodes' defaults: 2,2).
    nodes: names.map((name) => ({ name, ...(nodes === 1 && ONE ? { config: { fetchers: ONE[0], parsers: ONE[1] } } : {}) })),
  };
  mkdirSync(dir, { recursive: true });
  const file = join(dir, "cluster.json");
  writeFileSync(file, JSON.stringify(cluster));
  const outs = new Map(names.map((n) => [n, join(dir, "nodes", n)]));
  const procs = names.map((n) => spawn(process.execPath, [...(opts.profile ? ["--cpu-prof", `--cpu-prof-dir=${opts.profile}`] : []), SHARDCRAWL_CLI, "node", "--cluster", file, "--name", n], { stdio: ["ignore", "ignore", "inherit"] }));
  // Every process of every node: the last CPU reading of each pid (a process's time is gone once it exits).
  const cpu = new Map();
  const sample = () => {
    for (const [i, p] of procs.entries()) {
      for (const pid of [p.pid, ...descendants(p.pid)]) {
        const c = procCpu(pid);
        if (!c) continue;
        const cmd = procCmd(pid).join(" ");
        const role = cmd.includes("redis-server") ? "redis" : cmd.includes("fetcher-process") ? "fetcher" : cmd.includes("parser-process") ? "parser" : "supervisor";
        cpu.set(pid, { node: names[i], role, s: c.self });
      }
    }
  };
  const moved = { files: 0, bytes: 0 };
  const t0 = Date.now();
  let quiet = 0;
  let last = [];
  let lastFetched = -1;
  // (pages fetched, CPU so far) each tick: the steady state is the window from 20% to 90% of the pages.
  const marks = [];
  const sumCpu = (f) => [...cpu.values()].filter(f).reduce((a, x) => a + x.s, 0);
  while (Date.now() - t0 < 600_000) {
    await sleep(EXCHANGE_MS);
    sample();
    const m = exchange(outs);
    moved.files += m.files;
    moved.bytes += m.bytes;
    last = await Promise.all([...outs.values()].map(stats));
    if (last.some((s) => s === null)) continue;
    const fetched = last.reduce((a, s) => a + s.fetched, 0);
    marks.push({ fetched, cpu: sumCpu(() => true), redis: sumCpu((x) => x.role === "redis"), ...Object.fromEntries(ROLES.map((r) => [r, sumCpu((x) => x.role === r)])) });
    const idle = last.every((s) => (s.leases ?? 0) + (s.parseQueue ?? 0) + (s.parseInFlight ?? 0) === 0);
    // Done: nothing in flight anywhere, no links in transit and no page fetched for 2 s (the page
    // budgets are spent or the frontiers are empty).
    quiet = idle && m.files === 0 && fetched === lastFetched ? quiet + 1 : 0;
    lastFetched = fetched;
    if (quiet >= 4) break;
  }
  const wall = (Date.now() - t0) / 1000;
  for (const p of procs) p.kill("SIGTERM");
  await Promise.all(procs.map((p) => new Promise((r) => (p.exitCode !== null ? r() : p.once("exit", r)))));
  const pages = last.reduce((a, s) => a + (s?.fetched ?? 0), 0);
  const sum = sumCpu;
  const from = marks.find((m) => m.fetched >= 0.2 * pages);
  const to = marks.find((m) => m.fetched >= 0.9 * pages);
  const steady = from && to && to.fetched > from.fetched
    ? {
      pages: to.fetched - from.fetched, pagesPerCpuSecond: (to.fetched - from.fetched) / (to.cpu - from.cpu), redisMsPerPage: (1000 * (to.redis - from.redis)) / (to.fetched - from.fetched),
      msPerPageByRole: Object.fromEntries(ROLES.map((r) => [r, (1000 * (to[r] - from[r])) / (to.fetched - from.fetched)])),
    }
    : null;
  const total = sum(() => true);
  const perNode = names.map((n, i) => ({ node: n, pages: last[i]?.fetched ?? 0, cpuSeconds: sum((x) => x.node === n), redisCpuSeconds: sum((x) => x.node === n && x.role === "redis") }));
  rmSync(dir, { recursive: true, force: true });
  return {
    nodes, pages, wallSeconds: wall, cpuSeconds: total, cpuMsPerPage: (1000 * total) / pages, pagesPerCpuSecond: pages / total,
    redisMsPerPage: (1000 * sum((x) => x.role === "redis")) / pages, steady,
    redisMsPerPageOfEachNode: perNode.map((x) => (x.pages ? (1000 * x.redisCpuSeconds) / x.pages : 0)),
    perNode, outboxFilesMoved: moved.files, outboxBytesMoved: moved.bytes, load: loadavg()[0],
  };
}

const runs = { 1: [], 2: [] };
for (let r = 0; r < REPS; r++) {
  const order = opts.nodes.split(",").map(Number);
  for (const n of r % 2 ? [...order].reverse() : order) {
    const x = await runOnce(n, `run-${n}-${r}`);
    runs[n].push(x);
    process.stderr.write(`${n} node(s) #${r} (load ${x.load.toFixed(2)}): ${x.pages} pages, ${fmt(x.pagesPerCpuSecond)} pages/CPU-s (steady ${x.steady ? fmt(x.steady.pagesPerCpuSecond) : "n/a"}, ms/page ${x.steady ? ROLES.map((r) => `${r} ${fmt(x.steady.msPerPageByRole[r], 2)}`).join(", ") : "n/a"}), ${fmt(x.cpuMsPerPage, 2)} ms/page, redis ${fmt(x.redisMsPerPage, 2)} ms/page (each node: ${x.redisMsPerPageOfEachNode.map((v) => fmt(v, 2)).join(" / ")}), pages per node ${x.perNode.map((p) => p.pages).join(" / ")}, ${x.outboxFilesMoved} outbox files (${fmt(x.outboxBytesMoved / 1024)} KiB) moved\n`);
  }
}
const med = (n, k) => median(runs[n].map((x) => x[k]));
const medSteady = (n, k) => median(runs[n].filter((x) => x.steady).map((x) => x.steady[k]));
const summary = {
  onePagesPerCpuSecond: med(1, "pagesPerCpuSecond"), twoPagesPerCpuSecond: med(2, "pagesPerCpuSecond"),
  twoOverOne: med(2, "pagesPerCpuSecond") / med(1, "pagesPerCpuSecond"),
  oneRedisMsPerPage: med(1, "redisMsPerPage"), twoRedisMsPerPage: med(2, "redisMsPerPage"),
  oneSteadyPagesPerCpuSecond: medSteady(1, "pagesPerCpuSecond"), twoSteadyPagesPerCpuSecond: medSteady(2, "pagesPerCpuSecond"),
  twoOverOneSteady: medSteady(2, "pagesPerCpuSecond") / medSteady(1, "pagesPerCpuSecond"),
};
process.stderr.write(`medians: one node ${fmt(summary.onePagesPerCpuSecond)} pages/CPU-s, two nodes ${fmt(summary.twoPagesPerCpuSecond)} (${fmt(summary.twoOverOne, 3)}x); steady ${fmt(summary.oneSteadyPagesPerCpuSecond)} vs ${fmt(summary.twoSteadyPagesPerCpuSecond)} (${fmt(summary.twoOverOneSteady, 3)}x); redis ms/page (all Redis / pages) ${fmt(summary.oneRedisMsPerPage, 2)} vs ${fmt(summary.twoRedisMsPerPage, 2)}\n`);
await sim.stop();
rmSync(work, { recursive: true, force: true });
writeResult(opts.out ?? join(RESULTS_DIR, `two-nodes-${SCHEME}.json`), { machine: machine(), bench: "two-nodes", scheme: SCHEME, pages: PAGES, reps: REPS, command: `node scripts/bench/two-nodes.mjs --reps ${REPS} --pages ${PAGES} --scheme ${SCHEME}${ONE ? ` --one-node-processes ${ONE.join(",")}` : ""}`, summary, runs });
