// The node's own redis-server (real processes): never two servers on one AOF, even when
// connection.json names the wrong pid -- the state a supervisor killed between spawning Redis and
// recording it used to leave (seen in a chaos run: a second server started on a new port).
import { mkdtempSync, readdirSync, readFileSync, readlinkSync, realpathSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Redis } from "ioredis";
import { afterEach, describe, expect, it } from "vitest";
import { startNodeRedis, type RedisHandle } from "../../src/node/redis-server.js";

/** The test's own count: redis-server processes whose working directory is `dir` (Redis chdirs to --dir). */
function serversIn(dir: string): number[] {
  const want = realpathSync(dir);
  return readdirSync("/proc").filter((n) => /^\d+$/.test(n)).map(Number).filter((pid) => {
    try {
      return readlinkSync(`/proc/${pid}/cwd`) === want && readFileSync(`/proc/${pid}/cmdline`, "utf8").startsWith("redis-server");
    } catch {
      return false;
    }
  });
}

const handles: RedisHandle[] = [];
const dirs: string[] = [];
afterEach(async () => {
  for (const h of handles.splice(0)) await h.stop().catch(() => undefined);
  for (const dir of dirs.splice(0)) for (const pid of serversIn(dir)) process.kill(pid, "SIGKILL");
});

async function withRedis<T>(url: string, fn: (r: Redis) => Promise<T>): Promise<T> {
  const r = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    return await fn(r);
  } finally {
    r.disconnect();
  }
}

describe("node redis-server", () => {
  it("re-attaches to its live server through connection.json", async () => {
    const out = mkdtempSync(join(tmpdir(), "sc-noderedis-"));
    const a = await startNodeRedis(out);
    handles.push(a);
    const b = await startNodeRedis(out);
    expect(b.pid).toBe(a.pid);
    expect(serversIn(join(out, "redis"))).toEqual([a.pid]);
  });

  it("a server connection.json does not name is stopped (its AOF kept), never run beside a second one", async () => {
    const out = mkdtempSync(join(tmpdir(), "sc-noderedis-"));
    const dir = join(out, "redis");
    dirs.push(dir);
    const a = await startNodeRedis(out);
    await withRedis(a.url, (r) => r.set("kept", "yes"));
    // The crash window: the file names a dead pid and a password the live server does not have.
    const conn = JSON.parse(readFileSync(join(dir, "connection.json"), "utf8")) as { port: number };
    writeFileSync(join(dir, "connection.json"), JSON.stringify({ port: conn.port, password: "stale", pid: 2 ** 22 + 7 }));
    const b = await startNodeRedis(out);
    handles.push(b);
    expect(b.pid).not.toBe(a.pid);
    expect(serversIn(dir)).toEqual([b.pid]);
    expect(await withRedis(b.url, (r) => r.get("kept"))).toBe("yes");
    // And the file now names the server that runs.
    expect((JSON.parse(readFileSync(join(dir, "connection.json"), "utf8")) as { pid: number }).pid).toBe(b.pid);
  });

  it("the node's processes reach it over its Unix socket; an output folder too deep for a socket path keeps TCP", async () => {
    const out = mkdtempSync(join(tmpdir(), "sc-noderedis-"));
    const a = await startNodeRedis(out);
    handles.push(a);
    expect(a.url).toMatch(/^unix:\/\/\/.*redis\.sock\?password=/);
    expect(await withRedis(a.url, async (r) => (await r.set("k", "v"), r.get("k")))).toBe("v");
    const deep = join(mkdtempSync(join(tmpdir(), "sc-noderedis-")), "d".repeat(100));
    const b = await startNodeRedis(deep);
    handles.push(b);
    expect(b.url).toMatch(/^redis:\/\/:[0-9a-f]+@127\.0\.0\.1:\d+$/);
    expect(await withRedis(b.url, (r) => r.ping())).toBe("PONG");
  });
});
