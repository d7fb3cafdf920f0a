#!/usr/bin/env node
// Benchmark of simweb's serving speed: a loopback keep-alive load generator (node:http) against
// `simweb serve` pinned to one core (taskset -c 0, when available), with the client on another core.
// Reports requests/s and MB/s per scenario and the server's CPU use, as a markdown table.
// Usage: pnpm build && node scripts/bench-simweb.mjs [--seconds 10] [--connections 32]
// Every request goes to 127.0.0.1; runs are bounded in time and stop by themselves.
import { spawn, spawnSync } from "node:child_process";
import { Agent, request } from "node:http";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir, cpus, loadavg } from "node:os";
import { join, dirname, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const CLI = join(ROOT, "packages/simweb/dist/cli.js");
const { World, makeConfig } = await import(join(ROOT, "packages/simweb/dist/index.js"));

const { values: args } = parseArgs({
  options: { seconds: { type: "string", default: "10" }, connections: { type: "string", default: "32" } },
});
const SECONDS = Math.min(120, Math.max(1, Number(args.seconds)));
const CONNECTIONS = Math.min(512, Math.max(1, Number(args.connections)));
const hasTaskset = spawnSync("taskset", ["--version"]).status === 0 && cpus().length >= 2;

const SCENARIOS = [
  { name: "default page sizes (median 138 KB, mean 242 KB), identity", config: { preset: "polite", hosts: 1000, seed: 1 }, urls: 20_000, acceptEncoding: null },
  { name: "CI-sized pages (median 20 KB, mean 30 KB), identity", config: { preset: "polite", hosts: 1000, seed: 1, pageSize: { median: 20_000, mean: 30_000, min: 2_000, max: 2_000_000 } }, urls: 20_000, acceptEncoding: null },
  { name: "default sizes, gzip/br/deflate accepted (500 hot URLs, LRU warm)", config: { preset: "polite", hosts: 1000, seed: 1 }, urls: 500, acceptEncoding: "gzip, deflate, br" },
];

function cpuSeconds(pid) {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return (Number(f[11]) + Number(f[12])) / 100; // utime + stime in clock ticks (USER_HZ = 100)
  } catch {
    return NaN;
  }
}

const running = new Set();
process.on("exit", () => { for (const p of running) p.kill("SIGKILL"); }); // never leave a server behind

async function startServer(config) {
  const dir = mkdtempSync(join(tmpdir(), "simweb-bench-"));
  const cfgFile = join(dir, "config.json");
  writeFileSync(cfgFile, JSON.stringify(config));
  const cmd = hasTaskset ? "taskset" : process.execPath;
  const argv = [...(hasTaskset ? ["-c", "0", process.execPath] : []), CLI, "serve", "--config", cfgFile, "--port", "0", "--https-port", "0"];
  const proc = spawn(cmd, argv, { stdio: ["ignore", "pipe", "inherit"] });
  running.add(proc);
  proc.once("exit", () => running.delete(proc));
  const line = await new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error("simweb did not start")), 30_000);
    createInterface({ input: proc.stdout }).once("line", (l) => { clearTimeout(t); res(l); });
    proc.once("exit", (c) => { clearTimeout(t); rej(new Error(`simweb exited ${c}`)); });
  });
  return { proc, port: JSON.parse(line).http };
}

function urlsFor(config, count) {
  const w = new World(makeConfig(config));
  const out = [];
  const hosts = w.hosts();
  for (let i = 0; out.length < count; i++) {
    const h = hosts[i % hosts.length];
    const id = Math.floor(i / hosts.length) % h.pageCount;
    const p = w.page(w.model(h.index), id);
    if (p.kind === "html" && !p.huge) out.push({ host: h.name, path: p.path });
  }
  return out;
}

async function run(scenario) {
  const { proc, port } = await startServer(scenario.config);
  const urls = urlsFor(scenario.config, scenario.urls);
  const agent = new Agent({ keepAlive: true, maxSockets: CONNECTIONS });
  let requests = 0, bytes = 0, errors = 0, next = 0, measuring = false;
  const headers = (u) => ({ host: u.host, "user-agent": "simweb-bench/1.0", ...(scenario.acceptEncoding ? { "accept-encoding": scenario.acceptEncoding } : {}) });
  const one = (u) => new Promise((res) => {
    const req = request({ host: "127.0.0.1", port, path: u.path, agent, headers: headers(u), timeout: 30_000 }, (r) => {
      let n = 0;
      r.on("data", (c) => { n += c.length; });
      r.on("end", () => { if (measuring) { requests++; bytes += n; if (r.statusCode !== 200) errors++; } res(); });
      r.on("error", () => { errors++; res(); });
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", () => { errors++; res(); });
    req.end();
  });
  if (urls.length <= 1000) {
    // Small hot sets: one full pass first, so the measured run sees a warm compression cache.
    let i = 0;
    await Promise.all(Array.from({ length: CONNECTIONS }, async () => { while (i < urls.length) await one(urls[i++]); }));
  }
  let stop = false;
  const worker = async () => { while (!stop) await one(urls[next++ % urls.length]); };
  const workers = Array.from({ length: CONNECTIONS }, worker);
  await new Promise((r) => setTimeout(r, 2000)); // warm-up (JIT, caches)
  measuring = true;
  const cpu0 = cpuSeconds(proc.pid);
  const t0 = performance.now();
  await new Promise((r) => setTimeout(r, SECONDS * 1000));
  const elapsed = (performance.now() - t0) / 1000;
  const cpu1 = cpuSeconds(proc.pid);
  measuring = false;
  stop = true;
  await Promise.all(workers);
  agent.destroy();
  proc.kill("SIGTERM");
  await new Promise((r) => proc.once("exit", r));
  const serverCpu = (cpu1 - cpu0) / elapsed;
  return { name: scenario.name, rps: requests / elapsed, mbps: bytes / elapsed / 1e6, avgKB: bytes / Math.max(1, requests) / 1000, errors, serverCpu };
}

if (hasTaskset) spawnSync("taskset", ["-cp", "1", String(process.pid)], { stdio: "ignore" }); // client off the server's core
const results = [];
process.on("unhandledRejection", (err) => { console.error(`bench-simweb: ${err?.stack ?? err}`); process.exit(1); });
for (const s of SCENARIOS) {
  const r = await run(s);
  results.push(r);
  process.stderr.write(`${r.name}: ${r.rps.toFixed(0)} req/s, ${r.mbps.toFixed(1)} MB/s\n`);
}
const cpu = cpus()[0]?.model ?? "unknown CPU";
const load = loadavg().map((x) => x.toFixed(1)).join(" ");
console.log(`Machine: ${cpu}, ${cpus().length} cores, Node ${process.version}; server ${hasTaskset ? "pinned to core 0 (taskset -c 0), client on core 1" : "not pinned (taskset unavailable)"}; ${CONNECTIONS} keep-alive connections, ${SECONDS} s per scenario after a 2 s warm-up; load average at the end ${load}; date ${new Date().toISOString().slice(0, 10)}.\n`);
// "per server core" divides by the CPU the server actually used, so a client-bound or contended
// run still tells what one core of simweb can serve.
console.log("| scenario | req/s | MB/s | avg body KB | server CPU (cores) | req/s per server core | MB/s per server core | non-200 |");
console.log("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |");
for (const r of results) {
  console.log(`| ${r.name} | ${r.rps.toFixed(0)} | ${r.mbps.toFixed(1)} | ${r.avgKB.toFixed(1)} | ${r.serverCpu.toFixed(2)} | ${(r.rps / r.serverCpu).toFixed(0)} | ${(r.mbps / r.serverCpu).toFixed(0)} | ${r.errors} |`);
}
