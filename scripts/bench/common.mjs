// Shared helpers of the bench suite: paths, argument parsing, /proc readers, statistics, simweb
// start/stop, results files. Every bench file is a plain ESM script run by scripts/bench.mjs.
import { spawn, spawnSync } from "node:child_process";
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
 * A redis-server for one bench run, with the node's own persistence settings (AOF everysec; `aof:
 * false` for a throwaway test server), on a free loopback port; `cpu()` reads its CPU seconds from
 * /proc.
 */
export async function startRedisServer(dir, { aof = true } = {}) {
  mkdirSync(dir, { recursive: true });
  const port = await freePort();
  const persistence = aof ? ["--appendonly", "yes", "--appendfsync", "everysec"] : ["--appendonly", "no"];
  // A node's processes reach their own Redis over a Unix socket (node/redis-server.ts): the crawl
  // benches pass the socket too (`url`), unless BENCH_REDIS_TCP=1 (loopback TCP, for comparing).
  const socket = join(dir, "redis.sock");
  const proc = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--unixsocket", socket, "--unixsocketperm", "700", "--dir", dir, ...persistence, "--save", "", "--logfile", "redis.log"], { stdio: "ignore" });
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
    url: process.env.BENCH_REDIS_TCP || Buffer.byteLength(socket) > 100 ? `redis://127.0.0.1:${port}` : `unix://${socket}`, port, pid: proc.pid, client,
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

/** The User-Agent of every bench crawl. */
export const BENCH_UA = "shardcrawl-bench/0.1 (+https://github.com/shardcrawl/shardcrawl)";

/** Writes the seed list of a started simweb (`startSimweb`) to `file`; returns how many seeds. */
export function writeSimwebSeeds(sim, file) {
  const r = spawnSync(process.execPath, [SIMWEB_CLI, "seeds", "--config", sim.cfgFile], { encoding: "utf8", maxBuffer: 64 << 20 });
  if (r.status !== 0) throw new Error(`simweb seeds: ${r.stderr}`);
  writeFileSync(file, r.stdout);
  return r.stdout.trim().split("\n").length;
}

/** A node process's role, by its script's file name (a checkout's path may contain "fetcher"). */
export function nodeRoleOf(pid, redisPid) {
  if (pid === redisPid) return "redis";
  const script = procCmd(pid).find((x) => x.endsWith(".js"))?.split("/").pop() ?? "";
  if (script === "main.js") return "supervisor";
  if (script.startsWith("fetcher")) return "fetcher";
  if (script.startsWith("parser")) return "parser";
  return procCmd(pid)[0]?.split("/").pop() || "other";
}

/**
 * CPU and memory of one node's processes from /proc, by role: the process tree under a root pid
 * (supervisor, fetchers, parsers) and its redis-server. Redis's CPU counts from the sampler's
 * creation (the server outlives crawl runs). A process that exited keeps its last figures, so the
 * sums never go back; `perPid` keeps every process seen, across roots (restarted nodes).
 */
export function nodeCpuSampler(redis) {
  const redis0 = redis.cpu();
  const perPid = new Map();
  return {
    perPid,
    /**
     * Reads the tree under `root` (undefined: Redis only) and Redis: CPU seconds by role, resident
     * MB by role over live processes, and the CPU total.
     */
    sample(root) {
      for (const pid of [...(root === undefined ? [] : [root, ...descendants(root)]), redis.pid]) {
        const c = procCpu(pid);
        if (!c) continue;
        const p = perPid.get(pid) ?? { role: nodeRoleOf(pid, redis.pid), cpu: 0, rss: 0, peak: 0 };
        p.cpu = c.self - (pid === redis.pid ? redis0 : 0);
        p.rss = procRss(pid);
        p.peak = Math.max(p.peak, p.rss, procMem(pid));
        perPid.set(pid, p);
      }
      const roles = {}, rss = {};
      for (const [pid, p] of perPid) {
        roles[p.role] = (roles[p.role] ?? 0) + p.cpu;
        if (p.rss > 0 && procCpu(pid)) rss[p.role] = (rss[p.role] ?? 0) + p.rss / 1e6;
      }
      return { roles, rss, cpu: Object.values(roles).reduce((n, c) => n + c, 0) };
    },
    /** Per role: processes seen, CPU seconds, peak resident MB of its largest process. */
    byRole() {
      const out = {};
      for (const { role, cpu, peak } of perPid.values()) {
        const r = (out[role] ??= { processes: 0, cpuSeconds: 0, peakRssMB: 0 });
        r.processes++;
        r.cpuSeconds += cpu;
        r.peakRssMB = Math.max(r.peakRssMB, peak / 1e6);
      }
      return out;
    },
  };
}

/**
 * Samples a running crawl (`proc`, its redis) every `intervalMs` with `nodeCpuSampler`, and marks
 * each sample with the pages fetched so far (the node's stats hash): the (CPU, pages) pairs that
 * steady-state windows are cut from. `stop()` ends the loop and takes a last sample.
 */
export function sampleNodeCpu(proc, redis, intervalMs = 200) {
  const sampler = nodeCpuSampler(redis);
  const marks = [];
  const tick = () => {
    const s = sampler.sample(proc.pid);
    redis.client.hget("sc:stats", "fetched").then((n) => marks.push({ ...s, fetched: Number(n ?? 0) }), () => undefined);
  };
  const timer = setInterval(tick, intervalMs);
  return {
    marks, byRole: () => sampler.byRole(), perPid: sampler.perPid,
    stop() {
      clearInterval(timer);
      tick();
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
