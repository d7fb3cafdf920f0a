#!/usr/bin/env node
// Listing pages as change detectors, measured: the same node, budget and simweb population run
// twice, with and without listing rules, on a scaled clock (a simulated hour per real second).
// From simweb's request log and its change model, over the measured window (after a warm-up):
//   - item changes: change instants of the listing hosts' item pages (ground truth),
//   - detected: item fetches that found a newer version than the previous fetch of that item,
//   - share caught = detected / item changes (a visit catches at most one change: what a change
//     capture policy can see), and fetches per detected change (every request counts: items,
//     listings, feeds, sitemaps, robots.txt).
//   node scripts/recrawl-listings.mjs [--run-s 90] [--warmup-s 30] [--budget 3] [--listing-revisit-s 10] [--change-hours 2,120] [--out bench-results/recrawl-listings.json]
// The comparison means something only when the budget binds: fetchesPerS (the measured rate) at
// the budget, below what politeness allows (here about 4 requests/s per domain, 2 domains).
// Needs the built packages (pnpm build) and redis-server on the PATH.
import { mkdirSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { LISTINGS_WORLD, listingRules, runContinuousNode } from "./recrawl-run.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { World, Listings, makeConfig } = await import(join(ROOT, "packages/simweb/dist/index.js"));

const { values: args } = parseArgs({
  options: {
    "run-s": { type: "string", default: "90" },
    "warmup-s": { type: "string", default: "30" },
    budget: { type: "string", default: "3" },
    "listing-revisit-s": { type: "string", default: "10" },
    // Items change every min..max simulated hours (the population's default: 2,120).
    "change-hours": { type: "string", default: "2,120" },
    out: { type: "string", default: "bench-results/recrawl-listings.json" },
  },
});
const RUN_MS = Number(args["run-s"]) * 1000;
const WARMUP_MS = Number(args["warmup-s"]) * 1000;
const HOUR = 3_600_000;
const [MIN_CHANGE_H, MAX_CHANGE_H] = args["change-hours"].split(",").map(Number);
const WORLD = { ...LISTINGS_WORLD, simConfig: { ...LISTINGS_WORLD.simConfig, change: { ...LISTINGS_WORLD.simConfig.change, minIntervalMs: MIN_CHANGE_H * HOUR, maxIntervalMs: MAX_CHANGE_H * HOUR } } };
const { seed: SEED, hosts: HOSTS, simConfig: SIM_CONFIG } = WORLD;

async function arm(withListings) {
  const r = await runContinuousNode({
    ...WORLD, runMs: RUN_MS, keepRedis: false,
    files: { "listings.json": listingRules(Number(args["listing-revisit-s"]) * 1000) },
    nodeArgs: [
      "--delay", "200", "--fetchers", "1", "--parsers", "1", "--continuous", "--recrawl-budget", args.budget, "--recrawl-cycle", "1000",
      ...(withListings ? ["--listing-rules", "$dir/listings.json"] : []),
    ],
  });
  return { log: r.log, from: r.startedAt + WARMUP_MS, to: r.stoppedAt };
}

function measure({ log, from, to }) {
  const world = new World(makeConfig({ preset: "tiny", seed: SEED, hosts: HOSTS, ...SIM_CONFIG }));
  const listings = new Listings(world);
  const items = new Set();
  for (const h of world.hosts().map((x) => world.model(x.index))) for (let k = 0; k < listings.count(h); k++) for (const p of listings.items(h, k)) items.add(p.url);
  const inWindow = log.filter((e) => e.ts >= from && e.ts <= to);
  const simFrom = inWindow[0]?.sim ?? 0;
  const simTo = inWindow[inWindow.length - 1]?.sim ?? 0;
  let changes = 0;
  for (const u of items) changes += world.changeTimes(u, simFrom, simTo).length;
  const last = new Map();
  let detected = 0;
  let itemFetches = 0;
  for (const e of log) {
    if (e.method !== "GET" || (e.status !== 200 && e.status !== 304)) continue;
    const url = `${e.scheme}://${e.host}${e.path}`;
    if (!items.has(url)) continue;
    const v = world.pageVersionAt(url, e.sim);
    const prev = last.get(url);
    last.set(url, v);
    if (e.ts < from || e.ts > to) continue;
    itemFetches++;
    if (prev !== undefined && v !== prev) detected++;
  }
  const kind = (e) => (/^\/list\//.test(e.path) ? "listing" : e.path === "/feed.xml" ? "feed" : /sitemap/.test(e.path) ? "sitemap" : e.path === "/robots.txt" ? "robots" : "page");
  const byKind = {};
  for (const e of inWindow) byKind[kind(e)] = (byKind[kind(e)] ?? 0) + 1;
  return {
    windowS: (to - from) / 1000, simHours: (simTo - simFrom) / HOUR, items: items.size, itemChanges: changes, detected, itemFetches,
    fetches: inWindow.length, fetchesPerS: inWindow.length / Math.max(1, (to - from) / 1000), byKind, shareCaught: detected / Math.max(1, changes), fetchesPerDetectedChange: inWindow.length / Math.max(1, detected),
  };
}

const LOAD_AT_START = loadavg();
const results = {};
for (const [name, on] of [["with listings", true], ["without listings", false]]) {
  process.stderr.write(`${name}: running ${RUN_MS / 1000} s after a ${WARMUP_MS / 1000} s warm-up inside it...\n`);
  results[name] = measure(await arm(on));
  console.log(name, JSON.stringify(results[name]));
}
const report = { date: new Date().toISOString(), loadavgAtStart: LOAD_AT_START, budgetPerS: Number(args.budget), listingRevisitS: Number(args["listing-revisit-s"]), changeHours: [MIN_CHANGE_H, MAX_CHANGE_H], runS: RUN_MS / 1000, warmupS: WARMUP_MS / 1000, loadavg: loadavg(), results };
mkdirSync(dirname(resolve(ROOT, args.out)), { recursive: true });
writeFileSync(resolve(ROOT, args.out), JSON.stringify(report, null, 2) + "\n");
