#!/usr/bin/env node
// Host affinity at long per-host delays: one node with several fetchers crawls an HTTPS-only simweb
// whose names are served by simweb's own DNS server, once with a per-host delay above the keep-alive
// time (every page on a new connection: the fleet's regime) and once below it (connections kept
// alive). With affinity a host's leases go to one fetcher, so that fetcher's TLS session cache and
// DNS cache serve every later visit. Checked from the node's own counters (the stats hash that
// /metrics exports) and from simweb's logs:
//  - full TLS handshakes: at most one per host (simweb's request log: `tlsResumed` of each connection);
//  - later connections of a host: >= 95% resumed;
//  - DNS: cache hits >= 95% of the fetchers' name resolutions (shardcrawl_dns_cache_hits_total
//    against shardcrawl_dns_lookups_total), and simweb's DNS log agrees with the lookups counted;
// and CPU per page of the fetcher processes and of the whole node in both regimes (/proc).
// simweb offers "Keep-Alive: timeout=10" and undici keeps a connection for the offer less 2 s (8 s),
// so the new-connection run's delay is 10 s.
//   node scripts/bench/affinity.mjs [--hosts 240] [--fetchers 3] [--delay 10000] [--kept-delay 1500]
//                                   [--max-pages 3000] [--reps 1] [--out FILE]
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  BENCH_UA, RESULTS_DIR, SHARDCRAWL_CLI, fmt, median, sampleNodeCpu, startRedisServer, startSimweb, writeResult, writeSimwebSeeds,
} from "./common.mjs";

const { values: a } = parseArgs({ options: {
  hosts: { type: "string", default: "240" }, fetchers: { type: "string", default: "3" },
  delay: { type: "string", default: "10000" }, "kept-delay": { type: "string", default: "1500" },
  "max-pages": { type: "string", default: "3000" }, reps: { type: "string", default: "1" },
  out: { type: "string", default: join(RESULTS_DIR, "affinity.json") }, keep: { type: "boolean", default: false },
} });
const HOSTS = Number(a.hosts);
const FETCHERS = Number(a.fetchers);
const MAX_PAGES = Number(a["max-pages"]);
const work = mkdtempSync(join(tmpdir(), "bench-affinity-"));

/**
 * simweb's polite web, HTTPS only, names from its DNS server. Record TTL 10 minutes (common on the
 * real web): the cache may keep an answer for the whole crawl, so its misses are affinity's.
 */
const simwebConfig = { preset: "polite", hosts: HOSTS, seed: 5, httpsShare: 1, dns: { addresses: 8, ttl: 600, faults: [] } };

function readJsonLines(file) {
  if (!existsSync(file)) return [];
  const out = [];
  for (const l of readFileSync(file, "utf8").split("\n")) {
    if (!l.trim()) continue;
    try { out.push(JSON.parse(l)); } catch { /* a partial last line */ }
  }
  return out;
}

/** One crawl at `delayMs` against a fresh simweb (fresh TLS ticket keys, empty logs) and a fresh Redis. */
async function crawlOnce(label, delayMs) {
  const dir = join(work, label);
  const requestLog = join(dir, "requests.jsonl");
  const dnsLog = join(dir, "dns.jsonl");
  const sim = await startSimweb(simwebConfig, ["--log", requestLog, "--dns-port", "0", "--dns-log", dnsLog], join(dir, "simweb"));
  const seeds = join(dir, "seeds.txt");
  writeSimwebSeeds(sim, seeds);
  const redis = await startRedisServer(join(dir, "redis"));
  const out = join(dir, "crawl");
  const argv = [
    SHARDCRAWL_CLI, "crawl", "--seeds", seeds, "--out", out, "--redis", redis.url, "--progress", "off",
    "--max-pages", String(MAX_PAGES), "--delay", String(delayMs), "--max-page-bytes", String(250 * 1024),
    "--allow-private", "--ca-file", sim.ca, "--user-agent", BENCH_UA, "--fetchers", String(FETCHERS), "--parsers", "1",
    "--dns-server", `127.0.0.1:${sim.info.dns}`, "--connect-to", `:443::${sim.https}`, "--connect-to", `:80::${sim.http}`,
    "--expected-urls", "1000000",
  ];
  const t0 = performance.now();
  const proc = spawn(process.execPath, argv, { stdio: ["ignore", "ignore", "pipe"] });
  let stderr = "";
  proc.stderr.on("data", (b) => { stderr = (stderr + b).slice(-20_000); });
  const sampler = sampleNodeCpu(proc, redis);
  const marks = sampler.marks;
  const code = await new Promise((res) => proc.once("exit", res));
  const wallSeconds = (performance.now() - t0) / 1000;
  sampler.stop();
  if (code !== 0) throw new Error(`crawl exited ${code}: ${stderr.slice(-2000)}`);
  await new Promise((res) => setTimeout(res, 300)); // the last sample's Redis read
  const stats = await redis.client.hgetall("sc:stats");
  await redis.stop();
  await sim.stop(); // flushes simweb's logs
  const fetched = Number(stats.fetched ?? 0);
  const roles = Object.fromEntries(Object.entries(sampler.byRole()).map(([r, v]) => [r, v.cpuSeconds]));
  const steady = steadyWindow(marks, fetched);
  const result = {
    label, delayMs, fetchers: FETCHERS, fetched, wallSeconds,
    cpuMsPerPage: Object.fromEntries(Object.entries(roles).map(([r, s]) => [r, (s / fetched) * 1000])),
    nodeCpuMsPerPage: (Object.values(roles).reduce((x, y) => x + y, 0) / fetched) * 1000,
    steadyCpuMsPerPage: steady,
    counters: countersOf(stats),
    dnsLog: analyseDns(readJsonLines(dnsLog)),
    simweb: analyseRequests(readJsonLines(requestLog), readJsonLines(dnsLog)),
    load: loadavg().map((x) => +x.toFixed(2)),
  };
  if (!a.keep) rmSync(dir, { recursive: true, force: true });
  return result;
}

/** CPU ms per page by role between 20% and 90% of the pages (start-up and drain left out). */
function steadyWindow(marks, total) {
  const x = marks.find((m) => m.fetched >= 0.2 * total);
  const y = marks.findLast((m) => m.fetched <= 0.9 * total);
  if (!x || !y || y.fetched - x.fetched < 0.3 * total) return undefined;
  const pages = y.fetched - x.fetched;
  const byRole = Object.fromEntries(Object.keys(y.roles).map((r) => [r, (((y.roles[r] ?? 0) - (x.roles[r] ?? 0)) / pages) * 1000]));
  return { ...byRole, node: Object.values(byRole).reduce((s, v) => s + v, 0) };
}

/** The node's counters, by the /metrics names they are exported under. */
function countersOf(stats) {
  const n = (k) => Number(stats[k] ?? 0);
  const hits = n("dns:hits");
  const lookups = n("dns:lookups");
  return {
    shardcrawl_connections_opened_total: n("conn:opened"),
    shardcrawl_tls_handshakes_total: n("tls:handshakes"),
    shardcrawl_tls_session_reuses_total: n("tls:resumed"),
    shardcrawl_dns_lookups_total: lookups,
    shardcrawl_dns_cache_hits_total: hits,
    dnsHitShare: hits / Math.max(1, hits + lookups),
    // Leaving out each host's unavoidable first lookup (a crawl of ~12 pages per host cannot pass
    // 92% otherwise): the misses affinity is about.
    dnsHitShareAfterFirst: hits / Math.max(1, hits + lookups - HOSTS),
    tlsResumedShare: n("tls:resumed") / Math.max(1, n("tls:resumed") + n("tls:handshakes")),
  };
}

/**
 * From simweb's request log: per host, its connections (in order of first use) and whether each
 * one's TLS handshake resumed a session. "Later" connections are all but a host's first.
 */
function analyseRequests(entries, dnsEntries) {
  // A fetcher looks a name up once while its answer lives (TTL 10 min, longer than the crawl): a
  // host's A questions count the fetchers that served it.
  const fetchersOf = new Map();
  for (const e of dnsEntries) if (e.type === "A") fetchersOf.set(e.name, (fetchersOf.get(e.name) ?? 0) + 1);
  const hosts = new Map();
  for (const e of entries) {
    if (e.scheme !== "https" || e.conn === undefined) continue;
    let h = hosts.get(e.host);
    if (!h) hosts.set(e.host, (h = new Map()));
    if (!h.has(e.conn)) h.set(e.conn, { first: e.ts, resumed: e.tlsResumed === true, requests: 0, answered: false });
    const c = h.get(e.conn);
    c.first = Math.min(c.first, e.ts);
    c.requests++;
    c.answered ||= e.status !== 0;
  }
  let connections = 0, requests = 0, full = 0, later = 0, laterResumed = 0, hostsOverOne = 0, maxFull = 0, overFetchers = 0, fetcherPairs = 0;
  // A host that resets every connection at its first request (robots.txt "unreachable") never lets
  // a session ticket out: the server drops the ticket it has not flushed yet. Listed, not judged.
  let neverAnswered = 0;
  const fullPerHost = {};
  for (const [host, conns] of hosts) {
    const list = [...conns.values()].sort((x, y) => x.first - y.first);
    const f = list.filter((c) => !c.resumed).length;
    full += f;
    fullPerHost[f] = (fullPerHost[f] ?? 0) + 1;
    const judged = list.some((c) => c.answered);
    if (judged) maxFull = Math.max(maxFull, f);
    if (!judged) neverAnswered++;
    if (f > 1 && judged) hostsOverOne++;
    const fetchers = fetchersOf.get(host) ?? 0;
    fetcherPairs += fetchers;
    if (f > fetchers && judged) overFetchers++;
    connections += list.length;
    for (const c of list) requests += c.requests;
    later += list.length - 1;
    laterResumed += list.slice(1).filter((c) => c.resumed).length;
  }
  return {
    hosts: hosts.size, requests, connections, requestsPerConnection: requests / Math.max(1, connections),
    fullHandshakes: full, fullHandshakesPerHost: fullPerHost, maxFullHandshakesPerHost: maxFull, hostsWithMoreThanOneFull: hostsOverOne,
    // (host, fetcher) pairs, and hosts with more full handshakes than fetchers that served them.
    hostFetcherPairs: fetcherPairs, hostsWithMoreFullThanFetchers: overFetchers, hostsNeverAnswered: neverAnswered,
    laterConnections: later, laterResumed, laterResumedShare: laterResumed / Math.max(1, later),
  };
}

/** From simweb's DNS log: A questions asked, and per name. */
function analyseDns(entries) {
  const perName = new Map();
  for (const e of entries) if (e.type === "A" || e.type === 1) perName.set(e.name, (perName.get(e.name) ?? 0) + 1);
  const counts = [...perName.values()];
  return { questions: counts.reduce((s, v) => s + v, 0), names: perName.size, maxPerName: Math.max(0, ...counts) };
}

function verdicts(r) {
  const s = r.simweb;
  return {
    fullHandshakesAtMostOnePerHost: s.maxFullHandshakesPerHost <= 1,
    fullHandshakesAtMostOnePerHostPerFetcher: s.hostsWithMoreFullThanFetchers === 0,
    laterResumedAtLeast95: s.laterResumedShare >= 0.95,
    dnsHitsAtLeast95: r.counters.dnsHitShare >= 0.95,
    dnsHitsAfterFirstAtLeast95: r.counters.dnsHitShareAfterFirst >= 0.95,
  };
}

const runs = [];
for (let rep = 0; rep < Number(a.reps); rep++) {
  for (const [label, delay] of [["new-connection", Number(a.delay)], ["kept-alive", Number(a["kept-delay"])]]) {
    process.stderr.write(`affinity: ${label} (delay ${delay} ms, ${HOSTS} hosts, ${FETCHERS} fetchers, ${MAX_PAGES} pages) ...\n`);
    const r = await crawlOnce(`${label}-${rep}`, delay);
    runs.push(r);
    const s = r.simweb;
    process.stderr.write(
      `  ${r.fetched} pages in ${fmt(r.wallSeconds)} s; ${s.connections} connections for ${s.requests} requests (${fmt(s.requestsPerConnection, 2)} per connection); ` +
      `full handshakes ${s.fullHandshakes} over ${s.hosts} hosts, ${s.hostFetcherPairs} (host, fetcher) pairs (max ${s.maxFullHandshakesPerHost} per host, ${s.hostsWithMoreFullThanFetchers} hosts above one per fetcher, ${s.hostsNeverAnswered} hosts never answered left out); later connections resumed ${fmt(100 * s.laterResumedShare)}%; ` +
      `node: tls handshakes ${r.counters.shardcrawl_tls_handshakes_total}, resumed ${r.counters.shardcrawl_tls_session_reuses_total}; ` +
      `dns hits ${fmt(100 * r.counters.dnsHitShare)}% (${fmt(100 * r.counters.dnsHitShareAfterFirst)}% after each host's first lookup; ${r.counters.shardcrawl_dns_lookups_total} lookups, simweb saw ${r.dnsLog.questions} A questions); ` +
      `CPU ms/page fetcher ${fmt(r.cpuMsPerPage.fetcher, 2)} node ${fmt(r.nodeCpuMsPerPage, 2)}; steady fetcher ${fmt(r.steadyCpuMsPerPage?.fetcher, 2)} node ${fmt(r.steadyCpuMsPerPage?.node, 2)}; load ${r.load[0]}\n`,
    );
  }
}
const pick = (label, f) => median(runs.filter((r) => r.label.startsWith(label)).map(f));
const summary = {
  newConnection: { fetcherMsPerPage: pick("new-connection", (r) => r.cpuMsPerPage.fetcher), nodeMsPerPage: pick("new-connection", (r) => r.nodeCpuMsPerPage), steadyFetcherMsPerPage: pick("new-connection", (r) => r.steadyCpuMsPerPage?.fetcher ?? NaN) },
  keptAlive: { fetcherMsPerPage: pick("kept-alive", (r) => r.cpuMsPerPage.fetcher), nodeMsPerPage: pick("kept-alive", (r) => r.nodeCpuMsPerPage), steadyFetcherMsPerPage: pick("kept-alive", (r) => r.steadyCpuMsPerPage?.fetcher ?? NaN) },
  checks: runs.filter((r) => r.label.startsWith("new-connection")).map(verdicts),
};
summary.newConnectionExtra = {
  fetcherMsPerPage: summary.newConnection.fetcherMsPerPage - summary.keptAlive.fetcherMsPerPage,
  nodeMsPerPage: summary.newConnection.nodeMsPerPage - summary.keptAlive.nodeMsPerPage,
};
writeResult(a.out, { command: `node scripts/bench/affinity.mjs ${process.argv.slice(2).join(" ")}`, hosts: HOSTS, fetchers: FETCHERS, maxPages: MAX_PAGES, summary, runs });
process.stdout.write(JSON.stringify(summary, null, 2) + "\n");
process.stderr.write(`wrote ${a.out}\n`);
process.exit(0);
