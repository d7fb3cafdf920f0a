// Starts (or re-attaches to) the node's own redis-server: data under <out>/redis, a free loopback
// port and a Unix socket beside the data (the node's processes use the socket), a random password,
// AOF everysec. A node killed with -9 may leave its Redis running; the next
// start finds it through connection.json and re-attaches instead of starting a second server on the
// same AOF files.
import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, readlinkSync, realpathSync, symlinkSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { join, resolve as resolvePath } from "node:path";
import { Redis } from "../shared/cjs-ioredis.js";

export interface RedisHandle {
  url: string;
  pid: number;
  /** True when we started this server (and so should stop it). */
  owned: boolean;
  /** Restarts the server (same port, password and AOF) whenever it dies, until stop(). */
  watch(onRestart: (reason: string) => void): void;
  stop(): Promise<void>;
}

interface ConnectionFile {
  port: number;
  password: string;
  pid: number;
  /** The server's Unix socket (absent: a server started before there was one, or a path too long). */
  socket?: string;
}

/**
 * The node's processes talk to their Redis over a Unix socket: per round trip it costs about a
 * third less CPU than loopback TCP on both ends (no TCP/IP path; ~12 us client, ~8 us server per
 * call in a micro-benchmark), and a node makes several round trips per page. sun_path holds 107
 * bytes; a deeper output folder keeps TCP.
 */
const MAX_SOCKET_PATH = 100;
function socketPathFor(dir: string): string | undefined {
  const path = resolvePath(dir, "redis.sock");
  return Buffer.byteLength(path) <= MAX_SOCKET_PATH ? path : undefined;
}

export async function freeLoopbackPort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  // A zombie (killed, not yet reaped: common when its parent died and PID 1 does not reap) is dead.
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return true;
  }
}

/** True when pid is a live redis-server (not a recycled pid of some other program). */
function isRedisServer(pid: number): boolean {
  if (!alive(pid)) return false;
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("redis-server");
  } catch {
    return false;
  }
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Live redis-servers working in `dir` (Redis chdirs to its --dir). connection.json can name the
 * wrong pid -- a supervisor killed between spawning Redis and recording it -- so before starting a
 * server we look for one on our AOF files by its working directory, never by the file alone.
 */
export function redisServersIn(dir: string): number[] {
  let want: string;
  try {
    want = realpathSync(dir);
  } catch {
    return [];
  }
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const pid = Number(name);
    try {
      if (readlinkSync(`/proc/${pid}/cwd`) === want && isRedisServer(pid)) pids.push(pid);
    } catch {
      // Gone, or not ours to read.
    }
  }
  return pids;
}

/** Stops stray servers on our files: SIGTERM first (Redis flushes its AOF), SIGKILL after 10 s. */
async function stopStrays(pids: number[]): Promise<void> {
  for (const pid of pids) process.kill(pid, "SIGTERM");
  const deadline = Date.now() + 10_000;
  while (pids.some(isRedisServer) && Date.now() < deadline) await sleep(50);
  for (const pid of pids) if (isRedisServer(pid)) process.kill(pid, "SIGKILL");
  while (pids.some(isRedisServer)) await sleep(50);
}

async function portFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const srv = createServer();
    srv.once("error", () => resolve(false));
    srv.listen(port, "127.0.0.1", () => srv.close(() => resolve(true)));
  });
}

async function ping(url: string, timeoutMs: number): Promise<boolean> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: timeoutMs });
  try {
    await r.connect();
    // A Redis still loading its AOF answers LOADING; wait until it is really ready.
    const info = await r.info("persistence");
    return /loading:0/.test(info);
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

/** How the node's processes connect: the socket when the server has one (ioredis takes the password as a query parameter there), else TCP. */
function urlOf(c: ConnectionFile): string {
  if (c.socket && existsSync(c.socket)) return `unix://${c.socket}?password=${c.password}`;
  return `redis://:${c.password}@127.0.0.1:${c.port}`;
}

/**
 * Makes out/redis a link to `dataDir` (Redis's AOF on its own volume, so a full output disk never
 * stops Redis from writing, and the other way round). Every tool keeps finding out/redis. Refuses
 * to hide an existing data folder at out/redis.
 */
export function linkRedisDir(outDir: string, dataDir: string): void {
  const at = join(outDir, "redis");
  const target = resolvePath(dataDir);
  mkdirSync(target, { recursive: true });
  mkdirSync(outDir, { recursive: true });
  let current: string | null = null;
  try {
    current = lstatSync(at).isSymbolicLink() ? resolvePath(outDir, readlinkSync(at)) : realpathSync(at);
  } catch {
    current = null;
  }
  if (current === null) symlinkSync(target, at, "dir");
  else if (current !== target && realpathSync(at) !== realpathSync(target)) {
    throw new Error(`redis-dir: ${at} already holds Redis data (${current}); move it to ${target} and remove ${at} first`);
  }
}

export async function startNodeRedis(outDir: string, opts: { maxmemoryBytes?: number; dataDir?: string } = {}): Promise<RedisHandle> {
  if (opts.dataDir) linkRedisDir(outDir, opts.dataDir);
  const dir = join(outDir, "redis");
  mkdirSync(dir, { recursive: true });
  const connPath = join(dir, "connection.json");
  let conn: ConnectionFile | null = null;
  const prev = existsSync(connPath) ? (JSON.parse(readFileSync(connPath, "utf8")) as ConnectionFile) : null;
  if (prev && isRedisServer(prev.pid)) {
    // Our previous Redis outlived its supervisor. It may still be loading its AOF: wait for it.
    // Never start a second server on the same AOF files while it lives.
    const deadline = Date.now() + 60_000;
    while (Date.now() < deadline && isRedisServer(prev.pid) && !(await ping(urlOf(prev), 1000))) await sleep(200);
    if (isRedisServer(prev.pid) && (await ping(urlOf(prev), 2000))) conn = prev;
    else if (isRedisServer(prev.pid)) {
      process.kill(prev.pid, "SIGKILL");
      while (isRedisServer(prev.pid)) await sleep(50);
    }
  }
  // A server connection.json does not name may still run on our files: never run two.
  if (!conn) await stopStrays(redisServersIn(dir));
  // Reuse port and password when we can, so anything still holding the old URL reconnects.
  const socket = socketPathFor(dir);
  const withSocket = socket ? { socket } : {};
  if (!conn && prev && (await portFree(prev.port))) conn = { port: prev.port, password: prev.password, pid: 0, ...withSocket };
  if (!conn || conn.pid === 0) {
    conn ??= { port: await freeLoopbackPort(), password: randomBytes(16).toString("hex"), pid: 0, ...withSocket };
    await spawnRedis(dir, conn, opts, connPath);
  }
  const c = conn;
  const url = urlOf(c);
  let watchdog: NodeJS.Timeout | undefined;
  let restarting = false;
  return {
    url,
    get pid() {
      return c.pid;
    },
    owned: true,
    watch(onRestart) {
      // The children reconnect on their own (ioredis retries): the server comes back on the same
      // port with the same password and replays its AOF, so no process needs to learn anything new.
      watchdog = setInterval(() => {
        if (restarting || isRedisServer(c.pid)) return;
        restarting = true;
        onRestart(`redis-server (pid ${c.pid}) is gone; restarting it on port ${c.port}`);
        spawnRedis(dir, c, opts, connPath)
          .catch((err: unknown) => onRestart(`restarting redis-server failed: ${(err as Error).message}; retrying`))
          .finally(() => (restarting = false));
      }, 500);
      watchdog.unref();
    },
    stop: () => {
      if (watchdog) clearInterval(watchdog);
      return stopRedis(url, c.pid);
    },
  };
}

/** Starts a server and records it in connection.json AT ONCE, before it is ready: a supervisor killed while it loads must not leave a server the next one cannot find. */
async function spawnRedis(dir: string, conn: ConnectionFile, opts: { maxmemoryBytes?: number }, connPath: string): Promise<void> {
  const args = [
    "--port", String(conn.port),
    "--bind", "127.0.0.1",
    "--protected-mode", "yes",
    "--requirepass", conn.password,
    "--dir", dir,
    "--appendonly", "yes",
    "--appendfsync", "everysec",
    "--save", "",
    "--logfile", "redis.log",
    "--daemonize", "no",
  ];
  if (opts.maxmemoryBytes) args.push("--maxmemory", String(opts.maxmemoryBytes), "--maxmemory-policy", "noeviction");
  if (conn.socket) args.push("--unixsocket", conn.socket, "--unixsocketperm", "700");
  // Detached: Redis must outlive a crashed supervisor long enough to be re-attached and must not
  // receive the terminal's SIGINT before the supervisor has flushed and returned its work.
  const child = spawn("redis-server", args, { stdio: "ignore", detached: true });
  child.unref();
  const spawnError = new Promise<Error>((resolve) => child.once("error", resolve));
  conn.pid = child.pid ?? 0;
  writeFileSync(connPath, JSON.stringify(conn), { mode: 0o600 });
  const url = urlOf(conn);
  const deadline = Date.now() + 60_000;
  for (;;) {
    const failed = await Promise.race([spawnError, new Promise<null>((r) => setTimeout(() => r(null), 50))]);
    if (failed) throw new Error(`could not start redis-server: ${failed.message} (is redis-server installed?)`);
    if (child.exitCode !== null) throw new Error(`redis-server exited with code ${child.exitCode}; see ${join(dir, "redis.log")}`);
    if (await ping(url, 1000)) return;
    if (Date.now() > deadline) throw new Error(`redis-server did not become ready within 60 s; see ${join(dir, "redis.log")}`);
  }
}

async function stopRedis(url: string, pid: number): Promise<void> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await r.connect();
    // SHUTDOWN flushes the AOF; the connection closing is the expected answer.
    await r.call("SHUTDOWN").catch(() => undefined);
  } catch {
    if (alive(pid)) process.kill(pid, "SIGTERM");
  } finally {
    r.disconnect();
  }
  const deadline = Date.now() + 10_000;
  while (alive(pid) && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
  if (alive(pid)) process.kill(pid, "SIGKILL");
}
