// One continuous node (the built CLI) against a simweb process on a scaled clock, run for a while
// after its first fetch and stopped with SIGTERM; then simweb's request log is read back. The setup
// shared by test/recrawl-continuous.test.ts, test/recrawl-listings.test.ts and
// scripts/recrawl-listings.mjs. Plain JS on the built packages, so the script can use it too
// (types: recrawl-run.d.mts). Build first (pnpm build); redis-server must be on the PATH.
/* global fetch */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import { startRedisServer } from "./bench/common.mjs";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const SIMWEB = join(ROOT, "packages/simweb/dist/cli.js");
const SHARDCRAWL = join(ROOT, "packages/shardcrawl/dist/cli/main.js");
const HOUR = 3_600_000;
export const USER_AGENT = "shardcrawl/0.1 (+https://github.com/shardcrawl/shardcrawl)";

/**
 * The listings population: 3 listing hosts, items on listings of 10 whose price/stock summary
 * shows 70% of the item's changes, items changing every 2-120 simulated hours, an RSS feed and a
 * sitemap index per host.
 */
export const LISTINGS_WORLD = {
  seed: 11,
  hosts: 3,
  simConfig: {
    hostPageCap: 41,
    pagesPerHost: { min: 40, alpha: 1.0, max: 150 },
    change: { staticShare: 0.1, minIntervalMs: 2 * HOUR, maxIntervalMs: 120 * HOUR, churnShare: 0 },
    robots: { absent: 0, empty: 0, rules: 0, "agent-specific": 0, "crawl-delay": 0, sitemap: 1, large: 0, redirect: 0, "disallow-all": 0, "server-error": 0, unreachable: 0 },
    listings: { hostShare: 1, itemsPerListing: 10, visibleShare: 0.7, lagMs: 0, feedEntries: 20, feedScan: 2000 },
  },
};

/** Listing rules for simweb's /list/<k> pages, each read every `revisitMs`. */
export function listingRules(revisitMs) {
  return { listings: [{ pattern: "/list/\\d+$", item: '<a href="(?<link>[^"]+)">[^<]*</a> <span class="summary">(?<summary>[^<]*)</span>', revisitMs }] };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

async function startSimweb(dir, configArgs, scale) {
  const log = join(dir, "requests.jsonl");
  const proc = spawn(process.execPath, [SIMWEB, "serve", ...configArgs, "--time-scale", String(scale), "--log", log, "--ca-dir", join(dir, "ca")], { stdio: ["ignore", "pipe", "inherit"] });
  const line = await new Promise((r, reject) => {
    createInterface({ input: proc.stdout }).once("line", r);
    proc.once("exit", (code) => reject(new Error(`simweb exited with ${code} before listening`)));
  });
  const stop = async () => {
    if (proc.exitCode === null && proc.signalCode === null) proc.kill("SIGTERM");
    if (proc.exitCode === null) await new Promise((r) => proc.once("exit", r)); // the log is flushed on exit
  };
  return { ...JSON.parse(line), log, stop };
}

/** Waits until the node has fetched its first page; returns its status port. */
async function firstFetch(out, node) {
  for (let i = 0; i < 1200 && node.exitCode === null; i++) {
    await sleep(100);
    let port;
    try {
      port = JSON.parse(readFileSync(join(out, "status.json"), "utf8")).statusPort;
    } catch {
      continue;
    }
    const m = await fetch(`http://127.0.0.1:${port}/metrics`).then((r) => r.text()).catch(() => "");
    if (/^shardcrawl_pages_fetched_total\{[^}]*\} [1-9]/m.test(m)) return port;
  }
  throw new Error("the node fetched nothing within 120 s");
}

/**
 * Runs the node. `nodeArgs` are its flags beyond seeds, output, Redis and simweb's (for instance
 * --continuous --recrawl-budget 3 ...); `files` are written to the run's folder first (name ->
 * JSON value; "$dir" in a flag names that folder). The Redis is kept (the caller reads it) unless
 * `keepRedis` is false.
 */
export async function runContinuousNode({ seed, hosts, simConfig, scale = 3600, nodeArgs, files = {}, runMs, keepRedis = true, redisUrl }) {
  const dir = mkdtempSync(join(tmpdir(), "sc-recrawl-run-"));
  const cfg = join(dir, "simweb.json");
  writeFileSync(cfg, JSON.stringify(simConfig));
  for (const [name, value] of Object.entries(files)) writeFileSync(join(dir, name), JSON.stringify(value));
  const configArgs = ["--preset", "tiny", "--seed", String(seed), "--hosts", String(hosts), "--config", cfg];
  const sim = await startSimweb(dir, configArgs, scale);
  const redis = redisUrl ? { url: redisUrl, stop: async () => {} } : await startRedisServer(join(dir, "redis"), { aof: false });
  const seeds = join(dir, "seeds.txt");
  const listed = spawnSync(process.execPath, [SIMWEB, "seeds", ...configArgs], { encoding: "utf8" });
  if (listed.status !== 0) throw new Error(`simweb seeds failed: ${listed.stderr}`);
  writeFileSync(seeds, listed.stdout);
  const out = join(dir, "out");
  const node = spawn(process.execPath, [
    SHARDCRAWL, "crawl", "--progress", "off", "--seeds", seeds, "--out", out, "--redis", redis.url,
    ...nodeArgs.map((a) => a.replaceAll("$dir", dir)),
    "--allow-private", "--ca-file", sim.ca, "--connect-to", `:80:127.0.0.1:${sim.http}`, "--connect-to", `:443:127.0.0.1:${sim.https}`,
    "--user-agent", USER_AGENT, "--max-defer-wait", "3000",
  ], { stdio: ["ignore", "ignore", "pipe"], detached: true }); // its own process group, as a service runs
  let stderr = "";
  node.stderr.on("data", (b) => {
    stderr += b.toString();
    if (stderr.length > 256 * 1024) stderr = stderr.slice(-128 * 1024);
  });
  const exited = new Promise((r) => node.once("exit", (code, signal) => r({ code, signal })));
  let metrics = "";
  let startedAt = 0;
  let failure;
  try {
    // Timed from the first fetch: on a loaded machine a node can take many seconds to start.
    const statusPort = await firstFetch(out, node);
    startedAt = Date.now();
    await sleep(runMs);
    metrics = await (await fetch(`http://127.0.0.1:${statusPort}/metrics`)).text();
  } catch (err) {
    failure = err;
  }
  const stoppedAt = Date.now();
  if (node.exitCode === null && node.signalCode === null) node.kill("SIGTERM");
  // The node stops gracefully (it needs its Redis for that); then simweb flushes its log.
  const { code, signal } = await exited;
  await sim.stop();
  if (!keepRedis || failure) await redis.stop();
  if (failure) throw new Error(`${failure.message}; node stderr: ${stderr.slice(-2000)}`);
  const log = readFileSync(sim.log, "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l)).sort((a, b) => a.ts - b.ts);
  return { dir, configArgs, logFile: sim.log, log, metrics, code, signal, stderr, startedAt, stoppedAt, redis };
}
