#!/usr/bin/env node
// CPU per outbox batch: OutboxWriter.append of one page's links for one other node (dedup hash,
// gzip member, write), as a parser of a cluster node pays it for every page and destination. This
// build and, with --compare DIST (another build's packages/shardcrawl/dist), that one, alternating;
// process CPU (main thread and libuv's pool) per append.
// --stream: a parser's regime instead: pages finishing concurrently (up to --window in flight), each
// sending --links links to each of --dests other nodes, with each destination's batches written at
// once and gathered for --group-ms (OutboxWriter groupCommitMs), side by side in one run; CPU per page.
// Usage: node scripts/bench/outbox-append.mjs [--links 5] [--appends 3000] [--reps 3] [--compare DIST]
//        node scripts/bench/outbox-append.mjs --stream [--dests 10] [--links 2] [--pages 3000] [--group-ms 0,250] [--reps 3]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, args, fmt, median } from "./common.mjs";

const opts = args({
  links: { type: "string", default: "5" }, appends: { type: "string", default: "3000" }, reps: { type: "string", default: "3" }, compare: { type: "string" }, worker: { type: "string" },
  stream: { type: "boolean", default: false }, dests: { type: "string", default: "10" }, pages: { type: "string", default: "3000" }, window: { type: "string", default: "64" }, "group-ms": { type: "string", default: "0,250" },
});

if (opts.worker && opts.stream) {
  // One parser's outbox: pages finish concurrently; a page is done when all its batches are written.
  const { OutboxWriter } = await import(join(opts.worker, "shard/outbox-writer.js"));
  const dir = mkdtempSync(join(tmpdir(), "bench-outbox-"));
  const groupMs = Number(opts["group-ms"]);
  const w = new OutboxWriter({ out: dir, writer: "p1", maxFileBytes: 64 << 20, dedupEntries: 1 << 20, groupCommitMs: groupMs });
  const dests = Number(opts.dests), links = Number(opts.links), windowSize = Number(opts.window);
  let k = 0;
  const page = () => Promise.all(Array.from({ length: dests }, (_, d) => w.append(`n${d}`, Array.from({ length: links }, () => ({ url: `https://www.example${k % 97}.com/some/path/to/page-${k++}.html?x=1`, depth: 3 })))));
  const run = async (n) => {
    const inFlight = new Set();
    for (let i = 0; i < n; i++) {
      if (inFlight.size >= windowSize) await Promise.race(inFlight);
      const p = page().finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await Promise.all(inFlight);
  };
  await run(200);
  const t0 = process.cpuUsage();
  const wall0 = process.hrtime.bigint();
  const n = Number(opts.pages);
  await run(n);
  const d = process.cpuUsage(t0);
  const wallMs = Number(process.hrtime.bigint() - wall0) / 1e6;
  await w.close();
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${JSON.stringify({ usPerPage: (d.user + d.system) / n, wallMs })}\n`);
  process.exit(0);
}

if (opts.worker) {
  const { OutboxWriter } = await import(join(opts.worker, "shard/outbox-writer.js"));
  const dir = mkdtempSync(join(tmpdir(), "bench-outbox-"));
  const w = new OutboxWriter({ out: dir, writer: "p1", maxFileBytes: 64 << 20, dedupEntries: 1 << 20 });
  let k = 0;
  const batch = () => Array.from({ length: Number(opts.links) }, () => ({ url: `https://www.example${k % 7}.com/some/path/to/page-${k++}.html?x=1`, depth: 3 }));
  for (let i = 0; i < 200; i++) await w.append(`n${i % 4}`, batch());
  const t0 = process.cpuUsage();
  const n = Number(opts.appends);
  for (let i = 0; i < n; i++) await w.append(`n${i % 4}`, batch());
  const d = process.cpuUsage(t0);
  await w.close();
  rmSync(dir, { recursive: true, force: true });
  process.stdout.write(`${(d.user + d.system) / n}\n`);
  process.exit(0);
}

if (opts.stream) {
  // Same build, each group-commit setting, alternating.
  const dist = join(ROOT, "packages/shardcrawl/dist");
  const settings = opts["group-ms"].split(",").map(Number);
  const res = new Map(settings.map((g) => [g, []]));
  for (let r = 0; r < Number(opts.reps); r++) {
    for (const g of r % 2 ? [...settings].reverse() : settings) {
      const out = spawnSync(process.execPath, [new URL(import.meta.url).pathname, "--worker", dist, "--stream", "--group-ms", String(g), "--dests", opts.dests, "--links", opts.links, "--pages", opts.pages, "--window", opts.window], { encoding: "utf8" });
      if (out.status !== 0) throw new Error(out.stderr);
      res.get(g).push(JSON.parse(out.stdout.trim()));
    }
  }
  const summary = {};
  for (const [g, xs] of res) {
    summary[g] = median(xs.map((x) => x.usPerPage));
    process.stderr.write(`group commit ${g} ms: ${fmt(summary[g], 1)} us of CPU per page (${opts.dests} destinations x ${opts.links} links; runs: ${xs.map((x) => fmt(x.usPerPage, 1)).join(", ")}; wall per run ${xs.map((x) => fmt(x.wallMs / 1000, 1)).join(", ")} s)\n`);
  }
  if (settings.length === 2) process.stderr.write(`${settings[1]} ms / ${settings[0]} ms: ${fmt(summary[settings[1]] / summary[settings[0]], 3)}\n`);
  process.exit(0);
}

const builds = [["this build", join(ROOT, "packages/shardcrawl/dist")], ...(opts.compare ? [["compared", opts.compare]] : [])];
const us = new Map(builds.map(([k]) => [k, []]));
for (let r = 0; r < Number(opts.reps); r++) {
  for (const [k, dist] of r % 2 ? [...builds].reverse() : builds) {
    const out = spawnSync(process.execPath, [new URL(import.meta.url).pathname, "--worker", dist, "--links", opts.links, "--appends", opts.appends], { encoding: "utf8" });
    if (out.status !== 0) throw new Error(out.stderr);
    us.get(k).push(Number(out.stdout.trim()));
  }
}
for (const [k, xs] of us) process.stderr.write(`${k}: ${fmt(median(xs), 1)} us of CPU per append of ${opts.links} links (runs: ${xs.map((x) => fmt(x, 1)).join(", ")})\n`);
if (opts.compare) process.stderr.write(`this build / compared: ${fmt(median(us.get("this build")) / median(us.get("compared")), 2)}\n`);
