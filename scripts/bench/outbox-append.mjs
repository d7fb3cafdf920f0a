#!/usr/bin/env node
// CPU per outbox batch: OutboxWriter.append of one page's links for one other node (dedup hash,
// gzip member, write), as a parser of a cluster node pays it for every page and destination. This
// build and, with --compare DIST (another build's packages/shardcrawl/dist), that one, alternating;
// process CPU (main thread and libuv's pool) per append.
// Usage: node scripts/bench/outbox-append.mjs [--links 5] [--appends 3000] [--reps 3] [--compare DIST]
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, args, fmt, median } from "./common.mjs";

const opts = args({ links: { type: "string", default: "5" }, appends: { type: "string", default: "3000" }, reps: { type: "string", default: "3" }, compare: { type: "string" }, worker: { type: "string" } });

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
