#!/usr/bin/env node
// Scaling of the frontier's per-page cost: a real redis-server (AOF everysec, as a node runs it) and
// the real Frontier class. The frontier is grown step by step (quick: 1e4 -> 1e6 queued URLs over
// 1e2 -> 1e4 hosts; full: up to 1e7 URLs over 1e5 hosts); at each size, PAGES simulated pages go
// through the whole frontier path a page takes in a crawl: lease, complete with the page into the
// parse queue (the body spooled: only its reference goes through Redis), take from the parse queue,
// ack with its links (half new, half already seen). CPU per
// page = this process (the Redis client side) + redis-server (from /proc). Also: Redis bytes per
// queued URL against the raw path bytes, and the Bloom filter's bits per URL. Raw path bytes of a
// URL = the UTF-8 bytes of its path+query as they appear in the URL, leading "/" included (1 for a
// host's root "/"); averaged over the URLs queued when memory is read (leased ones are taken out).
// Usage: node scripts/bench/frontier-scale.mjs [--mode quick|full] [--out FILE]
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, RESULTS_DIR, args, benchRequireRoot, fmt, median, startRedisServer, writeResult } from "./common.mjs";

const { Frontier } = await import(join(ROOT, "packages/shardcrawl/dist/frontier/index.js"));
const opts = args();
const FULL = opts.mode === "full";
const LEVELS = FULL
  ? [[1e4, 1e2], [1e5, 1e3], [1e6, 1e4], [1e7, 1e5]]
  : [[1e4, 1e2], [1e5, 1e3], [1e6, 1e4]];
const PAGES = 1000;
const REPS = 3;
const LINKS_PER_PAGE = 20;
const BODY_BYTES = 20_000;
// As in a crawl, the body waits in the node's spool: the parse queue carries only its reference.
const SPOOL = { file: "bench-0-000000-1", offset: 0, bytes: BODY_BYTES, crc: 0 };

// Deterministic PRNG (mulberry32).
let a = 42;
function rand() {
  a = (a + 0x6d2b79f5) >>> 0;
  let t = a;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const WORDS = ["news", "world", "sport", "business", "tech", "science", "health", "travel", "culture", "opinion", "local", "market", "review", "guide", "best", "how", "to", "the", "new", "city", "report", "update", "video", "photos"];
const pick = () => WORDS[Math.floor(rand() * WORDS.length)];
let serial = 0;
/** A typical article/listing URL (unique through a serial number), on one of `hosts` hosts, skewed. */
function link(hosts) {
  const h = Math.floor(hosts * rand() ** 2);
  const host = `www.site${h}.example`;
  const k = rand();
  const n = serial++;
  const path = k < 0.5 ? `/${pick()}/20${10 + (n % 15)}/${pick()}-${pick()}-${pick()}-${n}`
    : k < 0.8 ? `/${pick()}/${pick()}-${n}.html` : `/p/${n}?ref=${pick()}`;
  return { url: `https://${host}${path}`, host, tier: 1, depth: 1, hops: 0, pathBytes: Buffer.byteLength(path) };
}

const work = mkdtempSync(join(tmpdir(), "bench-frontier-"));
const redis = await startRedisServer(join(work, "redis"));
// The frontier's client is set up as a node's processes set up theirs (node/child-runtime.ts):
// auto-pipelined, so the client CPU per page includes what that costs.
const { Redis } = benchRequireRoot("ioredis");
const r = new Redis({ port: redis.port, host: "127.0.0.1", enableAutoPipelining: true, maxRetriesPerRequest: null, commandTimeout: 120_000 });
const frontier = await Frontier.open(r, {
  prefix: "fs:", bloom: { expectedUrls: FULL ? 20_000_000 : 2_000_000, falsePositiveRate: 0.01 }, delayMs: 0,
  parseQueueMax: 100_000, maxQueuedPerHost: 100_000_000, maxQueuedTotal: 1_000_000_000, leaseTtlMs: 600_000,
});
const usedMemory = async () => Number(/used_memory:(\d+)/.exec(await r.info("memory"))[1]);
const baseMemory = await usedMemory();

let queuedRaw = 0, queuedCount = 0, hostsNow = 0;
const levels = [];
for (const [urls, hosts] of LEVELS) {
  // Grow to `urls` queued URLs over `hosts` hosts (every host gets at least one URL).
  const t0 = performance.now();
  while (hostsNow < hosts) {
    const batch = [];
    for (; hostsNow < hosts && batch.length < 5000; hostsNow++) {
      const host = `www.site${hostsNow}.example`;
      batch.push({ url: `https://${host}/`, host, tier: 1, depth: 0, hops: 0 });
    }
    const res = await frontier.addLinks(batch, { kind: "seeds" });
    queuedCount += res.added;
    queuedRaw += res.added; // "/"
  }
  while (queuedCount < urls) {
    const batch = [];
    for (let i = 0; i < Math.min(5000, urls - queuedCount); i++) batch.push(link(hosts));
    const res = await frontier.addLinks(batch, { kind: "seeds" });
    queuedCount += res.added;
    for (const l of batch) queuedRaw += l.pathBytes; // approximate: a Bloom false positive is not queued
  }
  const fillSeconds = (performance.now() - t0) / 1000;
  const memory = await usedMemory();
  const queuedBefore = queuedCount;
  const rawBefore = queuedRaw;
  // The per-page path, timed on PAGES pages, REPS times.
  const reps = [];
  for (let rep = 0; rep < REPS; rep++) {
    const c0 = process.cpuUsage();
    const redis0 = redis.cpu();
    let done = 0;
    while (done < PAGES) {
      const { leases } = await frontier.lease(Math.min(50, PAGES - done));
      if (leases.length === 0) throw new Error("no lease: frontier empty?");
      // A leased URL leaves its queue: it no longer counts as queued, nor do its raw bytes.
      for (const l of leases) {
        queuedCount--;
        queuedRaw -= Buffer.byteLength(l.url.slice(l.url.indexOf("/", l.url.indexOf("://") + 3)));
      }
      await Promise.all(leases.map(async (l) => {
        await frontier.completeWithPage(l, {
          url: l.url, host: l.host, depth: l.depth, hops: l.hops, fetchedAt: new Date().toISOString(), status: 200,
          httpVersion: "1.1", statusText: "OK", headers: [["content-type", "text/html"]], requestHeaders: [], spool: SPOOL,
          timings: { total: 10 },
        });
      }));
      const taken = await frontier.parse.take("bench", leases.length);
      await Promise.all(taken.map(async (t) => {
        const links = [];
        for (let i = 0; i < LINKS_PER_PAGE / 2; i++) links.push(link(hosts)); // new
        for (let i = 0; i < LINKS_PER_PAGE / 2; i++) links.push({ url: t.page?.url ?? `https://www.site0.example/`, host: t.page?.host ?? "www.site0.example", tier: 1, depth: 1, hops: 0 }); // seen
        for (const l of links) l.bloom = frontier.hasher.positions(l.url);
        const ack = await frontier.parse.ack("bench", t.id, links);
        const added = ack.added ?? 0;
        queuedCount += added;
        let newBytes = 0;
        for (let i = 0; i < LINKS_PER_PAGE / 2; i++) newBytes += links[i].pathBytes;
        queuedRaw += (newBytes * added) / (LINKS_PER_PAGE / 2);
      }));
      done += leases.length;
    }
    const c = process.cpuUsage(c0);
    const client = (c.user + c.system) / 1e6;
    const server = redis.cpu() - redis0;
    reps.push({ clientMsPerPage: (client / PAGES) * 1000, redisMsPerPage: (server / PAGES) * 1000, totalMsPerPage: ((client + server) / PAGES) * 1000 });
  }
  const row = {
    urls, hosts, queuedAtStart: queuedBefore, queued: queuedCount, fillSeconds,
    frontierBytesPerUrl: (memory - baseMemory) / queuedBefore, rawPathBytesPerUrl: rawBefore / queuedBefore,
    reps,
    clientMsPerPage: median(reps.map((x) => x.clientMsPerPage)),
    redisMsPerPage: median(reps.map((x) => x.redisMsPerPage)),
    totalMsPerPage: median(reps.map((x) => x.totalMsPerPage)),
  };
  row.bytesVsRaw = row.frontierBytesPerUrl / row.rawPathBytesPerUrl;
  levels.push(row);
  process.stderr.write(`${urls} URLs / ${hosts} hosts: ${fmt(row.totalMsPerPage, 3)} ms CPU per page (client ${fmt(row.clientMsPerPage, 3)}, redis ${fmt(row.redisMsPerPage, 3)}); ${fmt(row.frontierBytesPerUrl)} B/URL vs raw ${fmt(row.rawPathBytesPerUrl)} (filled in ${fmt(fillSeconds, 0)} s)\n`);
}
const bloomParams = frontier.bloom;
r.disconnect();
await redis.stop();
rmSync(work, { recursive: true, force: true });
const first = levels[0].totalMsPerPage, last = levels.at(-1).totalMsPerPage;
writeResult(opts.out ?? join(RESULTS_DIR, `frontier-scale-${opts.mode}.json`), {
  bench: "frontier-scale", mode: opts.mode, pagesPerStep: PAGES, reps: REPS, linksPerPage: LINKS_PER_PAGE, bodyBytes: BODY_BYTES, spooled: true,
  command: `node scripts/bench/frontier-scale.mjs --mode ${opts.mode}`,
  bloom: { m: bloomParams.m, k: bloomParams.k, n: bloomParams.n, p: bloomParams.p, bitsPerUrlAtCapacity: bloomParams.m / bloomParams.n },
  levels, largestVsSmallest: last / first,
});
process.exit(0);
