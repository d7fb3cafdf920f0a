#!/usr/bin/env node
// How fast a node loads its seed file, and with how much memory: `shardcrawl crawl --seeds FILE`
// on a fresh Redis, timed from the node's start until its first fetcher starts (seeding is done
// by then), with the supervisor's peak RSS and the CPU seconds of the supervisor and redis-server.
// The seeds are simweb page URLs (10^5 hosts), in one of two orders: "host" (each host's URLs
// together, as a crawl's export lists them) or "round-robin" (one URL per host in turn, the worst
// case for the frontier's per-host work). With --compare, a second build runs the same file
// alternately (A B A B ...).
// Usage: node scripts/bench/seed-load.mjs [--urls N] [--order host|round-robin] [--reps N]
//          [--compare OTHER/dist/cli/main.js] [--out FILE]
import { spawn } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import { ROOT, SHARDCRAWL_CLI, args, descendants, fmt, procCmd, procCpu, procMem, startRedisServer, writeResult, RESULTS_DIR } from "./common.mjs";

const opts = args({ urls: { type: "string" }, order: { type: "string" }, reps: { type: "string" }, compare: { type: "string" }, cli: { type: "string" } });
const N = Number(opts.urls ?? (opts.mode === "full" ? 1e7 : 1e6));
const ORDER = opts.order ?? "host";
const REPS = Number(opts.reps ?? 1);
const builds = [{ name: "A", cli: opts.cli ?? SHARDCRAWL_CLI }, ...(opts.compare ? [{ name: "B", cli: opts.compare }] : [])];
const work = mkdtempSync(join(tmpdir(), "bench-seed-load-"));

const { World, makeConfig } = await import(join(ROOT, "packages/simweb/dist/index.js"));
const world = new World(makeConfig({ preset: "polite", hosts: 100_000, seed: 17, httpsShare: 0, outDegreeFrom: "real" }));

/** N page URLs of simweb, about N / 10^5 per host, in the chosen order. */
async function writeSeeds(file) {
  const out = createWriteStream(file);
  const hosts = world.hostCount();
  const per = Math.ceil(N / hosts);
  let buf = [], n = 0;
  const put = async (u) => {
    buf.push(u);
    n++;
    if (buf.length === 10_000) { if (!out.write(buf.join("\n") + "\n")) await once(out, "drain"); buf = []; }
  };
  if (ORDER === "host") {
    for (let i = 0; i < hosts && n < N; i++) {
      const h = world.model(i);
      for (let j = 1; j <= per && j < h.info.pageCount && n < N; j++) await put(world.pageUrl(h, j));
    }
  } else {
    for (let j = 1; j <= per && n < N; j++) for (let i = 0; i < hosts && n < N; i++) {
      const h = world.model(i);
      if (j < h.info.pageCount) await put(world.pageUrl(h, j));
    }
  }
  out.end(buf.length ? buf.join("\n") + "\n" : "");
  await once(out, "finish");
  return n;
}

const seeds = join(work, "seeds.txt");
const lines = await writeSeeds(seeds);
process.stderr.write(`seed-load: ${lines} URLs (${ORDER} order) in ${seeds}\n`);

async function run(build, rep) {
  const redis = await startRedisServer(join(work, `redis-${build.name}-${rep}`));
  const t = Date.now();
  const node = spawn(process.execPath, [
    build.cli, "crawl", "--seeds", seeds, "--out", join(work, `out-${build.name}-${rep}`), "--redis", redis.url, "--progress", "off",
    "--scope", "any", "--allow-private", "--connect-to", ":80:127.0.0.1:9", "--expected-urls", String(Math.max(N, 1e6)),
    "--user-agent", "shardcrawl-bench/0.1 (+https://github.com/shardcrawl/shardcrawl)",
  ], { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  node.stderr.on("data", (b) => { stderr = (stderr + b).slice(-4000); });
  let peak = 0, cpu = 0;
  for (;;) {
    await new Promise((r) => setTimeout(r, 200));
    peak = Math.max(peak, procMem(node.pid));
    cpu = procCpu(node.pid)?.self ?? cpu;
    if (node.exitCode !== null) throw new Error(`node exited (${node.exitCode}): ${stderr}`);
    // Children start once the seeds are in.
    if (descendants(node.pid).some((p) => procCmd(p).some((a) => a.endsWith("fetcher-process.js")))) break;
  }
  const seconds = (Date.now() - t) / 1000;
  const seeded = Number(await redis.client.hget("sc:stats", "seeds"));
  const redisCpu = redis.cpu();
  node.kill("SIGKILL");
  for (const p of descendants(node.pid)) try { process.kill(p, "SIGKILL"); } catch { /* gone */ }
  await redis.stop();
  rmSync(join(work, `out-${build.name}-${rep}`), { recursive: true, force: true });
  const r = { build: build.name, rep, seconds, seeded, urlsPerS: seeded / seconds, supervisorPeakRssMB: peak / 1e6, supervisorCpuS: cpu, redisCpuS: redisCpu, load1: loadavg()[0] };
  process.stderr.write(`seed-load ${build.name}#${rep}: ${seeded} seeds in ${fmt(seconds)} s = ${fmt(r.urlsPerS, 0)} URLs/s; supervisor peak RSS ${fmt(r.supervisorPeakRssMB, 0)} MB, CPU ${fmt(cpu)} s; redis CPU ${fmt(redisCpu)} s; load ${fmt(r.load1)}\n`);
  return r;
}

const runs = [];
for (let rep = 0; rep < REPS; rep++) for (const b of builds) runs.push(await run(b, rep));
writeResult(opts.out ?? join(RESULTS_DIR, `seed-load-${ORDER}.json`), {
  bench: "seed-load", urls: lines, order: ORDER, builds, runs,
  command: `node scripts/bench/seed-load.mjs --urls ${N} --order ${ORDER} --reps ${REPS}${opts.compare ? ` --compare ${opts.compare}` : ""}`,
});
rmSync(work, { recursive: true, force: true });
process.exit(0);
