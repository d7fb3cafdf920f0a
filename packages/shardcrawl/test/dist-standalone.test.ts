// The built package runs without its source tree: dist/ (with the Lua scripts and status pages
// the build copies beside the modules) and package.json in a folder of their own, node_modules
// linked, no src/ anywhere near; a short crawl against simweb runs every stage (seeds, lease,
// fetch, complete, parse, ack: the scripts of each), and the frontier's script runner loads every
// .lua file from the copy.
import { spawn } from "node:child_process";
import { cpSync, existsSync, mkdtempSync, readdirSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../../../test/harness/redis.js";
import { startSimwebProcess, type SimwebProcess } from "../../../test/harness/simweb.js";
import { readPageLog, simwebFlags, writeSeeds } from "../../../test/harness/crawl.js";

const PKG = new URL("../", import.meta.url).pathname;

describe("the built package without src/", () => {
  let dir: string;
  let app: string;
  let sim: SimwebProcess;
  let redis: TestRedis;
  const configArgs = ["--preset", "polite", "--seed", "11", "--hosts", "8"];

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sc-dist-"));
    app = join(dir, "shardcrawl");
    cpSync(join(PKG, "dist"), join(app, "dist"), { recursive: true });
    cpSync(join(PKG, "package.json"), join(app, "package.json"));
    symlinkSync(join(PKG, "node_modules"), join(app, "node_modules"), "dir");
    sim = await startSimwebProcess({ extraArgs: configArgs });
    redis = await startRedis();
  });
  afterAll(async () => {
    await sim?.stop();
    await redis?.stop();
  });

  it("holds every Lua script and status page beside the modules", () => {
    expect(existsSync(join(app, "src"))).toBe(false);
    const lua = readdirSync(join(PKG, "src/frontier/lua")).sort();
    expect(lua.length).toBeGreaterThan(20);
    expect(readdirSync(join(app, "dist/frontier/lua")).sort()).toEqual(lua);
    expect(readdirSync(join(app, "dist/node/ui")).sort()).toEqual(readdirSync(join(PKG, "src/node/ui")).sort());
  });

  it("loads every script into a real redis-server", async () => {
    const mod = (await import(join(app, "dist/frontier/index.js"))) as typeof import("../src/frontier/index.js");
    const client = redis.client();
    try {
      const scripts = new mod.Scripts(client);
      for (const name of Object.keys(mod.SCRIPT_FILES) as Array<keyof typeof mod.SCRIPT_FILES>) {
        // SCRIPT LOAD compiles the script: a missing or broken file fails here.
        expect(await client.script("LOAD", scripts.source(name))).toMatch(/^[0-9a-f]{40}$/);
      }
      // FUNCTION LOAD compiles the library every script runs from, with a function per script.
      const lib = String(await client.call("FUNCTION", "LOAD", scripts.library()));
      const listed = JSON.stringify(await client.call("FUNCTION", "LIST", "LIBRARYNAME", lib));
      for (const name of Object.keys(mod.SCRIPT_FILES)) expect(listed).toContain(`_${name}"`);
    } finally {
      client.disconnect();
    }
  });

  it("crawls: `shardcrawl crawl` from the copy fetches and parses pages", async () => {
    const seeds = join(dir, "seeds.txt");
    writeSeeds(configArgs, seeds);
    const out = join(dir, "out");
    const proc = spawn(process.execPath, [join(app, "dist/cli/main.js"), "crawl", "--progress", "off", "--seeds", seeds, "--out", out, "--redis", redis.url,
      "--scope", "domains", "--delay", "10", "--max-crawl-delay", "100", "--max-pages", "40", "--fetchers", "1", "--parsers", "1", ...simwebFlags(sim)], {
      cwd: dir, stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    proc.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    const code = await new Promise<number | null>((r) => proc.once("exit", r));
    expect(code, stderr).toBe(0);
    expect(stderr).not.toMatch(/ENOENT|\/src\//);
    const pages = readPageLog(out);
    expect(pages.filter((p) => p.status === 200).length).toBeGreaterThan(5);
  });
});
