#!/usr/bin/env node
// Re-crawl over real HTTP in SIMULATED content time (the short over-HTTP variant of recrawl-eval.mjs):
// simweb runs in-process with a SimClock that this script advances; the RecrawlScheduler plans
// each cycle within its budget; every planned visit is a real conditional GET over loopback
// (shardcrawl's undici client), change detection runs on the extracted text under the content
// rules, and the per-URL history and metrics go to a real redis-server (record_visit.lua).
// Prints: fetches, detected changes, fetches and bytes per change, 304 share, validator verdicts
// per host against simweb's ground truth (which hosts honour validators), and detection errors.
//
//   node scripts/recrawl-http.mjs [--hosts 20] [--days 5] [--budget 1] [--seed 5] [--out bench-results/recrawl-http.json]
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { makeConfig, startSimweb, SimClock } = await import(join(ROOT, "packages/simweb/dist/index.js"));
const R = await import(join(ROOT, "packages/shardcrawl/dist/schedule/recrawl/index.js"));
const { createHttpClient } = await import(join(ROOT, "packages/shardcrawl/dist/fetch/http-client.js"));
const { Redis } = await import("ioredis");

const { values: args } = parseArgs({
  options: {
    hosts: { type: "string", default: "20" },
    days: { type: "string", default: "5" },
    budget: { type: "string", default: "1" },
    seed: { type: "string", default: "5" },
    out: { type: "string", default: "bench-results/recrawl-http.json" },
  },
});
const num = (k) => {
  const v = Number(args[k]);
  if (!(v > 0)) {
    console.error(`recrawl-http: --${k} must be a positive number, got "${args[k]}"`);
    process.exit(2);
  }
  return v;
};
const hosts = num("hosts"), days = num("days"), budgetPerPage = num("budget"), seed = num("seed");
const MIN = 60_000, HOUR = 3_600_000, DAY = 86_400_000;

const freePort = () => new Promise((res, rej) => {
  const s = createServer();
  s.on("error", rej);
  s.listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => res(p)); });
});

// A private redis-server on loopback.
const dir = mkdtempSync(join(tmpdir(), "recrawl-http-"));
const port = await freePort();
const redisProc = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--dir", dir, "--save", "", "--appendonly", "no"], { stdio: "ignore" });
const redis = new Redis(`redis://127.0.0.1:${port}`, { maxRetriesPerRequest: 3, retryStrategy: (n) => (n > 50 ? null : 100) });
redis.on("error", () => {}); // connection refused until redis-server listens: retryStrategy reconnects, ping() waits
await redis.ping();

const clock = new SimClock(Date.UTC(2025, 0, 1));
const config = makeConfig({ preset: "tiny", seed, hosts, change: { staticShare: 0.2, minIntervalMs: 30 * MIN, maxIntervalMs: 60 * DAY, churnShare: 0.3 } });
const sim = await startSimweb({ config, clock, bind: "127.0.0.1" });
const world = sim.world;
const names = world.hosts().map((h) => h.name);
const client = createHttpClient({
  userAgent: "shardcrawl-recrawl-eval/1",
  allowPrivate: true,
  acceptEncoding: "identity",
  caFile: sim.caFile,
  connectTo: names.flatMap((n) => [`${n}:80:127.0.0.1:${sim.httpPort}`, `${n}:443:127.0.0.1:${sim.httpsPort}`]),
  timeouts: { connectMs: 5_000, headersMs: 10_000, bodyMs: 10_000, totalMs: 20_000 },
  maxBodyBytes: 2 * 1024 * 1024,
});

const pages = [];
for (let i = 0; i < world.hostCount(); i++) {
  const h = world.model(i);
  for (let id = 0; id < h.info.pageCount; id++) pages.push({ url: world.page(h, id).url, host: h.info.name });
}
const store = new R.RecrawlHistoryStore(redis, "rc:");
const digester = new R.ContentDigester();
const validators = new R.HostValidators();
const sched = new R.RecrawlScheduler({ budgetPerDay: budgetPerPage * pages.length, cycleMs: HOUR, hostDelayMs: () => MIN });
const truthVersion = new Map();
const meter = new R.FreshnessMeter({ versionAt: (u, t) => world.pageVersionAt(u, t), changeTimes: (u, a, b) => world.changeTimes(u, a, b), ratePerDay: (u) => world.changeRate(u).perDay }, clock.now() + Math.min(DAY, (days * DAY) / 5), clock.now() + days * DAY);
const tally = { fetches: 0, errors: 0, mismatches: 0, observations: 0, churnUnchanged: 0 };
const lastRealByHost = new Map();
const MIN_REAL_GAP_MS = 20; // real-time politeness towards each simweb host

async function visit(p, atMs) {
  clock.set(atMs);
  const wait = (lastRealByHost.get(p.host) ?? 0) + MIN_REAL_GAP_MS - Date.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  const stored = await store.get(p.url);
  const copy = stored && { etag: stored.etag, lastModifiedMs: stored.lastModifiedMs, digest: stored.digest, fetchedAtMs: stored.lastVisitMs, etagChurns: stored.etagChurns };
  const r = await R.revisit(client, p.url, p.host, copy, atMs, digester, validators);
  lastRealByHost.set(p.host, Date.now());
  tally.fetches++;
  if ("error" in r) { tally.errors++; return; }
  const rec = await store.recordVisit(p.url, { atMs, status: r.status, bytes: r.bytes, digest: r.copy.digest, etag: r.copy.etag, lastModifiedMs: r.copy.lastModifiedMs, etagChurns: r.copy.etagChurns, tier: 0, cost: 1, evidence: r.evidence });
  const v = world.pageVersionAt(p.url, atMs);
  if (rec.changed !== null) {
    tally.observations++;
    const truth = v !== truthVersion.get(p.url);
    if (truth !== rec.changed) tally.mismatches++;
    if (!truth && world.changeRate(p.url).churn !== "none") tally.churnUnchanged++;
  }
  truthVersion.set(p.url, v);
  sched.record(p.url, atMs, rec.changed === true);
  meter.visit(p.url, atMs);
}

const t0 = clock.now();
const started = performance.now();
for (const p of pages) {
  sched.add(p.url, p.host, { nowMs: t0, lastVisitMs: t0 });
  await visit(p, t0); // the initial copy
}
for (let t = t0; t < t0 + days * DAY; t += HOUR) {
  for (const v of sched.plan(t)) await visit(pages.find((p) => p.url === v.url) ?? { url: v.url, host: v.host }, v.atMs);
}
const m = await store.metrics();
const fresh = meter.result(pages.map((p) => ({ ...p, value: 1 })));
const hostRows = world.hosts().map((h) => ({ host: h.name, hasValidators: world.model(h.index).has.has("validators"), verdict: validators.verdict(h.name), stats: validators.stats(h.name) }));
const honouring = hostRows.filter((h) => h.hasValidators), ignoring = hostRows.filter((h) => !h.hasValidators);
const pct = (x) => (100 * x).toFixed(1) + "%";
const summary = {
  pages: pages.length, hosts, days, budgetPerPage, realSeconds: (performance.now() - started) / 1000,
  fetches: m.fetches, changes: m.changes, fetchesPerChange: m.fetchesPerChange, bytesPerChange: m.bytesPerChange,
  notModifiedShare: m.notModifiedShare, noChangeShare: m.noChangeShare, freshness: fresh.freshness,
  detection: { observations: tally.observations, mismatches: tally.mismatches, churnUnchangedVisits: tally.churnUnchanged },
  validators: {
    hostsHonouring: honouring.length, detectedHonoured: honouring.filter((h) => h.verdict === "honoured").length,
    hostsIgnoring: ignoring.length, detectedIgnoring: ignoring.filter((h) => h.verdict === "ignored").length,
    wrongVerdicts: hostRows.filter((h) => (h.hasValidators && h.verdict === "ignored") || (!h.hasValidators && h.verdict === "honoured")).length,
  },
  errors: tally.errors,
};
console.log(`recrawl-http: ${pages.length} pages on ${hosts} hosts, ${days} simulated days, budget ${budgetPerPage} visit/page/day, ${summary.realSeconds.toFixed(1)} s real`);
console.log(`  fetches ${m.fetches} (errors ${tally.errors}), detected changes ${m.changes}, fetches per change ${m.fetchesPerChange.toFixed(2)}, bytes per change ${Math.round(m.bytesPerChange)}`);
console.log(`  304 share ${pct(m.notModifiedShare)}, fetches without change ${pct(m.noChangeShare)}, time-averaged freshness ${pct(fresh.freshness)}`);
console.log(`  change detection vs simweb's versions: ${tally.mismatches} mismatches in ${tally.observations} observations (${tally.churnUnchanged} visits to churning pages without a content change)`);
console.log(`  validators: ${summary.validators.detectedHonoured}/${honouring.length} honouring hosts detected as honoured, ${summary.validators.detectedIgnoring}/${ignoring.length} ignoring hosts detected as ignoring, ${summary.validators.wrongVerdicts} wrong verdicts`);
const out = resolve(ROOT, args.out);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify(summary, null, 2));

await client.close();
await sim.close();
await redis.quit();
redisProc.kill("SIGKILL");
rmSync(dir, { recursive: true, force: true });
if (tally.mismatches > 0 || summary.validators.wrongVerdicts > 0) process.exit(1);
