#!/usr/bin/env node
// Listing pages as change detectors, measured: the same node, budget and simweb population run
// twice, with and without listing rules, on a scaled clock (a simulated hour per real second).
// From simweb's request log and its change model, over the measured window (after a warm-up):
//   - item changes: change instants of the listing hosts' item pages (ground truth),
//   - detected: item fetches that found a newer version than the previous fetch of that item,
//   - share caught = detected / item changes (a visit catches at most one change: what a change
//     capture policy can see), and fetches per detected change (every request counts: items,
//     listings, feeds, sitemaps, robots.txt).
//   node scripts/recrawl-listings.mjs [--run-s 90] [--warmup-s 30] [--budget 3] [--out bench-results/recrawl-listings.json]
// Needs the built packages (pnpm build) and redis-server on the PATH.
/* global fetch */
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { loadavg, tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SIMWEB = join(ROOT, "packages/simweb/dist/cli.js");
const SHARDCRAWL = join(ROOT, "packages/shardcrawl/dist/cli/main.js");
const { World, Listings, makeConfig } = await import(join(ROOT, "packages/simweb/dist/index.js"));

const { values: args } = parseArgs({
  options: {
    "run-s": { type: "string", default: "90" },
    "warmup-s": { type: "string", default: "30" },
    budget: { type: "string", default: "3" },
    out: { type: "string", default: "bench-results/recrawl-listings.json" },
  },
});
const RUN_MS = Number(args["run-s"]) * 1000;
const WARMUP_MS = Number(args["warmup-s"]) * 1000;
const HOUR = 3_600_000;
const SIM_CONFIG = {
  hostPageCap: 41,
  pagesPerHost: { min: 40, alpha: 1.0, max: 150 },
  change: { staticShare: 0.1, minIntervalMs: 2 * HOUR, maxIntervalMs: 120 * HOUR, churnShare: 0 },
  robots: { absent: 0, empty: 0, rules: 0, "agent-specific": 0, "crawl-delay": 0, sitemap: 1, large: 0, redirect: 0, "disallow-all": 0, "server-error": 0, unreachable: 0 },
  listings: { hostShare: 1, itemsPerListing: 10, visibleShare: 0.7, lagMs: 0, feedEntries: 20, feedScan: 2000 },
};
const CONFIG_ARGS = ["--preset", "tiny", "--seed", "11", "--hosts", "3"];
const RULES = { listings: [{ pattern: "/list/\\d+$", item: '<a href="(?<link>[^"]+)">[^<]*</a> <span class="summary">(?<summary>[^<]*)</span>', revisitMs: 10000 }] };

const freePort = () => new Promise((r) => { const s = createServer().listen(0, "127.0.0.1", () => { const p = s.address().port; s.close(() => r(p)); }); });
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function startSimweb(dir, cfg) {
  const log = join(dir, "requests.jsonl");
  const proc = spawn(process.execPath, [SIMWEB, "serve", ...CONFIG_ARGS, "--config", cfg, "--time-scale", "3600", "--log", log, "--ca-dir", join(dir, "ca")], { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise((r) => createInterface({ input: proc.stdout }).once("line", r));
  return { ...JSON.parse(line), log, proc };
}

async function arm(withListings) {
  const dir = mkdtempSync(join(tmpdir(), "sc-listings-eval-"));
  const cfg = join(dir, "simweb.json");
  writeFileSync(cfg, JSON.stringify(SIM_CONFIG));
  const sim = await startSimweb(dir, cfg);
  const port = await freePort();
  const redis = spawn("redis-server", ["--port", String(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", dir], { stdio: "ignore" });
  await sleep(500);
  const seeds = join(dir, "seeds.txt");
  writeFileSync(seeds, spawnSync(process.execPath, [SIMWEB, "seeds", ...CONFIG_ARGS, "--config", cfg], { encoding: "utf8" }).stdout);
  const rules = join(dir, "listings.json");
  writeFileSync(rules, JSON.stringify(RULES));
  const out = join(dir, "out");
  const node = spawn(process.execPath, [SHARDCRAWL, "crawl", "--progress", "off", "--seeds", seeds, "--out", out, "--redis", `redis://127.0.0.1:${port}`,
    "--delay", "200", "--fetchers", "1", "--parsers", "1", "--continuous", "--recrawl-budget", args.budget, "--recrawl-cycle", "1000",
    ...(withListings ? ["--listing-rules", rules] : []),
    "--allow-private", "--ca-file", sim.ca, "--connect-to", `:80:127.0.0.1:${sim.http}`, "--connect-to", `:443:127.0.0.1:${sim.https}`, "--max-defer-wait", "3000"], { stdio: "ignore" });
  // Timed from the first request simweb sees (a node may take long to start on a loaded machine).
  let start = 0;
  for (let i = 0; i < 1200 && !start; i++) {
    await sleep(100);
    try {
      const st = JSON.parse(readFileSync(join(out, "status.json"), "utf8"));
      const m = await fetch(`http://127.0.0.1:${st.statusPort}/metrics`).then((r) => r.text()).catch(() => "");
      if (/^shardcrawl_pages_fetched_total\{[^}]*\} [1-9]/m.test(m)) start = Date.now();
    } catch { /* not up yet */ }
  }
  await sleep(RUN_MS);
  const stop = Date.now();
  node.kill("SIGTERM");
  await new Promise((r) => node.once("exit", r));
  sim.proc.kill("SIGTERM");
  await new Promise((r) => sim.proc.once("exit", r));
  redis.kill("SIGTERM");
  const log = readFileSync(sim.log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).sort((a, b) => a.ts - b.ts);
  return { log, from: start + WARMUP_MS, to: stop };
}

function measure({ log, from, to }) {
  const world = new World(makeConfig({ preset: "tiny", seed: 11, hosts: 3, ...SIM_CONFIG }));
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
    fetches: inWindow.length, byKind, shareCaught: detected / Math.max(1, changes), fetchesPerDetectedChange: inWindow.length / Math.max(1, detected),
  };
}

const results = {};
for (const [name, on] of [["with listings", true], ["without listings", false]]) {
  process.stderr.write(`${name}: running ${RUN_MS / 1000} s after a ${WARMUP_MS / 1000} s warm-up inside it...\n`);
  results[name] = measure(await arm(on));
  console.log(name, JSON.stringify(results[name]));
}
const report = { date: new Date().toISOString(), budgetPerS: Number(args.budget), runS: RUN_MS / 1000, warmupS: WARMUP_MS / 1000, loadavg: loadavg(), results };
mkdirSync(dirname(resolve(ROOT, args.out)), { recursive: true });
writeFileSync(resolve(ROOT, args.out), JSON.stringify(report, null, 2) + "\n");
