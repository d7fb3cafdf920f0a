#!/usr/bin/env node
// The full-size form of the bounded-frontier check (test/flow-memory.test.ts is the CI-sized one): a hot host generating unlimited
// unique links next to ordinary hosts, for millions of URLs, against a real redis-server under a
// memory budget with shedding in spill mode. The frontier's own code runs (dist), driven like a
// crawl: every step adds a page's links (mostly the trap host's deep ones, some shallow links of
// ordinary hosts) and fetches a few URLs; once a second the memory governor and the spill store
// run, as fetcher 0 does in a node. Then link generation stops and the frontier is drained, so
// every spilled URL must come back. Results go to a JSON file and stdout.
//
//   node scripts/flow-frontier-flood.mjs [--urls 3000000] [--budget-mb 64] [--out bench-results/flow-flood.json]
import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import { tmpdir, cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { createRequire } from "node:module";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { values } = parseArgs({ options: { urls: { type: "string" }, "budget-mb": { type: "string" }, out: { type: "string" } } });
const URLS = Number(values.urls ?? 3_000_000);
const BUDGET_EXTRA = Number(values["budget-mb"] ?? 64) * 1024 * 1024;
const OUT = values.out ?? join(ROOT, "bench-results/flow-flood.json");

const dist = (p) => import(join(ROOT, "packages/shardcrawl/dist", p));
const { Frontier, MemoryGovernor, SpillStore, redisUsedMemory } = await dist("frontier/index.js");
const { startNodeRedis } = await dist("node/redis-server.js");
const { Redis } = createRequire(join(ROOT, "packages/shardcrawl/package.json"))("ioredis");

const dir = mkdtempSync(join(tmpdir(), "sc-flood-"));
const handle = await startNodeRedis(dir);
const redis = new Redis(handle.url, { maxRetriesPerRequest: null });
try {
  const frontier = await Frontier.open(redis, {
    bloom: { expectedUrls: URLS + 100_000, falsePositiveRate: 0.01 }, delayMs: 0, hostConcurrency: 1000,
    maxQueuedPerHost: 50_000_000, maxQueuedTotal: 100_000_000, flow: { shedMode: "spill" },
  });
  const base = await redisUsedMemory(frontier);
  const budget = base + BUDGET_EXTRA;
  const governor = new MemoryGovernor(frontier, { budgetBytes: budget, high: 0.85, low: 0.7 });
  const spill = new SpillStore(join(dir, "spill"), frontier);
  let maxUsed = base;
  let offered = 0;
  let seq = 0;
  let t = 1;
  const keeper = async () => {
    await governor.tick();
    while ((await spill.drain()) > 0);
    await spill.readmitIfRoom();
    maxUsed = Math.max(maxUsed, await redisUsedMemory(frontier));
  };
  // A lease call takes one URL per host: parallel calls drain a hot host faster (ioredis pipelines them).
  const fetchSome = async (calls) => {
    const batches = await Promise.all(Array.from({ length: calls }, () => frontier.lease(64, t)));
    t++;
    const leases = batches.flatMap((b) => b.leases);
    // One round trip for the batch (ioredis pipelines concurrent commands).
    await Promise.all(leases.map((l) => frontier.fail(l, "other", t)));
    return leases.length;
  };
  const started = Date.now();
  let lastTick = Date.now();
  // Phase 1: a crawl meeting a host with unlimited unique links.
  while (offered < URLS) {
    const links = [];
    for (let i = 0; i < 90; i++) links.push({ url: `https://www.trap.test/cal/${seq++}?sid=${(seq * 2654435761) % 1e9}`, host: "www.trap.test", tier: 3, depth: 9, hops: 0 });
    for (let i = 0; i < 10; i++) {
      const h = `www.site${(seq * 7) % 500}.test`;
      links.push({ url: `https://${h}/p/${seq++}`, host: h, tier: i < 3 ? 0 : 1, depth: 1, hops: 0 });
    }
    await frontier.addLinks(links, { now: t });
    offered += links.length;
    await fetchSome(1);
    if (Date.now() - lastTick >= 1000) {
      lastTick = Date.now();
      await keeper();
      process.stderr.write(`\r${offered} URLs offered, used ${(maxUsed / 1048576).toFixed(1)} MB of ${(budget / 1048576).toFixed(1)} MB   `);
    }
  }
  await keeper();
  const phase1 = { seconds: (Date.now() - started) / 1000, stats: (await frontier.stats()).counters };
  // Phase 2: no new links; fetch everything, including what was spilled.
  let fetched = 0;
  for (;;) {
    const n = await fetchSome(100);
    fetched += n;
    if (Date.now() - lastTick >= 1000 || n === 0) {
      lastTick = Date.now();
      await keeper();
      if (n === 0 && (await frontier.stats()).queued === 0 && (await frontier.spilledWaiting()) === 0 && (await frontier.spilledOnDisk()) === 0 && spill.files().length === 0) break;
    }
  }
  spill.close();
  const s = (await frontier.stats()).counters;
  const result = {
    machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
    command: `node scripts/flow-frontier-flood.mjs --urls ${URLS} --budget-mb ${BUDGET_EXTRA / 1048576}`,
    urlsOffered: offered, redisBaseBytes: base, budgetBytes: budget, maxUsedBytes: maxUsed, underBudget: maxUsed <= budget,
    phase1,
    final: {
      discovered: s.discovered ?? 0, seeds: s.seeds ?? 0, refusedFrontierFull: s["dropped:frontier-full"] ?? 0, spilled: s.spilled ?? 0,
      readmitted: s.readmitted ?? 0, failed: s.failed ?? 0, drainFetched: fetched, capLowered: s["memory:capLowered"] ?? 0,
      spilledCameBack: (s.spilled ?? 0) === (s.readmitted ?? 0),
    },
    seconds: (Date.now() - started) / 1000,
  };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, JSON.stringify(result, null, 2));
  process.stderr.write("\n");
  console.log(JSON.stringify(result, null, 2));
} finally {
  redis.disconnect();
  await handle.stop();
}
