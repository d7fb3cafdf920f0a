#!/usr/bin/env node
// The peer: Crawlee's CheerioCrawler crawling the same simweb seeds as shardcrawl's bench run, with
// comparable politeness (robots.txt respected, the same per-domain delay), link scope (same
// registrable domain) and page budget, storage in memory. Hostnames resolve to --ip (simweb on
// ports 80/443 there); HTTPS trusts simweb's CA through NODE_EXTRA_CA_CERTS set by the caller.
// Prints one JSON line: pages, CPU seconds of this process (all threads), pages per CPU-second.
import { readFileSync } from "node:fs";
import dns from "node:dns";
import { parseArgs } from "node:util";

const { values: a } = parseArgs({ options: {
  seeds: { type: "string" }, ip: { type: "string" }, "max-pages": { type: "string" }, delay: { type: "string" },
  cut: { type: "string" }, dir: { type: "string" }, "user-agent": { type: "string" }, concurrency: { type: "string", default: "200" },
} });

// Every lookup answers the simweb address: got, got-scraping and http2-wrapper all call dns.lookup.
const lookup = dns.lookup;
dns.lookup = (host, options, cb) => {
  if (typeof options === "function") { cb = options; options = {}; }
  if (typeof options === "number") options = { family: options };
  if (/\.(test|example|invalid)$/i.test(host)) return options?.all ? cb(null, [{ address: a.ip, family: 4 }]) : cb(null, a.ip, 4);
  return lookup(host, options, cb);
};

const { CheerioCrawler, Configuration, log } = await import("@crawlee/cheerio");
log.setLevel(log.LEVELS.OFF);
const config = new Configuration({ persistStorage: false, purgeOnStart: true, availableMemoryRatio: 0.5, systemInfoIntervalMillis: 1000 });
const seeds = readFileSync(a.seeds, "utf8").split("\n").map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
let pages = 0, failed = 0, bytes = 0;
// The same steady-state window as shardcrawl's bench (scripts/bench/crawl.mjs steadyWindow): CPU
// between the pages where 20% and 90% of the budget were handled.
const budget = Number(a["max-pages"]);
const marks = [];
function mark() {
  const n = pages + failed;
  if ((marks.length === 0 && n >= 0.2 * budget) || (marks.length === 1 && n >= 0.9 * budget)) {
    const u = process.cpuUsage();
    marks.push({ n, cpu: (u.user + u.system) / 1e6 });
  }
}
const crawler = new CheerioCrawler({
  maxRequestsPerCrawl: Number(a["max-pages"]),
  maxConcurrency: Number(a.concurrency),
  sameDomainDelaySecs: Number(a.delay) / 1000,
  respectRobotsTxtFile: true,
  maxRequestRetries: 0,
  requestHandlerTimeoutSecs: 60,
  navigationTimeoutSecs: 60,
  additionalMimeTypes: ["application/xhtml+xml"],
  preNavigationHooks: [(_ctx, gotOptions) => {
    gotOptions.headers = { ...gotOptions.headers, "user-agent": a["user-agent"] };
    gotOptions.useHeaderGenerator = false;
    gotOptions.http2 = false;
  }],
  async requestHandler({ enqueueLinks, body }) {
    pages++;
    bytes += body.length;
    await enqueueLinks({ strategy: "same-domain" });
    mark();
  },
  failedRequestHandler() { failed++; mark(); },
}, config);
const c0 = process.cpuUsage();
const t0 = performance.now();
await crawler.run(seeds);
// Whole run from process start, module loading included, as shardcrawl's whole-run figure counts
// its processes from their start; the figure after loading is kept beside it.
const cpu = process.cpuUsage();
const cpuSeconds = (cpu.user + cpu.system) / 1e6;
const afterLoad = process.cpuUsage(c0);
const cpuSecondsAfterLoad = (afterLoad.user + afterLoad.system) / 1e6;
const wallSeconds = (performance.now() - t0) / 1000;
const steady = marks.length === 2 ? { from: 0.2, to: 0.9, pages: marks[1].n - marks[0].n, cpuSeconds: marks[1].cpu - marks[0].cpu, pagesPerCpuSecond: (marks[1].n - marks[0].n) / (marks[1].cpu - marks[0].cpu) } : undefined;
console.log(JSON.stringify({ pages, failed, bytes, cpuSeconds, cpuSecondsAfterLoad, wallSeconds, steady, pagesPerSecond: pages / wallSeconds, pagesPerCpuSecond: pages / cpuSeconds, cpuMsPerPage: (cpuSeconds / pages) * 1000, note: "Crawlee does not cut bodies at 250 KB (no such option); it keeps whole pages" }));
process.exit(0);
