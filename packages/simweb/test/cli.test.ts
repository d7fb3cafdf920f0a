// Uses the built CLI (packages/simweb/dist/cli.js): run `pnpm build` first (pnpm test does).
import { describe, expect, test } from "vitest";
import { readFileSync, writeFileSync, mkdtempSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSimwebProcess } from "../../../test/harness/simweb.js";
import { makeConfig, World, type LogEntry } from "../src/index.js";
import { get } from "./client.js";

const CLI = join(import.meta.dirname, "../dist/cli.js");

describe("simweb CLI", () => {
  test("serve prints one JSON line, serves http and https, and flushes the log on SIGTERM", async () => {
    const p = await startSimwebProcess({ preset: "tiny", seed: 5, extraArgs: ["--time-scale", "1000"] });
    expect(p.hosts).toBe(20);
    expect(p.ca).toMatch(/ca\.pem$/);
    const t = { httpPort: p.http, httpsPort: p.https, caFile: p.ca };
    const w = new World(makeConfig({ preset: "tiny", seed: 5 }));
    const seeds = w.seeds(4);
    for (const s of seeds) expect((await get(t, s)).status).toBe(200);
    await p.stop();
    expect(p.proc.exitCode).toBe(0);
    const lines = readFileSync(p.logFile, "utf8").trim().split("\n").map((l) => JSON.parse(l) as LogEntry);
    expect(lines).toHaveLength(4);
    expect(lines.map((l) => `${l.scheme}://${l.host}${l.path}`).sort()).toEqual([...seeds].sort());
    for (const l of lines) expect(l.sim).toBeGreaterThan(w.config.timeOriginMs); // scaled content clock
  });

  test("seeds and expected print one URL per line; bad flags exit 2 with a specific message", () => {
    const seeds = spawnSync(process.execPath, [CLI, "seeds", "--preset", "tiny", "--count", "3"], { encoding: "utf8" });
    expect(seeds.status).toBe(0);
    expect(seeds.stdout.trim().split("\n")).toEqual(new World(makeConfig({ preset: "tiny" })).seeds(3));
    const dir = mkdtempSync(join(tmpdir(), "simweb-cli-"));
    writeFileSync(join(dir, "seeds.txt"), seeds.stdout);
    const exp = spawnSync(process.execPath, [CLI, "expected", "--preset", "tiny", "--seeds", join(dir, "seeds.txt"), "--scope", "hosts"], { encoding: "utf8" });
    expect(exp.status).toBe(0);
    const urls = exp.stdout.trim().split("\n");
    expect(urls.length).toBeGreaterThan(3);
    for (const u of urls) expect(new URL(u).href).toBe(u);
    expect(JSON.parse(exp.stderr)).toMatchObject({ urls: urls.length });
    const bad = spawnSync(process.execPath, [CLI, "seeds", "--hosts", "zero"], { encoding: "utf8" });
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--hosts must be an integer/);
    const badPreset = spawnSync(process.execPath, [CLI, "seeds", "--preset", "huge"], { encoding: "utf8" });
    expect(badPreset.status).toBe(2);
    expect(badPreset.stderr).toMatch(/unknown preset "huge"/);
    const badCfg = spawnSync(process.execPath, [CLI, "seeds", "--config", join(dir, "nope.json")], { encoding: "utf8" });
    expect(badCfg.status).toBe(2);
    expect(badCfg.stderr).toMatch(/cannot read --config/);
    writeFileSync(join(dir, "cfg.json"), JSON.stringify({ preset: "polite", hosts: 7 }));
    const cfg = spawnSync(process.execPath, [CLI, "seeds", "--config", join(dir, "cfg.json")], { encoding: "utf8" });
    expect(cfg.stdout.trim().split("\n")).toHaveLength(7);
  });
});
