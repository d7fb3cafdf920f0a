// `shardcrawl crawl` as a user meets its first mistakes: each ends at once, before any Redis or
// crawler process starts, with its own exit code (node/exit-codes.ts), one line saying what is wrong
// and one saying what to do -- never a stack trace. Real processes: the CLI, a real redis-server
// (with a password) and a real listening socket for the port in use.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SHARDCRAWL } from "./harness/crawl.js";
import { freePort } from "./harness/redis.js";
import { spawn, type ChildProcess } from "node:child_process";

let dir: string;
let seeds: string;

function crawl(...args: string[]): { code: number | null; stderr: string } {
  // A User-Agent with a contact: without one the node refuses first (exit 78, its own test).
  const r = spawnSync(process.execPath, [SHARDCRAWL, "crawl", "--progress", "off", "--user-agent", "startup-test/1.0 (ops@example.org)", ...args], { encoding: "utf8", timeout: 60_000 });
  return { code: r.status, stderr: r.stderr };
}

/** Exactly the two lines: the cause, then what to do. */
function expectTwoLines(stderr: string, cause: RegExp, todo: RegExp): void {
  const lines = stderr.trimEnd().split("\n");
  expect(lines, stderr).toHaveLength(2);
  expect(lines[0]).toMatch(/^shardcrawl: /);
  expect(lines[0]).toMatch(cause);
  expect(lines[1]).toMatch(/^ {2}what to do: /);
  expect(lines[1]).toMatch(todo);
  expect(stderr).not.toMatch(/\n\s+at /); // no stack trace
}

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "sc-startup-"));
  seeds = join(dir, "seeds.txt");
  writeFileSync(seeds, "http://a.test/\n");
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("crawl start-up errors", () => {
  it("a missing seed file: exit 66", () => {
    const out = join(dir, "out-seeds");
    const r = crawl("--seeds", join(dir, "nope.txt"), "--out", out);
    expect(r.code).toBe(66);
    expectTwoLines(r.stderr, /cannot read the seed file .*nope\.txt: no such file/, /--seeds path/);
  });

  it("seeds that are not URLs: exit 65, naming the first bad line", () => {
    const bad = join(dir, "bad.txt");
    writeFileSync(bad, "# comment\nnot a url\nalso not one\n");
    const r = crawl("--seeds", bad, "--out", join(dir, "out-bad"));
    expect(r.code).toBe(65);
    expectTwoLines(r.stderr, /no usable URL in the seed file .*bad\.txt: all 2 lines were rejected, the first at line 2 .*not a url/, /absolute http:\/\/ or https:\/\/ URLs/);
  });

  it("an --out that cannot be written: exit 73", () => {
    const r = crawl("--seeds", seeds, "--out", join(seeds, "under-a-file"));
    expect(r.code).toBe(73);
    expectTwoLines(r.stderr, /cannot write to the output folder .*: a part of the path is a file, not a folder/, /--out/);
  });

  it("nothing to crawl or resume: the error, and the Redis the node had started is stopped again", async () => {
    const out = join(dir, "out-empty");
    const r = crawl("--out", out);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/no --seeds given and .*out-empty holds no crawl to resume/);
    // The node starts its Redis to look for a crawl to resume; a failed start must not leave it running.
    const { pid } = JSON.parse(readFileSync(join(out, "redis", "connection.json"), "utf8")) as { pid: number };
    const running = () => {
      try {
        const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
        return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z"; // a zombie has exited
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 5_000;
    while (running() && Date.now() < deadline) await new Promise((res) => setTimeout(res, 50));
    const leaked = running();
    if (leaked) process.kill(pid, "SIGKILL"); // (the test fails; it leaves nothing behind either)
    expect(leaked).toBe(false);
  });

  describe("a status port in use", () => {
    let server: Server;
    let port: number;
    beforeAll(async () => {
      port = await freePort();
      server = createServer();
      await new Promise<void>((r) => server.listen(port, "127.0.0.1", r));
    });
    afterAll(() => new Promise<void>((r) => server.close(() => r())));

    it("exit 71, before anything starts", () => {
      const out = join(dir, "out-port");
      const r = crawl("--seeds", seeds, "--out", out, "--status-port", String(port));
      expect(r.code).toBe(71);
      expectTwoLines(r.stderr, new RegExp(`status port ${port} on 127\\.0\\.0\\.1 is in use`), /another --status-port, or 0/);
      // Nothing was started: no Redis data folder, no WARC files.
      expect(readdirSync(out).filter((f) => f !== "logs")).toEqual([]);
    });
  });

  describe("a Redis that refuses", () => {
    let redis: ChildProcess;
    let port: number;
    beforeAll(async () => {
      port = await freePort();
      redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--requirepass", "correct-horse-battery"], { stdio: "ignore" });
      const deadline = Date.now() + 10_000;
      while (Date.now() < deadline) {
        const ok = await new Promise<boolean>((r) => {
          const s = createServer(); // a bind attempt: in use means redis listens
          s.once("error", () => r(true));
          s.listen(port, "127.0.0.1", () => s.close(() => r(false)));
        });
        if (ok) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new Error("redis-server did not start");
    });
    afterAll(() => {
      redis.kill("SIGKILL");
    });

    it("nothing listening: exit 69, connection refused", async () => {
      const closed = await freePort();
      const r = crawl("--seeds", seeds, "--out", join(dir, "out-r1"), "--redis", `redis://127.0.0.1:${closed}`);
      expect(r.code).toBe(69);
      expectTwoLines(r.stderr, /nothing answers at redis:\/\/127\.0\.0\.1:\d+ \(connection refused\)/, /start Redis there/);
    });

    it("a password wanted: exit 69, says so", () => {
      const r = crawl("--seeds", seeds, "--out", join(dir, "out-r2"), "--redis", `redis://127.0.0.1:${port}`);
      expect(r.code).toBe(69);
      expectTwoLines(r.stderr, /Redis at redis:\/\/127\.0\.0\.1:\d+ wants a password/, /redis:\/\/:password@host:port/);
    });

    it("a wrong password: exit 69, and the password is not printed", () => {
      const r = crawl("--seeds", seeds, "--out", join(dir, "out-r3"), "--redis", `redis://:not-the-password@127.0.0.1:${port}`);
      expect(r.code).toBe(69);
      expectTwoLines(r.stderr, /refused the password in the URL/, /fix the password/);
      expect(r.stderr).not.toContain("not-the-password");
    });
  });
});
