// Shared helpers of the bench suite: paths, argument parsing, /proc readers, statistics, simweb
// start/stop, results files. Every bench file is a plain ESM script run by scripts/bench.mjs.
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { cpus, loadavg, totalmem } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";
import { parseArgs } from "node:util";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const SIMWEB_CLI = join(ROOT, "packages/simweb/dist/cli.js");
export const SHARDCRAWL_CLI = join(ROOT, "packages/shardcrawl/dist/cli/main.js");
export const RESULTS_DIR = join(ROOT, "bench-results");
/** require() rooted in packages/bench, where the peers (cheerio, parse5, Crawlee) are installed. */
export const benchRequire = createRequire(join(ROOT, "packages/bench/package.json"));
export const CLK_TCK = 100; // USER_HZ on Linux

export function args(extra = {}) {
  return parseArgs({ options: { mode: { type: "string", default: "quick" }, out: { type: "string" }, ...extra }, allowPositionals: true }).values;
}

export function median(xs) {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** utime+stime (s) of one process, and its reaped children's (cutime+cstime). */
export function procCpu(pid = "self") {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1].split(" ");
    return { self: (Number(f[11]) + Number(f[12])) / CLK_TCK, children: (Number(f[13]) + Number(f[14])) / CLK_TCK, ppid: Number(f[1]) };
  } catch {
    return undefined;
  }
}

/** Peak resident set (VmHWM, bytes) and the command name of a process. */
export function procMem(pid) {
  try {
    const s = readFileSync(`/proc/${pid}/status`, "utf8");
    const hwm = /VmHWM:\s+(\d+) kB/.exec(s);
    return hwm ? Number(hwm[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

/** Current resident set (VmRSS, bytes) of a process. */
export function procRss(pid) {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) * 1024 : 0;
  } catch {
    return 0;
  }
}

export function procCmd(pid) {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
  } catch {
    return [];
  }
}

/** Every descendant pid of `root` (from /proc/*\/stat ppid links). */
export function descendants(root) {
  const children = new Map();
  for (const e of readdirSync("/proc")) {
    if (!/^\d+$/.test(e)) continue;
    const c = procCpu(e);
    if (!c) continue;
    if (!children.has(c.ppid)) children.set(c.ppid, []);
    children.get(c.ppid).push(Number(e));
  }
  const out = [];
  const stack = [root];
  while (stack.length) {
    const p = stack.pop();
    for (const c of children.get(p) ?? []) {
      out.push(c);
      stack.push(c);
    }
  }
  return out;
}

export function machine() {
  return {
    cpu: cpus()[0]?.model ?? "unknown",
    cores: cpus().length,
    memGB: Math.round(totalmem() / 1e9),
    node: process.version,
    load: loadavg().map((x) => Number(x.toFixed(2))),
    date: new Date().toISOString(),
  };
}

export function writeResult(file, data) {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, JSON.stringify({ machine: machine(), ...data }, null, 2) + "\n");
}

const running = new Set();
process.on("exit", () => {
  for (const p of running) p.kill("SIGKILL"); // never leave a server behind
});

/** Starts `simweb serve` with a config object; resolves with its ports and CA file. */
export async function startSimweb(config, extraArgs = [], dir) {
  mkdirSync(dir, { recursive: true });
  const cfgFile = join(dir, "simweb-config.json");
  writeFileSync(cfgFile, JSON.stringify(config));
  return { ...(await spawnServer([SIMWEB_CLI, "serve", "--config", cfgFile, "--port", "0", "--https-port", "0", ...extraArgs], dir)), cfgFile };
}

/**
 * Starts a server process (node ARGV) that prints one JSON line {http, https, ca, ...} on stdout
 * once it listens; resolves with its ports, CA file and that line.
 */
export async function spawnServer(argv, dir) {
  mkdirSync(dir, { recursive: true });
  const proc = spawn(process.execPath, argv, { stdio: ["ignore", "pipe", "inherit"] });
  running.add(proc);
  proc.once("exit", () => running.delete(proc));
  const line = await new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error(`${argv[1] ?? argv[0]} did not start`)), 600_000); // a 10^5-host simweb builds its world for minutes on a loaded machine
    createInterface({ input: proc.stdout }).once("line", (l) => { clearTimeout(t); res(l); });
    proc.once("exit", (c) => { clearTimeout(t); rej(new Error(`${argv[1] ?? argv[0]} exited ${c}`)); });
  });
  const info = JSON.parse(line);
  return {
    proc, http: info.http, https: info.https, ca: info.ca, info,
    stop: async () => {
      if (proc.exitCode !== null) return;
      proc.kill("SIGTERM");
      await new Promise((r) => proc.once("exit", r));
    },
  };
}

export function fmt(n, digits = 1) {
  return Number.isFinite(n) ? n.toFixed(digits) : "n/a";
}

/** A free TCP port on 127.0.0.1. */
export async function freePort() {
  const { createServer } = await import("node:net");
  return new Promise((res, rej) => {
    const s = createServer();
    s.once("error", rej);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address();
      s.close(() => res(port));
    });
  });
}

/**
 * A redis-server for one bench run, with the node's own persistence settings (AOF everysec), on a
 * free loopback port; `cpu()` reads its CPU seconds from /proc.
 */
export async function startRedisServer(dir) {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const proc = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--appendonly", "yes", "--appendfsync", "everysec", "--save", "", "--logfile", "redis.log"], { stdio: "ignore" });
  running.add(proc);
  proc.once("exit", () => running.delete(proc));
  const { Redis } = benchRequireRoot("ioredis");
  const client = new Redis({ port, host: "127.0.0.1", lazyConnect: true, commandTimeout: 120_000, maxRetriesPerRequest: 1 });
  client.on("error", () => {}); // refused connects while redis-server starts; commands still reject on failure
  for (let i = 0; ; i++) {
    try {
      await client.connect();
      await client.ping();
      break;
    } catch (err) {
      if (i > 100) throw err;
      client.disconnect();
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    url: `redis://127.0.0.1:${port}`, port, pid: proc.pid, client,
    cpu: () => procCpu(proc.pid)?.self ?? NaN,
    peakBytes: () => procMem(proc.pid),
    stop: async () => {
      client.disconnect();
      if (proc.exitCode !== null) return;
      proc.kill("SIGTERM");
      await new Promise((r) => proc.once("exit", r));
    },
  };
}

/** require() rooted at the workspace root (its devDependencies: ioredis, warcio ...). */
export const benchRequireRoot = createRequire(join(ROOT, "package.json"));
/** require() rooted in the crawler package (undici 7, htmlparser2 ...). */
export const crawlerRequire = createRequire(join(ROOT, "packages/shardcrawl/package.json"));

/** A loopback address unlikely to be used by anyone else on the machine, for port 80/443 servers. */
export function randomLoopback() {
  const b = () => 1 + Math.floor(Math.random() * 250);
  return `127.${b()}.${b()}.${b()}`;
}
