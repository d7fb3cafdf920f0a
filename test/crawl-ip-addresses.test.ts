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
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { runCrawl, verifyLog, writeSeeds, type CrawlRun, type VerifyReport } from "./harness/crawl.js";
import { dnsCrawlFlags, maxInFlightBy, readAddressedLog, startSimwebWithDns, type AddressedRequest, type SimwebWithDns } from "./harness/simweb-dns.js";

const DELAY_MS = 30;
const IP_CONCURRENCY = 2;
const BIG_DOMAIN_HOSTS = 300;
const ADDRESSES = 4;

describe("many domains per address, and a 300-host domain, under --ip-concurrency and domain politeness", () => {
  let sim: SimwebWithDns;
  let run: CrawlRun;
  let report: VerifyReport;
  let requests: AddressedRequest[];

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-ipaddr-"));
    const cfg = join(dir, "simweb.json");
    writeFileSync(cfg, JSON.stringify({
      pageSize: { median: 3000, mean: 4000, min: 1000, max: 10000 }, pagesPerHost: { min: 1, alpha: 1.2, max: 3 }, hostPageCap: 3,
      bigDomains: [BIG_DOMAIN_HOSTS], dns: { addresses: ADDRESSES, ttl: 300, faults: [] },
    }));
    const configArgs = ["--preset", "polite", "--seed", "57", "--hosts", String(BIG_DOMAIN_HOSTS + 40), "--config", cfg];
    sim = await startSimwebWithDns(configArgs);
    const seedsFile = join(dir, "seeds.txt");
    writeSeeds(configArgs, seedsFile);
    run = await runCrawl([
      "--seeds", seedsFile, "--out", join(dir, "out"), "--scope", "domains", "--delay", String(DELAY_MS), "--max-crawl-delay", "200",
      "--politeness-key", "domain", "--ip-concurrency", String(IP_CONCURRENCY),
      "--fetchers", "2", "--parsers", "1", "--fetcher-concurrency", "32", "--max-defer-wait", "3000",
      ...dnsCrawlFlags(sim),
    ]);
    await sim.stop();
    requests = readAddressedLog(sim.logFile);
    report = verifyLog(configArgs, sim.logFile, { minGapMs: DELAY_MS, maxConcurrency: 1, seedsFile, scope: "domains", maxCrawlDelayMs: 200, politenessKey: "domain" });
  }, 300_000);

  afterAll(async () => {
    await sim?.stop();
  });

  test("requests arrived on the addresses DNS gave, several domains on each", () => {
    expect(run.code, run.stderr).toBe(0);
    const domainsPerAddr = new Map<string, Set<string>>();
    for (const r of requests) {
      const d = r.host.split(".").slice(-2).join(".");
      if (!domainsPerAddr.has(r.addr!)) domainsPerAddr.set(r.addr!, new Set());
      domainsPerAddr.get(r.addr!)!.add(d);
    }
    expect([...domainsPerAddr.keys()].sort()).toEqual(sim.addresses.slice(0, ADDRESSES).sort());
    for (const [addr, domains] of domainsPerAddr) expect(domains.size, `domains on ${addr}`).toBeGreaterThanOrEqual(3);
    // The 300-host domain's hosts were all visited.
    expect(new Set(requests.filter((r) => r.host.endsWith(".d0.test")).map((r) => r.host)).size).toBe(BIG_DOMAIN_HOSTS);
  });

  test("never more than --ip-concurrency requests in flight to one address", () => {
    const perAddr = maxInFlightBy(requests, (r) => r.addr ?? "?");
    expect(perAddr.has("?")).toBe(false);
    for (const [addr, n] of perAddr) expect(n, `in flight to ${addr}`).toBeLessThanOrEqual(IP_CONCURRENCY);
    // The limit was reached somewhere: the crawl was not too slow to test it.
    expect(Math.max(...perAddr.values())).toBe(IP_CONCURRENCY);
  });

  test("every reachable page fetched, no two requests to one domain closer than the delay", () => {
    const c = report.coverage!;
    expect(c.missing.examples).toEqual([]);
    expect(c.fetchedExpected).toBe(c.expected);
    expect(report.violations.gap.examples).toEqual([]);
    expect(report.violations.concurrency.count).toBe(0);
  });
});
