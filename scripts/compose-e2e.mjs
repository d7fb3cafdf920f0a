// docker-compose.yml end to end: build, `docker compose up -d --wait`, crawl with `docker compose run
// --rm exchange` between checks, `docker compose restart` and `docker compose down` + `up` in the
// middle (Redis data and WARC output on named volumes must survive both, and the crawl resume), then
// coverage and politeness from simweb's own request log (`docker compose run --rm verify`, the same
// check as the demo). Runs as its own compose project, so a user's `docker compose up` is untouched
// (it does use the published status ports 9101-9103 on 127.0.0.1).
// Usage: node scripts/compose-e2e.mjs [--hosts N] [--page-cap N] [--keep] [--timeout-min N]
// (scripts/compose-e2e.sh checks for Docker and builds missing base images first).
/* global fetch */
import { spawn } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { parse as parseYaml } from "yaml";

const root = resolve(new URL("..", import.meta.url).pathname);
const { values: v } = parseArgs({
  options: {
    hosts: { type: "string", default: "40" },
    "page-cap": { type: "string", default: "25" },
    project: { type: "string", default: "shardcrawl-e2e" },
    keep: { type: "boolean", default: false },
    "timeout-min": { type: "string", default: "45" },
    out: { type: "string", default: join(root, "out", "compose-e2e") },
  },
});
const out = resolve(v.out);
mkdirSync(out, { recursive: true });
const env = { ...process.env, COMPOSE_PROJECT_NAME: v.project, SIMWEB_HOSTS: v.hosts, SIMWEB_PAGE_CAP: v["page-cap"] };
const deadline = Date.now() + Number(v["timeout-min"]) * 60_000;
const cluster = parseYaml(readFileSync(join(root, "deploy/cluster.compose.yaml"), "utf8"));
const nodes = cluster.nodes.map((n) => ({ name: n.name, port: n.statusPort }));
const t0 = Date.now();
const say = (m) => console.log(`[${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${m}`);

function compose(args, { capture = false, check = true } = {}) {
  return new Promise((res, rej) => {
    const p = spawn("docker", ["compose", "-f", join(root, "docker-compose.yml"), ...args], { cwd: root, env, stdio: ["ignore", capture ? "pipe" : "inherit", capture ? "pipe" : "inherit"] });
    let stdout = "";
    let stderr = "";
    p.stdout?.on("data", (d) => (stdout += d));
    p.stderr?.on("data", (d) => (stderr += d));
    p.on("error", rej);
    p.on("exit", (code) => {
      if (check && code !== 0) rej(new Error(`docker compose ${args.join(" ")} exited ${code}${stderr ? `:\n${stderr.slice(-2000)}` : ""}`));
      else res({ code, stdout, stderr });
    });
  });
}
/** A shell command in a throwaway exchange container, which mounts every node's output volume. */
const inTools = async (cmd) => (await compose(["run", "--rm", "--no-deps", "-T", "--entrypoint", "bash", "exchange", "-c", cmd], { capture: true })).stdout;

let token = "";
async function statusOf(n) {
  try {
    const r = await fetch(`http://127.0.0.1:${n.port}/status`, { headers: { authorization: `Bearer ${token}` }, signal: AbortSignal.timeout(3000) });
    if (!r.ok) return null;
    const body = await r.json();
    // URLs of hosts waiting out a robots.txt outage stay queued by design (the node tries again on
    // its back-off); they are not work the crawl can finish.
    return { ...body.stats, robotsWaitingUrls: body.robotsWaiting?.urls ?? 0 };
  } catch {
    return null;
  }
}
const allStatus = () => Promise.all(nodes.map(statusOf));
const total = (ss) => ss.reduce((a, s) => a + (s?.fetched ?? 0), 0);
const idle = (s) => s && s.queued - s.robotsWaitingUrls === 0 && s.leases === 0 && s.parseQueue === 0 && s.parseInFlight === 0;
/** Bytes of WARC output per node, from the named volumes. */
async function warcBytes() {
  const text = await inTools(nodes.map((n) => `du -sb /data/${n.name}/warc 2>/dev/null | cut -f1 || echo 0`).join("; "));
  return text.trim().split("\n").map(Number);
}
async function up() {
  await compose(["up", "-d", "--wait"], { capture: true });
  token = (await compose(["exec", "-T", "crawler-node0", "cat", "/run/shardcrawl/status-token"], { capture: true })).stdout.trim();
  for (;;) {
    const ss = await allStatus();
    if (ss.every(Boolean)) return ss;
    if (Date.now() > deadline) throw new Error("nodes did not answer /status after up");
    await new Promise((r) => setTimeout(r, 1000));
  }
}
function fail(msg) {
  throw new Error(msg);
}

/** Checks across a stop/start: counters kept in Redis and WARC bytes on the volume never go back. */
async function survives(what, action) {
  const before = await allStatus();
  const warcBefore = await warcBytes();
  say(`${what}: before, fetched ${nodes.map((n, i) => `${n.name} ${before[i]?.fetched}`).join(", ")}; WARC bytes ${warcBefore.join(", ")}`);
  await action();
  const after = await up();
  const warcAfter = await warcBytes();
  say(`${what}: after, fetched ${nodes.map((n, i) => `${n.name} ${after[i].fetched}`).join(", ")}; WARC bytes ${warcAfter.join(", ")}`);
  nodes.forEach((n, i) => {
    if (after[i].fetched < (before[i]?.fetched ?? 0)) fail(`${what}: ${n.name} fetched went back from ${before[i].fetched} to ${after[i].fetched} (Redis data lost?)`);
    if (warcAfter[i] < warcBefore[i]) fail(`${what}: ${n.name} WARC output shrank from ${warcBefore[i]} to ${warcAfter[i]} bytes`);
  });
  return { before: before.map((s) => s?.fetched ?? 0), after: after.map((s) => s.fetched), warcBefore, warcAfter };
}

const report = { project: v.project, simweb: { hosts: Number(v.hosts), pageCap: Number(v["page-cap"]) } };
try {
  say(`clean start: docker compose down -v (project ${v.project})`);
  await compose(["--profile", "tools", "down", "-v", "--remove-orphans"], { capture: true });
  say("build: docker compose build simweb (one image, shardcrawl:local, for every service)");
  await compose(["build", "simweb"], { capture: true });
  // simweb first: the expected page count comes from the world it serves, before any node crawls.
  say("up: simweb (docker compose up -d --wait simweb)");
  await compose(["up", "-d", "--wait", "simweb"], { capture: true });
  const expectedOut = await compose(["run", "--rm", "--no-deps", "-T", "--entrypoint", "bash", "verify", "-c",
    `node packages/simweb/dist/cli.js expected $(cat /data/simweb/args) --seeds /data/simweb/seeds.txt --scope domains --user-agent '${cluster.defaults.userAgent}' | wc -l`], { capture: true });
  const expected = Number(expectedOut.stdout.trim());
  report.expectedPages = expected;
  say(`simweb: ${v.hosts} hosts, at most ${v["page-cap"]} pages each; ${expected} reachable, robots-allowed, in-scope pages`);
  if (!(expected > 0)) fail("simweb expects no pages: nothing to crawl");
  say("up: the nodes (docker compose up -d --wait)");
  await up();

  // Crawl: exchange between checks; restart at a quarter, down + up at half, then until done.
  let phase = "restart";
  let quiet = 0;
  let exchanged = 0;
  for (;;) {
    if (Date.now() > deadline) fail(`not done after ${v["timeout-min"]} min`);
    await new Promise((r) => setTimeout(r, phase === "finish" ? 5000 : 2000));
    const ss = await allStatus();
    const fetched = total(ss);
    // Mid-crawl or the checks prove little: a crawl already near its end is a failed run.
    if (phase !== "finish" && fetched >= expected * 0.85) fail(`the crawl reached ${fetched}/${expected} pages before the ${phase} step: use more --hosts or a larger --page-cap`);
    if (phase === "restart" && fetched >= expected / 5) {
      say("docker compose restart (every service)");
      report.restart = await survives("restart", () => compose(["restart"], { capture: true }));
      phase = "down";
      continue;
    }
    if (phase === "down" && fetched >= expected * 0.45) {
      say("docker compose down, then up -d --wait (volumes kept)");
      report.downUp = await survives("down/up", () => compose(["down"], { capture: true }));
      phase = "finish";
      continue;
    }
    const moved = Number(/moved (\d+)/.exec((await compose(["run", "--rm", "-T", "exchange"], { capture: true })).stdout)?.[1] ?? NaN);
    exchanged += moved;
    const pending = Number((await inTools("find /data/node*/outbox -name '*.open' 2>/dev/null | wc -l; find /data/node*/inbox -maxdepth 1 -name '*.urls.gz' 2>/dev/null | wc -l")).trim().split("\n").reduce((a, x) => a + Number(x), 0));
    const allIdle = ss.every(idle);
    say(`fetched ${fetched}/${expected} (${nodes.map((n, i) => `${n.name} ${ss[i]?.fetched ?? "down"}`).join(", ")}); exchange moved ${moved}; open outbox + unread inbox files ${pending}${allIdle ? "; all nodes idle" : ""}`);
    // Done: every node idle with nothing in flight between them, twice in a row (over 10 s apart,
    // the outbox files' maximum age, so no link can still be waiting in an open file).
    quiet = allIdle && moved === 0 && pending === 0 && phase === "finish" ? quiet + 1 : 0;
    if (quiet >= 2) break;
  }
  report.exchangedFiles = exchanged;
  report.crawlSeconds = Math.round((Date.now() - t0) / 1000);

  say("stop simweb (flushes its request log), then docker compose run --rm verify");
  await compose(["stop", "simweb"], { capture: true });
  const verify = await compose(["run", "--rm", "--no-deps", "-T", "verify"], { capture: true, check: false });
  const vr = JSON.parse(verify.stdout);
  writeFileSync(join(out, "verify.json"), JSON.stringify(vr, null, 2));
  say("stop the nodes (SIGTERM: they finish in-flight work and write summary.json)");
  await compose(["stop"], { capture: true });
  const summaries = JSON.parse(`[${(await inTools(nodes.map((n) => `cat /data/${n.name}/summary.json`).join("; echo ,; "))).trim()}]`);
  const warc = await warcBytes();
  report.nodes = nodes.map((n, i) => ({ name: n.name, fetched: summaries[i].stats.fetched, errors: summaries[i].stats.errors, warcBytes: warc[i] }));
  report.verify = { ok: vr.ok, requests: vr.requests, violations: Object.fromEntries(Object.entries(vr.violations).map(([k, x]) => [k, x.count])), coverage: vr.coverage && { expected: vr.coverage.expected, fetchedExpected: vr.coverage.fetchedExpected, missing: vr.coverage.missing.count, extraFetches: vr.coverage.duplicates.extraFetches } };
  writeFileSync(join(out, "report.json"), JSON.stringify(report, null, 2));

  console.log("\n== report");
  for (const n of report.nodes) console.log(`${n.name.padEnd(6)} pages ${String(n.fetched).padStart(5)}  errors ${n.errors}  WARC ${n.warcBytes} bytes`);
  console.log(`restart            fetched ${report.restart.before.join("/")} -> ${report.restart.after.join("/")}: kept`);
  console.log(`down + up          fetched ${report.downUp.before.join("/")} -> ${report.downUp.after.join("/")}: kept, crawl resumed`);
  console.log(`exchange           ${exchanged} outbox files moved`);
  console.log(`politeness         ${vr.ok ? "OK" : "VIOLATED"} (${vr.requests} requests; violations ${Object.entries(report.verify.violations).map(([k, c]) => `${k} ${c}`).join(", ")})`);
  const c = report.verify.coverage;
  console.log(`coverage           ${c.fetchedExpected}/${c.expected} pages; missing ${c.missing}, duplicate fetches ${c.extraFetches}`);
  console.log(`reports            ${join(out, "report.json")}, ${join(out, "verify.json")}`);
  const ok = vr.ok && c.missing === 0 && c.expected === expected && report.nodes.every((n) => n.fetched > 0 && n.warcBytes > 0);
  if (!ok) fail("the compose crawl did not verify (see the report above)");
  say("OK");
} catch (err) {
  console.error(`compose-e2e: ${err.message}`);
  const logs = await compose(["logs", "--no-color", "--tail", "40"], { capture: true, check: false });
  writeFileSync(join(out, "compose.log"), logs.stdout + logs.stderr);
  console.error(`compose-e2e: last log lines of every service in ${join(out, "compose.log")}`);
  process.exitCode = 1;
} finally {
  if (!v.keep) await compose(["--profile", "tools", "down", "-v", "--remove-orphans"], { capture: true, check: false });
  else say(`--keep: project ${v.project} left running (docker compose -p ${v.project} down -v to remove)`);
}
