// The demo crawl: starts simweb (the synthetic web) on loopback, crawls it with shardcrawl, and
// prints a final report with coverage and politeness checked by `simweb verify` from the server's
// own request log. Usage: node scripts/demo.mjs [--hosts N] [--pages N] [--delay MS] [--out DIR]
import { spawn } from "node:child_process";
import { mkdirSync, rmSync, writeFileSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";

const root = resolve(new URL("..", import.meta.url).pathname);
const { values: v } = parseArgs({
  options: {
    hosts: { type: "string", default: "60" },
    seed: { type: "string", default: "7" },
    preset: { type: "string", default: "polite" },
    delay: { type: "string", default: "50" },
    "page-cap": { type: "string", default: "80" },
    "max-pages": { type: "string" },
    out: { type: "string", default: join(root, "out", "demo") },
    keep: { type: "boolean", default: false },
  },
});

const SIMWEB = join(root, "packages/simweb/dist/cli.js");
const SHARDCRAWL = join(root, "packages/shardcrawl/dist/cli/main.js");
const UA = "shardcrawl-demo/0.1 (+https://github.com/shardcrawl/shardcrawl)";

function run(cmd, args, opts = {}) {
  return new Promise((res, rej) => {
    const p = spawn(cmd, args, { stdio: ["ignore", opts.capture ? "pipe" : "inherit", "inherit"], ...opts.spawn });
    let out = "";
    p.stdout?.on("data", (d) => (out += d));
    p.on("error", rej);
    p.on("exit", (code) => res({ code, out }));
  });
}

const out = resolve(v.out);
if (!v.keep) rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
const simLog = join(out, "simweb-requests.jsonl");
// Realistic page sizes (simweb's default mix, median ~138 KB) with a cap on pages per host, so the
// demo finishes in about a minute on a laptop while still crawling thousands of pages.
const simConfig = join(out, "simweb-config.json");
writeFileSync(simConfig, JSON.stringify({ hostPageCap: Number(v["page-cap"]), pageSize: { median: 40_000, mean: 60_000, min: 2_000, max: 1_000_000 } }));
const cfgFlags = ["--preset", v.preset, "--seed", v.seed, "--hosts", v.hosts, "--config", simConfig];

console.log(`== starting simweb (${v.hosts} hosts, preset ${v.preset}) on loopback`);
const sim = spawn(process.execPath, [SIMWEB, "serve", ...cfgFlags, "--port", "0", "--https-port", "0", "--log", simLog, "--ca-dir", out], { stdio: ["ignore", "pipe", "inherit"] });
const ports = await new Promise((res, rej) => {
  let buf = "";
  sim.stdout.on("data", (d) => {
    buf += d;
    const nl = buf.indexOf("\n");
    if (nl >= 0) res(JSON.parse(buf.slice(0, nl)));
  });
  sim.on("exit", (code) => rej(new Error(`simweb exited with ${code}`)));
});
console.log(`   http on 127.0.0.1:${ports.http}, https on 127.0.0.1:${ports.https}, CA ${ports.ca}`);

const seedsFile = join(out, "seeds.txt");
const seeds = await run(process.execPath, [SIMWEB, "seeds", ...cfgFlags], { capture: true });
writeFileSync(seedsFile, seeds.out);
console.log(`== ${seeds.out.trim().split("\n").length} seeds written to ${seedsFile}`);

const crawlOut = join(out, "crawl");
const crawlArgs = [
  SHARDCRAWL, "crawl", "--seeds", seedsFile, "--out", crawlOut, "--scope", "domains",
  "--delay", v.delay, "--user-agent", UA, "--allow-private", "--ca-file", ports.ca,
  "--connect-to", `:80:127.0.0.1:${ports.http}`, "--connect-to", `:443:127.0.0.1:${ports.https}`,
  "--max-crawl-delay", "500", "--progress", "on",
];
if (v["max-pages"]) crawlArgs.push("--max-pages", v["max-pages"]);
console.log(`== crawling: shardcrawl ${crawlArgs.slice(1).join(" ")}`);
const crawl = await run(process.execPath, crawlArgs);
sim.kill("SIGTERM");
await new Promise((r) => sim.once("exit", r));
if (crawl.code !== 0) {
  console.error(`crawl exited with ${crawl.code}`);
  process.exit(1);
}

console.log("== verifying politeness and coverage from simweb's own request log");
const verifyArgs = [SIMWEB, "verify", "--log", simLog, ...cfgFlags, "--min-gap-ms", v.delay, "--max-concurrency", "1", "--user-agent", UA];
if (!v["max-pages"]) verifyArgs.push("--seeds", seedsFile, "--scope", "domains");
const verify = await run(process.execPath, verifyArgs, { capture: true });
const report = JSON.parse(verify.out);
writeFileSync(join(out, "verify.json"), JSON.stringify(report, null, 2));
const summary = JSON.parse(readFileSync(join(crawlOut, "summary.json"), "utf8"));
console.log("");
console.log("== report");
console.log(`pages fetched      ${summary.stats.fetched} in ${(summary.elapsedMs / 1000).toFixed(1)} s (${summary.pagesPerSecond.toFixed(1)} pages/s)`);
console.log(`fetch errors       ${summary.stats.errors}, robots-disallowed or robots-unavailable ${summary.stats.robotsDisallowed}`);
const vio = Object.entries(report.violations).map(([k, x]) => `${k} ${x.count}`).join(", ");
console.log(`politeness         ${report.ok ? "OK" : "VIOLATED"} (${report.requests} requests checked; violations: ${vio})`);
if (report.coverage) {
  const c = report.coverage;
  console.log(`coverage           ${c.fetchedExpected}/${c.expected} reachable, robots-allowed, in-scope pages fetched; missing ${c.missing.count}, duplicate fetches ${c.duplicates.extraFetches}`);
}
console.log(`output             ${crawlOut} (warc/, pages/, summary.json); verify report ${join(out, "verify.json")}`);
process.exit(report.ok ? 0 : 1);
