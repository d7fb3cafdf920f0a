#!/usr/bin/env node
// CPU of a node process's start: each role's script (fetcher, parser) run without its config, so it
// loads and evaluates its whole import graph, then stops at the missing config; the supervisor is
// `crawl` with a seed file that does not exist, so it parses and checks its flags and loads the
// supervisor's modules, then stops at the preflight (exit 66). The process's own
// CPU (process.cpuUsage at exit, all threads) is what every node process pays once per start:
// with a few thousand pages per run it is a visible part of the whole-run figure.
// With --compare DIST (another build's packages/shardcrawl/dist) the two builds alternate.
// Usage: node scripts/bench/startup.mjs [--reps N] [--compare /path/to/dist]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, args, fmt, median } from "./common.mjs";

const opts = args({ reps: { type: "string", default: "9" }, compare: { type: "string" } });
const REPS = Number(opts.reps);
const builds = [["this build", join(ROOT, "packages/shardcrawl/dist")], ...(opts.compare ? [[opts.compare, opts.compare]] : [])];
// Written by the child at exit, after everything it loaded ran.
const REPORT = "process.on('exit', () => { const u = process.cpuUsage(); process.stderr.write('\\nCPU_US ' + (u.user + u.system) + '\\n'); });";

const work = mkdtempSync(join(tmpdir(), "bench-startup-"));
const preload = join(work, "report-cpu.cjs");
writeFileSync(preload, REPORT);

const SUPERVISOR_ARGS = ["crawl", "--seeds", join(work, "no-such-seeds.txt"), "--out", join(work, "out"), "--user-agent", "startup-bench/1 (+https://example.org/bench)"];

function startCpuMs(dist, role) {
  const script = role === "supervisor" ? [join(dist, "cli", "main.js"), ...SUPERVISOR_ARGS] : [join(dist, "node", `${role}-process.js`)];
  const r = spawnSync(process.execPath, ["--require", preload, ...script], { env: { PATH: process.env.PATH }, encoding: "utf8", timeout: 60_000 });
  const m = /CPU_US (\d+)/.exec(r.stderr ?? "");
  // The supervisor must have stopped at the missing seed file, not earlier (flags, user agent).
  if (!m || (role === "supervisor" && r.status !== 66)) throw new Error(`${role} of ${dist}: no CPU report or an unexpected stop (status ${r.status}): ${(r.stderr ?? "").slice(-300)}`);
  return Number(m[1]) / 1000;
}

for (const role of ["fetcher", "parser", "supervisor"]) {
  const ms = new Map(builds.map(([name]) => [name, []]));
  for (let i = 0; i < REPS; i++) for (const [name, dist] of i % 2 ? [...builds].reverse() : builds) ms.get(name).push(startCpuMs(dist, role));
  for (const [name, xs] of ms) console.log(`${role} start, ${name}: median ${fmt(median(xs), 0)} ms CPU (${xs.map((x) => fmt(x, 0)).join(" ")})`);
}
rmSync(work, { recursive: true, force: true });
