#!/usr/bin/env node
// The floor of HTTP cost: a bare undici GET loop over a list of URLs (no frontier, no robots, no
// parsing, no output), bodies read and dropped after `--cut` bytes. Prints one JSON line with this
// process's CPU seconds per page. Hostnames resolve to --ip; certificates are checked against --ca.
// --fresh-connections: every request on a new connection ("connection: close"), TLS sessions
// resumed from a cache big enough for every host: what each page costs when a host's next turn
// comes after its keep-alive connection has gone (the reference crawl's 70 s per-domain delay).
// --client shardcrawl: the same loop through the crawler's own HTTP client (fetch/http-client.ts,
// from --client-dist, default this checkout's build) instead of a bare undici Agent: what fetch/
// adds per page over undici. It has no per-request "close", so for new connections per page serve
// the pages with `simweb realweb --connection-close` (and --fresh-connections is refused).
// The JSON line counts the connections opened and the TLS sessions resumed, whichever the client.
import diagnosticsChannel from "node:diagnostics_channel";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { ROOT, crawlerRequire } from "./common.mjs";

const { Agent, request } = crawlerRequire("undici");
const { values: a } = parseArgs({ options: { urls: { type: "string" }, ip: { type: "string" }, http: { type: "string" }, https: { type: "string" }, ca: { type: "string" }, cut: { type: "string" }, concurrency: { type: "string", default: "64" }, "fresh-connections": { type: "boolean", default: false }, client: { type: "string", default: "undici" }, "client-dist": { type: "string", default: join(ROOT, "packages/shardcrawl/dist") }, "connections-per-origin": { type: "string", default: "4" } } });
const fresh = a["fresh-connections"];
const urls = JSON.parse(readFileSync(a.urls, "utf8"));
const cut = Number(a.cut);
if (a.client !== "undici" && a.client !== "shardcrawl") throw new Error(`--client: expected undici or shardcrawl, got ${a.client}`);
if (a.client === "shardcrawl" && fresh) throw new Error("--fresh-connections is for --client undici; serve with --connection-close instead");

// Both clients are undici underneath: this channel sees every connection either opens.
let connections = 0, tlsResumed = 0, tlsFull = 0;
diagnosticsChannel.subscribe("undici:client:connected", ({ socket }) => {
  connections++;
  if (typeof socket.isSessionReused === "function") {
    if (socket.isSessionReused()) tlsResumed++;
    else tlsFull++;
  }
});

let fetchOne;
let close;
if (a.client === "undici") {
  const lookup = (_host, o, cb) => (o?.all ? cb(null, [{ address: a.ip, family: 4 }]) : cb(null, a.ip, 4));
  const agent = new Agent({ connect: { ca: readFileSync(a.ca), lookup, timeout: 10_000, maxCachedSessions: 100_000 }, headersTimeout: 30_000, bodyTimeout: 30_000, connections: Number(a["connections-per-origin"]) });
  const portFor = (u) => (u.protocol === "https:" ? Number(a.https) : Number(a.http));
  fetchOne = async (raw) => {
    const u = new URL(raw);
    const port = portFor(u);
    if (port !== (u.protocol === "https:" ? 443 : 80)) u.port = String(port);
    const res = await request(u, { dispatcher: agent, reset: fresh, headers: { "user-agent": "undici-floor", "accept-encoding": "gzip, deflate, br" }, signal: AbortSignal.timeout(60_000) });
    let n = 0;
    for await (const chunk of res.body) {
      n += chunk.length;
      if (n >= cut) break; // leaving the loop destroys the body: the rest is not read
    }
    return { status: res.statusCode, bytes: Math.min(n, cut) };
  };
  close = () => agent.close();
} else {
  const { createHttpClient } = await import(pathToFileURL(join(a["client-dist"], "fetch/http-client.js")).href);
  const client = createHttpClient({
    userAgent: "undici-floor", connectTo: [`:80:${a.ip}:${a.http}`, `:443:${a.ip}:${a.https}`], allowPrivate: true, caFile: a.ca, maxBodyBytes: cut,
    connectionsPerOrigin: Number(a["connections-per-origin"]), // the crawl's --host-concurrency (default 1)
  });
  fetchOne = async (raw) => {
    const r = await client.fetch(raw);
    if (!r.ok) throw new Error(`${r.errorClass}: ${r.detail}`);
    return { status: r.status, bytes: r.body.length };
  };
  close = () => client.close();
}

let next = 0, ok = 0, failed = 0, bytes = 0;
/** Failures by status or error message, to tell a broken client from a loaded machine. */
const failures = {};
const countFailure = (why) => { failed++; failures[why] = (failures[why] ?? 0) + 1; };
async function one(raw) {
  try {
    const r = await fetchOne(raw);
    bytes += r.bytes;
    if (r.status === 200) ok++; else countFailure(`status ${r.status}`);
  } catch (err) {
    countFailure(String(err?.message ?? err).slice(0, 120));
  }
}
const c0 = process.cpuUsage();
const t0 = performance.now();
await Promise.all(Array.from({ length: Number(a.concurrency) }, async () => { while (next < urls.length) await one(urls[next++]); }));
const cpu = process.cpuUsage(c0);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
const wallSeconds = (performance.now() - t0) / 1000;
await close();
console.log(JSON.stringify({ client: a.client, freshConnections: fresh, connections, tlsFull, tlsResumed, pages: ok, failed, ...(failed ? { failures } : {}), bytes, cpuSeconds, wallSeconds, pagesPerSecond: ok / wallSeconds, pagesPerCpuSecond: ok / cpuSeconds, cpuMsPerPage: (cpuSeconds / ok) * 1000 }));
