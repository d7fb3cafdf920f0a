// Shared hosting for real on the wire, and a domain with hundreds of hosts. simweb's DNS server gives
// each registrable domain one of a few loopback addresses (several domains per address), and one
// domain has 300 subdomain hosts. The crawl resolves through simweb's DNS server and connects to
// the address it was told. Judged from simweb's request log, by the local address each request
// arrived on and by registrable domain:
//  - never more than --ip-concurrency requests in flight to one address, across its domains;
//  - with --politeness-key domain, no two requests to hosts of one domain closer than the delay
//    (simweb verify, the same check as every politeness test), the 300-host domain included;
//  - every reachable page of every host fetched.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { runCrawl, verifyLog, writeSeeds, type CrawlRun, type VerifyReport } from "./harness/crawl.js";
import { dnsCrawlFlags, maxInFlightBy, readAddressedLog, startSimwebWithDns, type AddressedRequest, type SimwebWithDns } from "./harness/simweb-dns.js";

// The crawler adds its politeness margin (50 ms) to every gap: requests to one domain are >= 60 ms apart.
const DELAY_MS = 10;
const IP_CONCURRENCY = 2;
const BIG_DOMAIN_HOSTS = 300;
const ADDRESSES = 4;

interface Crawled {
  sim: SimwebWithDns;
  run: CrawlRun;
  report: VerifyReport;
  requests: AddressedRequest[];
}

/** simweb with `config` (plus its DNS server), one crawl through it with domain politeness, its logs. */
async function crawlThroughDns(name: string, config: object, hosts: number, extra: string[]): Promise<Crawled> {
  const dir = mkdtempSync(join(tmpdir(), `sc-${name}-`));
  const cfg = join(dir, "simweb.json");
  writeFileSync(cfg, JSON.stringify(config));
  const configArgs = ["--preset", "polite", "--seed", "57", "--hosts", String(hosts), "--config", cfg];
  const sim = await startSimwebWithDns(configArgs);
  try {
    const seedsFile = join(dir, "seeds.txt");
    writeSeeds(configArgs, seedsFile);
    const run = await runCrawl([
      "--seeds", seedsFile, "--out", join(dir, "out"), "--scope", "domains", "--delay", String(DELAY_MS), "--max-crawl-delay", "200",
      "--politeness-key", "domain", "--fetchers", "2", "--parsers", "1", "--fetcher-concurrency", "32", "--max-defer-wait", "3000",
      ...extra, ...dnsCrawlFlags(sim),
    ]);
    await sim.stop();
    const report = verifyLog(configArgs, sim.logFile, { minGapMs: DELAY_MS, maxConcurrency: 1, seedsFile, scope: "domains", maxCrawlDelayMs: 200, politenessKey: "domain" });
    return { sim, run, report, requests: readAddressedLog(sim.logFile) };
  } finally {
    await sim.stop();
  }
}

function expectAllFetchedPolitely(c: Crawled): void {
  expect(c.run.code, c.run.stderr).toBe(0);
  const cov = c.report.coverage!;
  expect(cov.missing.examples).toEqual([]);
  expect(cov.fetchedExpected).toBe(cov.expected);
  expect(c.report.violations.gap.examples).toEqual([]);
  expect(c.report.violations.concurrency.count).toBe(0);
}

describe("many domains per address under --ip-concurrency", () => {
  let c: Crawled;

  beforeAll(async () => {
    // Every host answers after ~80 ms, so requests to one address overlap and the limit is tested.
    c = await crawlThroughDns("ipaddr", {
      pageSize: { median: 3000, mean: 4000, min: 1000, max: 10000 }, pagesPerHost: { min: 2, alpha: 1.2, max: 6 }, hostPageCap: 6,
      behaviours: { slow: 1 }, slow: { medianMs: 80, sigma: 0.3, maxMs: 200 },
      dns: { addresses: ADDRESSES, ttl: 300, faults: [] },
    }, 48, ["--ip-concurrency", String(IP_CONCURRENCY)]);
  }, 240_000);

  test("requests arrived on the addresses DNS gave, several domains on each", () => {
    const domainsPerAddr = new Map<string, Set<string>>();
    for (const r of c.requests) {
      const d = r.host.split(".").slice(-2).join(".");
      if (!domainsPerAddr.has(r.addr!)) domainsPerAddr.set(r.addr!, new Set());
      domainsPerAddr.get(r.addr!)!.add(d);
    }
    expect([...domainsPerAddr.keys()].sort()).toEqual(c.sim.addresses.slice(0, ADDRESSES).sort());
    for (const [addr, domains] of domainsPerAddr) expect(domains.size, `domains on ${addr}`).toBeGreaterThanOrEqual(3);
  });

  test("never more than --ip-concurrency requests in flight to one address", () => {
    const perAddr = maxInFlightBy(c.requests, (r) => r.addr ?? "?");
    expect(perAddr.has("?")).toBe(false);
    for (const [addr, n] of perAddr) expect(n, `in flight to ${addr}`).toBeLessThanOrEqual(IP_CONCURRENCY);
    // The limit was reached somewhere: the crawl pressed against it.
    expect(Math.max(...perAddr.values())).toBe(IP_CONCURRENCY);
  });

  test("every reachable page fetched, politely per domain", () => {
    expectAllFetchedPolitely(c);
  });
});

describe("a domain with 300 hosts under --politeness-key domain", () => {
  let c: Crawled;

  beforeAll(async () => {
    // One page per host: the domain's ~600 requests (robots.txt and home page of each host) go one at a time.
    c = await crawlThroughDns("bigdomain", {
      pageSize: { median: 3000, mean: 4000, min: 1000, max: 10000 }, pagesPerHost: { min: 1, alpha: 1.2, max: 1 }, hostPageCap: 1,
      bigDomains: [BIG_DOMAIN_HOSTS], dns: { addresses: 2, ttl: 300, faults: [] },
    }, BIG_DOMAIN_HOSTS + 12, []);
  }, 300_000);

  test("every host of the domain visited, every page fetched, no two requests to the domain closer than the delay", () => {
    expect(new Set(c.requests.filter((r) => r.host.endsWith(".d0.test")).map((r) => r.host)).size).toBe(BIG_DOMAIN_HOSTS);
    expectAllFetchedPolitely(c);
    // The domain's requests never overlapped (one in-flight slot per domain).
    expect(maxInFlightBy(c.requests, (r) => r.host.split(".").slice(-2).join(".")).get("d0.test")).toBe(1);
  });
});
