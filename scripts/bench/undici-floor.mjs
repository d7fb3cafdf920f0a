#!/usr/bin/env node
// The floor of HTTP cost: a bare undici GET loop over a list of URLs (no frontier, no robots, no
// parsing, no output), bodies read and dropped after `--cut` bytes. Prints one JSON line with this
// process's CPU seconds per page. Hostnames resolve to --ip; certificates are checked against --ca.
// --fresh-connections: every request on a new connection ("connection: close"), TLS sessions
// resumed from a cache big enough for every host: what each page costs when a host's next turn
// comes after its keep-alive connection has gone (the reference crawl's 70 s per-domain delay).
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { crawlerRequire } from "./common.mjs";

const { Agent, request } = crawlerRequire("undici");
const { values: a } = parseArgs({ options: { urls: { type: "string" }, ip: { type: "string" }, http: { type: "string" }, https: { type: "string" }, ca: { type: "string" }, cut: { type: "string" }, concurrency: { type: "string", default: "64" }, "fresh-connections": { type: "boolean", default: false } } });
const fresh = a["fresh-connections"];
const urls = JSON.parse(readFileSync(a.urls, "utf8"));
const cut = Number(a.cut);
const lookup = (_host, o, cb) => (o?.all ? cb(null, [{ address: a.ip, family: 4 }]) : cb(null, a.ip, 4));
const agent = new Agent({ connect: { ca: readFileSync(a.ca), lookup, timeout: 10_000, maxCachedSessions: 100_000 }, headersTimeout: 30_000, bodyTimeout: 30_000, connections: 4 });
const portFor = (u) => (u.protocol === "https:" ? Number(a.https) : Number(a.http));

let next = 0, ok = 0, failed = 0, bytes = 0, connections = 0;
agent.on("connect", () => connections++);
async function one(raw) {
  const u = new URL(raw);
  const port = portFor(u);
  if (port !== (u.protocol === "https:" ? 443 : 80)) u.port = String(port);
  try {
    const res = await request(u, { dispatcher: agent, reset: fresh, headers: { "user-agent": "undici-floor", "accept-encoding": "gzip, deflate, br" }, signal: AbortSignal.timeout(60_000) });
    let n = 0;
    for await (const chunk of res.body) {
      n += chunk.length;
      if (n >= cut) break; // leaving the loop destroys the body: the rest is not read
    }
    bytes += Math.min(n, cut);
    if (res.statusCode === 200) ok++; else failed++;
  } catch {
    failed++;
  }
}
const c0 = process.cpuUsage();
const t0 = performance.now();
await Promise.all(Array.from({ length: Number(a.concurrency) }, async () => { while (next < urls.length) await one(urls[next++]); }));
const cpu = process.cpuUsage(c0);
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
await agent.close();
console.log(JSON.stringify({ freshConnections: fresh, connections, pages: ok, failed, bytes, cpuSeconds, wallSeconds: (performance.now() - t0) / 1000, pagesPerCpuSecond: ok / cpuSeconds, cpuMsPerPage: (cpuSeconds / ok) * 1000 }));
