#!/usr/bin/env node
// Cost of one /metrics scrape: renderMetrics (prom-client, a fresh registry per scrape) on a
// fleet-sized snapshot (10 top hosts, 16 processes, error and outcome families). Standalone:
//   pnpm build && node scripts/bench/metrics-render.mjs
import { renderMetrics } from "../../packages/shardcrawl/dist/node/metrics.js";
const counters = { fetched: 1e6, failed: 1e4, retries: 5e3, parseBytes: 1e6 };
for (const k of ["2xx","3xx","4xx","5xx","dns","connect","robots-disallowed","total-timeout"]) { counters[`page:${k}`] = 1000; counters[`pageBytes:${k}`] = 1e9; counters[`err:${k}`] = 10; }
for (const k of ["http-429","http-503","reset"]) counters[`retry:${k}`] = 100;
const hosts = Array.from({ length: 10 }, (_, i) => ({ host: `h${i}.example`, pressure: 2, inFlight: 1, limit: 1, delayMultiplier: 2, queued: 100, retryRatio: 0.1 }));
const snap = { node: "n01", restarts: 0, fetchCapacity: 18000, bottleneck: { stage: "fetch" },
  stats: { fetched: 1e6, parsed: 1e6, failed: 1e4, errors: 1e4, robotsDisallowed: 0, discovered: 5e6, outOfScope: 0, queued: 4e6, hostsQueued: 1e5, readyHosts: 1e4, dueHosts: 100, leases: 15000, parseQueue: 100, parseInFlight: 12, counters,
    pressure: { hosts, hostsUnderBackoff: 50, redisUsedBytes: 1e10, redisBudgetBytes: 8e10, parseQueueMax: 256, parseQueueOldestAgeMs: 100, readyLagMs: 0, spillWaiting: 0, spillOnDisk: 0 } },
  processes: Array.from({ length: 16 }, (_, i) => ({ process: `p${i}`, pid: i, cpuSeconds: 100, rssBytes: 1e9 })),
  eventLoop: Array.from({ length: 16 }, (_, i) => ({ process: `p${i}`, meanSeconds: 0.001, maxSeconds: 0.01 })) };
let text = "";
for (let i = 0; i < 50; i++) text = await renderMetrics(snap);
const t0 = performance.now();
for (let i = 0; i < 500; i++) text = await renderMetrics(snap);
console.log(`renderMetrics: ${((performance.now() - t0) / 500).toFixed(2)} ms per scrape, ${text.length} bytes, ${text.split("\n").filter((l) => l && !l.startsWith("#")).length} series`);
