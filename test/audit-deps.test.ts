// scripts/audit-deps.mjs (the CI dependency audit) against a stand-in advisory endpoint on
// loopback: real findings fail in production dependencies only, ranges are honoured, and an
// endpoint that refuses (405, as on these machines) or is down leaves CI green with a loud banner.
import { spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { ROOT } from "./harness/crawl.js";

const SCRIPT = join(ROOT, "scripts/audit-deps.mjs");
let server: Server;
let base = "";
let lastRequest: Record<string, string[]> = {};
/** What the stand-in endpoint answers next. */
let reply: { status: number; body: unknown } = { status: 200, body: {} };

function runAudit(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, [SCRIPT, "--lockfile", join(ROOT, "pnpm-lock.yaml"), ...args], { cwd: ROOT });
    let out = "";
    p.stdout.on("data", (b: Buffer) => (out += b.toString()));
    p.stderr.on("data", (b: Buffer) => (out += b.toString()));
    p.on("exit", (code) => resolve({ code, out }));
  });
}

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (c: Buffer) => (body += c.toString()));
    req.on("end", () => {
      if (req.method !== "POST" || req.url !== "/-/npm/v1/security/advisories/bulk") {
        res.writeHead(404).end();
        return;
      }
      lastRequest = JSON.parse(body) as Record<string, string[]>;
      res.writeHead(reply.status, { "content-type": "application/json", ...(reply.status === 405 ? { allow: "GET,HEAD" } : {}) });
      res.end(reply.status === 405 ? "" : JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(server.address() as { port: number }).port}/`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const advisory = (severity: string, range: string, title: string) => ({ id: 1, url: `https://example.test/${title}`, title, severity, vulnerable_versions: range, cwe: [] });

describe("dependency audit script", () => {
  test("asks for every locked package version, dev and production alike", async () => {
    reply = { status: 200, body: {} };
    const r = await runAudit(["--registry", base]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/findings 0/);
    expect(lastRequest.undici?.length).toBeGreaterThan(0); // a production dependency of the crawler
    expect(lastRequest.vitest?.length).toBeGreaterThan(0); // a dev dependency
  });

  test("a high advisory on a production dependency fails; dev-only and non-matching ones do not", async () => {
    reply = {
      status: 200,
      body: {
        undici: [advisory("high", "<999.0.0", "undici-smuggling")],
        vitest: [advisory("critical", "<999.0.0", "vitest-rce")],
        ioredis: [advisory("critical", "<0.0.1", "ancient-ioredis")],
      },
    };
    const r = await runAudit(["--registry", base]);
    expect(r.code).toBe(1);
    expect(r.out).toMatch(/^high\s+prod undici@\S+ \(<999\.0\.0\): undici-smuggling/m);
    expect(r.out).toMatch(/^critical\s+dev {2}vitest@/m);
    expect(r.out).not.toMatch(/ancient-ioredis/);
    expect(r.out).toMatch(/failing \(production, high and above\): 1/);
    // Dev-only findings alone never fail.
    reply = { status: 200, body: { vitest: [advisory("critical", "<999.0.0", "vitest-rce")] } };
    expect((await runAudit(["--registry", base])).code).toBe(0);
    // Below the fail level: listed, not failing.
    reply = { status: 200, body: { undici: [advisory("moderate", "<999.0.0", "undici-minor")] } };
    const moderate = await runAudit(["--registry", base]);
    expect(moderate.code).toBe(0);
    expect(moderate.out).toMatch(/undici-minor/);
  });

  test("an endpoint that refuses POST (405) or is down: CI stays green, and says so loudly", async () => {
    reply = { status: 405, body: null };
    const refused = await runAudit(["--registry", base]);
    expect(refused.code).toBe(0);
    expect(refused.out).toMatch(/DEPENDENCY AUDIT NOT DONE/);
    expect(refused.out).toMatch(/HTTP 405 \(allow: GET,HEAD\)/);
    expect(refused.out).toMatch(/UNAUDITED/);
    const down = await runAudit(["--registry", "http://127.0.0.1:9/", "--timeout-ms", "3000"]);
    expect(down.code).toBe(0);
    expect(down.out).toMatch(/DEPENDENCY AUDIT NOT DONE/);
  });

  test("bad usage is an error, not a silent pass", async () => {
    expect((await runAudit(["--fail-level", "severe"])).code).toBe(2);
    expect((await runAudit(["--lockfile", "/nonexistent/pnpm-lock.yaml"])).code).toBe(2);
  });
});
