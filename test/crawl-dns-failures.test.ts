// DNS failures of the real web, end to end: simweb's own DNS server (--dns-server) answers the
// crawl's lookups and logs every question; its hosts live on their own loopback addresses, and the
// request log says which address each request arrived on. Judged from simweb's two logs:
//  - a SERVFAIL window opening mid-crawl: the host's pages that met it are retried, then wait with
//    the host, and every page is fetched once the name resolves again -- none failed for good;
//  - an NXDOMAIN name: its URLs are recorded as `dns` failures (confirmed by a second lookup), and
//    no request reaches simweb for it;
//  - a record whose address changes: after its TTL the name is asked again and the requests go to
//    the new address;
//  - /metrics during the crawl shows lookups, cache hits, failures by class and lookup time, and
//    the node's lookup count equals the A questions simweb's DNS server received.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { readPageLog, startCrawl, verifyLog, writeSeeds, type CrawlRun, type PageLine, type VerifyReport } from "./harness/crawl.js";
import { dnsCrawlFlags, readAddressedLog, readDnsLog, startSimwebWithDns, type AddressedRequest, type DnsLogLine, type SimwebWithDns } from "./harness/simweb-dns.js";

const DELAY_MS = 120;
const SERVFAIL_HOST = "www.d1.test";
const NX_HOST = "www.d2.test";
const MOVING_HOST = "www.d3.test";
const MOVE_AFTER_MS = 1500;
const MOVED_TTL_S = 1;
/** Slack for a loaded machine between an answer's expiry and the next new connection. */
const MOVE_MARGIN_MS = 1000;

/** Sum of a metric's samples in Prometheus text format (labels matched as a substring). */
function metric(text: string, name: string, labels = ""): number {
  let sum = 0;
  for (const line of text.split("\n")) {
    if (!line.startsWith(name) || line.startsWith("#")) continue;
    const rest = line.slice(name.length);
    if (!(rest.startsWith(" ") || rest.startsWith("{"))) continue;
    if (labels && !rest.includes(labels)) continue;
    sum += Number(line.slice(line.lastIndexOf(" ") + 1));
  }
  return sum;
}

describe("DNS failures through simweb's DNS server", () => {
  let sim: SimwebWithDns;
  let run: CrawlRun;
  let report: VerifyReport;
  let pages: PageLine[];
  let dnsLog: DnsLogLine[];
  let requests: AddressedRequest[];
  let lastMetrics = "";
  let counters: Record<string, number> = {};
  const hostOf = (u: string): string => new URL(u).hostname;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-dnsfail-"));
    const cfg = join(dir, "simweb.json");
    const none = { "agent-specific": 0, "crawl-delay": 0, sitemap: 0, large: 0, redirect: 0, "disallow-all": 0, "server-error": 0, unreachable: 0 };
    writeFileSync(cfg, JSON.stringify({
      hostsPerDomain: [1], pageSize: { median: 4000, mean: 5000, min: 1000, max: 20000 }, pagesPerHost: { min: 20, alpha: 1.5, max: 28 }, hostPageCap: 28,
      robots: { absent: 1, empty: 1, rules: 1, ...none }, crossHostShare: 0.05,
      dns: {
        addresses: 3, ttl: 1,
        faults: [
          { host: 1, kind: "servfail", afterQueries: 1, forMs: 3000 },
          { host: 2, kind: "nxdomain" },
          { host: 3, kind: "move", afterMs: MOVE_AFTER_MS, ttl: MOVED_TTL_S },
        ],
      },
    }));
    const configArgs = ["--preset", "polite", "--seed", "41", "--hosts", "8", "--config", cfg];
    sim = await startSimwebWithDns(configArgs);
    const seedsFile = join(dir, "seeds.txt");
    writeSeeds(configArgs, seedsFile);
    const out = join(dir, "out");
    const crawl = startCrawl([
      "--seeds", seedsFile, "--out", out, "--scope", "domains", "--delay", String(DELAY_MS), "--max-crawl-delay", "200",
      // --ip-concurrency makes every lease resolve its host (through the fetcher's DNS cache) to take its address's slot.
      "--fetchers", "2", "--parsers", "1", "--fetcher-concurrency", "16", "--ip-concurrency", "4",
      // No retry budget at all: a page that meets the SERVFAIL window must wait with its host, not be
      // failed (a failed page would be missing from the coverage). A short NXDOMAIN confirmation.
      "--retry-max-attempts", "1", "--retry-base", "500", "--robots-backoff-base", "1000", "--dns-min-ttl", "500", "--max-defer-wait", "20000",
      ...dnsCrawlFlags(sim),
    ]);
    // Scrape /metrics while the crawl runs; the last answer is the fullest.
    let exited = false;
    void crawl.done.then(() => (exited = true));
    while (!exited) {
      try {
        const { statusPort } = JSON.parse(readFileSync(join(out, "status.json"), "utf8")) as { statusPort: number };
        const text = await (await fetch(`http://127.0.0.1:${statusPort}/metrics`, { signal: AbortSignal.timeout(2000) })).text();
        if (text.includes("shardcrawl_dns_lookups_total")) lastMetrics = text;
      } catch {
        // not up yet, or already stopping
      }
      await sleep(300);
    }
    run = await crawl.done;
    await sim.stop();
    report = verifyLog(configArgs, sim.logFile, { minGapMs: DELAY_MS, maxConcurrency: 1, seedsFile, scope: "domains", maxCrawlDelayMs: 200, politenessKey: "domain" });
    pages = readPageLog(out);
    dnsLog = readDnsLog(sim.dnsLogFile);
    requests = readAddressedLog(sim.logFile);
    counters = (JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as { stats: { counters: Record<string, number> } }).stats.counters;
  }, 240_000);

  afterAll(async () => {
    await sim?.stop();
  });

  test("the crawl ends cleanly and fetches every page of every name that resolves, politely", () => {
    expect(run.code, run.stderr).toBe(0);
    const c = report.coverage!;
    expect(c.missing.examples).toEqual([]);
    expect(c.fetchedExpected).toBe(c.expected);
    expect(report.violations.gap.examples).toEqual([]);
  });

  test("SERVFAIL window: pages met it, were retried, and none failed for good", () => {
    const answers = dnsLog.filter((q) => q.name === SERVFAIL_HOST && q.type === "A").map((q) => q.answer);
    expect(answers).toContain("servfail");
    // The window closed and the name resolved again afterwards.
    expect(answers.slice(answers.indexOf("servfail")).some((a) => a.startsWith("127."))).toBe(true);
    const mine = pages.filter((p) => hostOf(p.url) === SERVFAIL_HOST);
    // An attempt that met it: a retry (error dns-transient) or, with no retry left, the host's wait.
    const metIt = (p: PageLine): boolean => p.error === "dns-transient" || (p.error === null && (p.error_detail ?? "").startsWith("dns-transient: ESERVFAIL"));
    expect(mine.filter(metIt).length, "page attempts that met the SERVFAIL").toBeGreaterThan(0);
    expect(mine.filter((p) => p.error === "dns-transient" && p.status === null && !(p.error_detail ?? "").includes("retry in")), "final dns-transient failures").toEqual([]);
    // Every URL of the host that met the window was fetched in the end.
    const fetched = new Set(mine.filter((p) => p.status === 200).map((p) => p.url));
    const met = new Set(mine.filter(metIt).map((p) => p.url));
    expect([...met].filter((u) => !fetched.has(u))).toEqual([]);
    const served = new Set(requests.filter((r) => r.host === SERVFAIL_HOST && r.status === 200).map((r) => r.path));
    expect(served.size).toBeGreaterThanOrEqual(fetched.size);
  });

  test("NXDOMAIN: URLs recorded as dns failures, confirmed by a second lookup, never requested", () => {
    const mine = pages.filter((p) => hostOf(p.url) === NX_HOST);
    expect(mine.length).toBeGreaterThan(0);
    expect(mine.filter((p) => p.error !== "dns")).toEqual([]);
    expect(dnsLog.filter((q) => q.name === NX_HOST && q.type === "A" && q.answer === "nxdomain").length).toBeGreaterThanOrEqual(2);
    expect(requests.filter((r) => r.host === NX_HOST)).toEqual([]);
  });

  test("a record that moved is looked up again after its TTL and the requests follow it", () => {
    const asked = dnsLog.filter((q) => q.name === MOVING_HOST && q.type === "A");
    const home = asked[0]!.answer;
    const moved = asked.map((q) => q.answer).find((a) => a !== home);
    expect(moved, "a lookup after the move got the new address").toMatch(/^127\./);
    const movedAt = asked[0]!.ts + MOVE_AFTER_MS;
    const mine = requests.filter((r) => r.host === MOVING_HOST);
    expect(mine.filter((r) => r.ts < movedAt && r.addr === home).length).toBeGreaterThan(0);
    expect(mine.filter((r) => r.addr === moved).length).toBeGreaterThanOrEqual(5);
    // Connections opened once the old answer's TTL has passed all go to the new address.
    const firstSeen = new Map<number, AddressedRequest>();
    for (const r of mine) if (r.conn !== undefined && !firstSeen.has(r.conn)) firstSeen.set(r.conn, r);
    const lateConns = [...firstSeen.values()].filter((r) => r.ts > movedAt + MOVED_TTL_S * 1000 + MOVE_MARGIN_MS);
    expect(lateConns.filter((r) => r.addr !== moved)).toEqual([]);
    // A connection kept alive from before the move carries at most one more request (simweb closes it).
    const afterMoveOnOld = new Map<number, number>();
    for (const r of mine) if (r.ts >= movedAt && r.addr === home) afterMoveOnOld.set(r.conn!, (afterMoveOnOld.get(r.conn!) ?? 0) + 1);
    expect([...afterMoveOnOld.values()].filter((n) => n > 1)).toEqual([]);
  });

  test("DNS metrics: lookups, cache hits, failures by class and lookup time on /metrics", () => {
    expect(lastMetrics).not.toBe("");
    expect(metric(lastMetrics, "shardcrawl_dns_lookups_total")).toBeGreaterThan(0);
    expect(metric(lastMetrics, "shardcrawl_dns_cache_hits_total")).toBeGreaterThan(0);
    expect(metric(lastMetrics, "shardcrawl_dns_failures_total", 'class="transient"')).toBeGreaterThan(0);
    expect(metric(lastMetrics, "shardcrawl_dns_failures_total", 'class="nxdomain"')).toBeGreaterThan(0);
    expect(metric(lastMetrics, "shardcrawl_dns_lookup_seconds_total")).toBeGreaterThan(0);
    // The node's own count of resolver calls against the server's log: one A question each.
    const aQuestions = dnsLog.filter((q) => q.type === "A").length;
    expect(counters["dns:lookups"]).toBe(aQuestions);
    expect(metric(lastMetrics, "shardcrawl_dns_lookups_total")).toBeLessThanOrEqual(aQuestions);
    expect(counters["dnsFail:nxdomain"]).toBe(dnsLog.filter((q) => q.type === "A" && q.answer === "nxdomain").length);
  });
});
