// Starts a real redis-server on a free loopback port for a test, and stops it afterwards.
import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterAll, beforeAll } from "vitest";

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

export interface TestRedis {
  url: string;
  port: number;
  dir: string;
  client(): Redis;
  stop(): Promise<void>;
}

export async function startRedis(opts: { appendonly?: boolean } = {}): Promise<TestRedis> {
  const dir = mkdtempSync(join(tmpdir(), "sc-redis-"));
  const port = await freePort();
  const args = [
    "--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "",
    "--appendonly", opts.appendonly ? "yes" : "no", "--logfile", join(dir, "redis.log"),
  ];
  const proc: ChildProcess = spawn("redis-server", args, { stdio: "ignore" });
  const url = `redis://127.0.0.1:${port}`;
  const clients: Redis[] = [];
  const deadline = Date.now() + 10_000;
  for (;;) {
    const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    try {
      await probe.connect();
      await probe.ping();
      probe.disconnect();
      break;
    } catch {
      probe.disconnect();
      if (Date.now() > deadline) throw new Error(`redis-server did not start on port ${port}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }
  return {
    url, port, dir,
    client() { const c = new Redis(url); clients.push(c); return c; },
    async stop() {
      for (const c of clients) c.disconnect();
      proc.kill("SIGKILL");
      await new Promise((r) => (proc.exitCode !== null ? r(null) : proc.once("exit", r)));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * The one start-Redis fixture of a test file: a redis-server for the file's tests (started in
 * beforeAll, stopped in afterAll). `onStart` gets it first (to make clients); the returned
 * function gives it to tests.
 */
export function useRedis(onStart?: (server: TestRedis) => void, opts: { appendonly?: boolean } = {}): () => TestRedis {
  let server: TestRedis | undefined;
  beforeAll(async () => {
    server = await startRedis(opts);
    onStart?.(server);
  });
  afterAll(async () => {
    await server?.stop();
  });
  return () => {
    if (!server) throw new Error("useRedis: the redis-server starts in beforeAll");
    return server;
  };
}
