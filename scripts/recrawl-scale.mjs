#!/usr/bin/env node
// Scale of the re-crawl schedule in Redis: fills a redis-server of its own (free loopback port)
// with N scheduled pages (record + due entry, as the node writes them: history-codec.ts format 3 keyed
// by the path's hash, recrawl_set_due.lua's 12-byte entries),
// then a separate "supervisor" process opens the schedule and plans cycles, and reports:
//   - Redis bytes per page (used_memory delta / N, and the split: records vs due index),
//   - planning time per cycle (pages due per cycle = N / spread cycles),
//   - the supervisor's RSS (and its heap), and the time to (re)open the schedule.
//
//   node scripts/recrawl-scale.mjs [--pages 10000000] [--per-host 1000] [--spread-days 7]
//                                  [--cycle 900000] [--cycles 8] [--out bench-results/recrawl-scale.json]
// (The supervisor part runs as `--plan <redis-url>` in a child process, so its RSS is not the filler's.)
import { spawn, execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const require = (await import("node:module")).createRequire(join(ROOT, "packages/shardcrawl/package.json"));
const { Redis } = require("ioredis");
const R = await import(join(ROOT, "packages/shardcrawl/dist/schedule/recrawl/index.js"));

const { values: args } = parseArgs({
  options: {
    pages: { type: "string", default: "10000000" },
    "per-host": { type: "string", default: "1000" },
    "spread-days": { type: "string", default: "7" },
    cycle: { type: "string", default: "900000" },
    cycles: { type: "string", default: "8" },
    out: { type: "string", default: "bench-results/recrawl-scale.json" },
    plan: { type: "string" },
    "from-cycle": { type: "string", default: "0" },
  },
});
const N = Number(args.pages);
const PER_HOST = Number(args["per-host"]);
const CYCLE = Number(args.cycle);
const SPREAD_MS = Number(args["spread-days"]) * R.DAY_MS;
const CYCLES = Number(args.cycles);
const PREFIX = "sc:";
const T0 = Date.UTC(2026, 0, 1);
/** Budget: every page once per spread period, the node's visits a day. */
const BUDGET_PER_DAY = (N / SPREAD_MS) * R.DAY_MS;

const scheduleConfig = () => ({ budgetPerDay: BUDGET_PER_DAY, cycleMs: CYCLE, hostDelayMs: () => 1000, pendingTimeoutMs: 4 * CYCLE, maxDebt: BUDGET_PER_DAY });

if (args.plan) {
  // ---- the supervisor: open the schedule and plan cycles; report time and memory ----
  const redis = new Redis(args.plan, { enableAutoPipelining: true });
  const rss0 = process.memoryUsage().rss;
  let t = performance.now();
  const s = await R.RedisRecrawlSchedule.open(redis, PREFIX, scheduleConfig());
  const openMs = performance.now() - t;
  const cycles = [];
  for (let i = 0; i < CYCLES; i++) {
    const now = T0 + (Number(args["from-cycle"]) + i) * CYCLE;
    t = performance.now();
    const cpu = process.cpuUsage();
    const plan = await s.plan(now);
    const used = process.cpuUsage(cpu);
    cycles.push({ ms: performance.now() - t, cpuMs: (used.user + used.system) / 1000, visits: plan.length, read: s.lastCandidates, rssMB: process.memoryUsage().rss / 2 ** 20 });
  }
  globalThis.gc?.();
  const mem = process.memoryUsage();
  process.stdout.write(JSON.stringify({ openMs, cycles, rssStartMB: rss0 / 2 ** 20, rssMB: mem.rss / 2 ** 20, heapUsedMB: mem.heapUsed / 2 ** 20, state: s.snapshotState }) + "\n");
  redis.disconnect();
  process.exit(0);
}

async function freePort() {
  return new Promise((res, rej) => {
    const srv = createServer();
    srv.on("error", rej);
    srv.listen(0, "127.0.0.1", () => {
      const p = srv.address().port;
      srv.close(() => res(p));
    });
  });
}

const dir = mkdtempSync(join(tmpdir(), "sc-scale-"));
const port = await freePort();
// The node's recommended hash encoding (docs/recrawl.md): a host's records stay a listpack.
const server = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no",
  "--hash-max-listpack-entries", "4096", "--hash-max-listpack-value", "128"], { stdio: "ignore" });
const url = `redis://127.0.0.1:${port}`;
for (let i = 0; ; i++) {
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
  probe.on("error", () => {});
  try {
    await probe.connect();
    await probe.ping();
    probe.disconnect();
    break;
  } catch {
    probe.disconnect();
    if (i > 100) throw new Error("redis-server did not start");
    await new Promise((r) => setTimeout(r, 100));
  }
}
const redis = new Redis(url, { maxRetriesPerRequest: null });
const cleanup = () => {
  redis.disconnect();
  server.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
};
process.on("SIGINT", () => { cleanup(); process.exit(130); });
// An error anywhere must not leave our redis-server running.
process.on("uncaughtException", (err) => { console.error(err); cleanup(); process.exit(1); });

const used = async () => Number(/used_memory:(\d+)/.exec(await redis.info("memory"))[1]);
const base = await used();
const hex = (i) => i.toString(16).padStart(16, "0");
const history = R.emptyHistory();
for (let k = 0; k < 6; k++) R.observe(history, 0.5 + k, k % 2 === 0);

console.log(`recrawl-scale: filling ${N.toLocaleString()} pages (${(N / PER_HOST).toLocaleString()} hosts of ${PER_HOST}), load ${loadavg().map((l) => l.toFixed(1)).join(" ")}`);
let t = performance.now();
// Written directly, pipelined (records with their due field, due entries, host tables: the same
// bytes recrawl_set_due.lua writes), one HSET per host and one RPUSH per slot and chunk, so 10^7
// pages fill in minutes on a busy machine.
const CHUNK = 200_000;
const SLOT = 60_000;
// Every host has the same PER_HOST paths: each path's key and record are encoded once
// (encodeRecord), and each page's record is that one with its own due time, last visit, digest and
// ETag written in place (fixed-size fields; checked against encodeRecord on a sample below), so the
// fill is not bound by the encoder on a busy machine.
const etagOf = (i) => `"${(i * 7919).toString(36).padStart(10, "0").slice(-10)}"`;
const recordOf = (i, field) => R.encodeRecord({ lastVisitMs: T0 - ((i * 7919) % SPREAD_MS), etag: etagOf(i), etagChurns: false, digest: hex(i + 1), tier: 1, cost: 1, history, dueSec: Math.floor((T0 + ((i * 104729) % SPREAD_MS)) / 1000) }, field);
const templates = Array.from({ length: Math.min(PER_HOST, N) }, (_, j) => {
  const field = `/products/item-${j}-blue-cotton.html`;
  const record = recordOf(j, field);
  return { field, key: R.pathKey(field), record, etagAt: record.length - R.encodePath(field).length - 12 };
});
function pageRecord(i) {
  const tp = templates[i % PER_HOST];
  const rec = Buffer.from(tp.record);
  rec.writeUInt32BE(Math.floor((T0 + ((i * 104729) % SPREAD_MS)) / 1000), 2);
  const visit = R.lastVisitStamp(T0 - ((i * 7919) % SPREAD_MS));
  rec[6] = visit.fraction;
  rec.writeUInt32BE(visit.seconds, 7);
  rec.write(hex(i + 1), 11, "hex");
  rec.write(etagOf(i), tp.etagAt, "latin1");
  return rec;
}
for (let i = 0; i < N; i += Math.max(1, Math.floor(N / 50))) {
  if (!pageRecord(i).equals(recordOf(i, templates[i % PER_HOST].field))) throw new Error(`recrawl-scale: page ${i}'s record differs from encodeRecord's`);
}
for (let start = 0; start < N; start += CHUNK) {
  const p = redis.pipeline();
  const bySlot = new Map();
  let fields = [];
  let hostKey = "";
  for (let i = start; i < Math.min(N, start + CHUNK); i++) {
    const hostId = Math.floor(i / PER_HOST) + 1;
    const host = `shop${hostId - 1}.example.test`;
    if (i % PER_HOST === 0 || i === start) {
      if (fields.length > 0) p.hset(hostKey, ...fields);
      fields = [];
      hostKey = `${PREFIX}rp:${host}`;
      if (i % PER_HOST === 0) {
        p.hset(`${PREFIX}rhid`, host, hostId);
        p.hset(`${PREFIX}rhost`, hostId, `${host}\thttps://${host}`);
      }
    }
    const key = templates[i % PER_HOST].key;
    fields.push(key, pageRecord(i));
    const slot = Math.floor(((T0 + ((i * 104729) % SPREAD_MS)) / 1000) * 1000 / SLOT);
    const entry = Buffer.allocUnsafe(4 + key.length);
    entry.writeUInt32BE(hostId, 0);
    key.copy(entry, 4);
    let list = bySlot.get(slot);
    if (!list) bySlot.set(slot, (list = []));
    list.push(entry);
  }
  if (fields.length > 0) p.hset(hostKey, ...fields);
  for (const [slot, entries] of bySlot) p.rpush(`${PREFIX}rq:${slot}`, ...entries).zadd(`${PREFIX}rqs`, slot, slot);
  await p.exec();
  if ((start + CHUNK) % 1_000_000 === 0) console.log(`  ${(start + CHUNK).toLocaleString()} pages, ${((performance.now() - t) / 1000).toFixed(0)} s`);
}
await redis.set(`${PREFIX}rhostn`, Math.ceil(N / PER_HOST));
await redis.hset(`${PREFIX}rsched`, "slot", SLOT, "pages", N, "layout", "3");
const fillS = (performance.now() - t) / 1000;
const total = (await used()) - base;
// Split: the records (P rp:<host>) from a sample of hosts, the rest is the due index and host tables.
let recBytes = 0;
const sampleHosts = Math.min(50, Math.ceil(N / PER_HOST));
for (let h = 0; h < sampleHosts; h++) recBytes += Number(await redis.memory("USAGE", `${PREFIX}rp:shop${h}.example.test`, "SAMPLES", 0));
const recordsPerPage = recBytes / (sampleHosts * Math.min(PER_HOST, N));
const result = {
  pages: N, perHost: PER_HOST, spreadDays: SPREAD_MS / R.DAY_MS, cycleMs: CYCLE, budgetPerDay: BUDGET_PER_DAY,
  fillSeconds: fillS, redisBytesPerPage: total / N, recordBytesPerPage: recordsPerPage, indexBytesPerPage: total / N - recordsPerPage,
  pathBytes: "/products/item-500-blue-cotton.html".length,
  recordValueBytes: recordOf(500, "/products/item-500-blue-cotton.html").length,
  recordKeyBytes: R.PATH_KEY_BYTES, dueEntryBytes: 4 + R.PATH_KEY_BYTES, etagBytes: 12, layout: 3,
  slots: await redis.zcard(`${PREFIX}rqs`), loadavgStart: loadavg(), redisVersion: /redis_version:(\S+)/.exec(await redis.info("server"))[1],
};
console.log(`  filled in ${fillS.toFixed(0)} s: ${result.redisBytesPerPage.toFixed(1)} Redis bytes/page (records ${recordsPerPage.toFixed(1)}, due index and host tables ${result.indexBytesPerPage.toFixed(1)})`);

// The supervisor: a child process, twice (the second is a restart on the same Redis).
const runSupervisor = (from) => JSON.parse(execFileSync(process.execPath, ["--expose-gc", fileURLToPath(import.meta.url), "--plan", url, "--from-cycle", String(from),
  "--pages", String(N), "--spread-days", String(SPREAD_MS / R.DAY_MS), "--cycle", String(CYCLE), "--cycles", String(CYCLES)], { encoding: "utf8", maxBuffer: 1 << 24 }).trim().split("\n").pop());
const first = runSupervisor(0);
const restart = runSupervisor(CYCLES);
result.supervisor = first;
result.restart = restart;
result.loadavgEnd = loadavg();
result.redisBytesPerPageAfterPlans = ((await used()) - base) / N;
const ms = first.cycles.map((c) => c.ms).sort((a, b) => a - b);
console.log(`  supervisor: open ${first.openMs.toFixed(1)} ms; plan per cycle median ${ms[Math.floor(ms.length / 2)].toFixed(0)} ms wall (max ${ms[ms.length - 1].toFixed(0)}), ${first.cycles.map((c) => c.cpuMs.toFixed(0)).join(", ")} ms CPU, due pages read ${first.cycles.map((c) => c.read).join(", ")}, visits ${first.cycles.map((c) => c.visits).join(", ")}; RSS ${first.rssMB.toFixed(0)} MB (heap ${first.heapUsedMB.toFixed(0)} MB)`);
console.log(`  restart: open ${restart.openMs.toFixed(1)} ms, then ${restart.cycles.map((c) => c.visits).join(", ")} visits in its cycles; RSS ${restart.rssMB.toFixed(0)} MB`);
console.log(`  load average at the end: ${result.loadavgEnd.map((l) => l.toFixed(1)).join(" ")} (2 cores shared with other work)`);
mkdirSync(dirname(resolve(ROOT, args.out)), { recursive: true });
writeFileSync(resolve(ROOT, args.out), JSON.stringify(result, null, 2) + "\n");
cleanup();
