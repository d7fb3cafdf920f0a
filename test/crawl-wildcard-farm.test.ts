// The wildcard-subdomain host farm, a spider trap of the real web: simweb's DNS server resolves
// every name under farm.test and each farm page links to fresh random subdomains, without end.
// A crawl seeded with the farm and a few ordinary hosts, through simweb's DNS server, must stay
// within --max-hosts-per-domain (judged from simweb's request log), count what it refused, name
// the refusal in `inspect url`, and still fetch every page of the ordinary hosts.
import { mkdtempSync, readFileSync, writeFileSync, appendFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, test } from "vitest";
import { readPageLog, runCrawl, SHARDCRAWL, verifyLog, writeSeeds, type CrawlRun, type VerifyReport } from "./harness/crawl.js";
import { dnsCrawlFlags, readAddressedLog, readDnsLog, startSimwebWithDns, type AddressedRequest, type DnsLogLine } from "./harness/simweb-dns.js";
import { farmLinks } from "../packages/simweb/src/wildcard-farm.js";

const FARM = { domain: "farm.test", linksPerPage: 4 };
const SEED = 23;
const HOST_CAP = 25;

describe("a wildcard-DNS host farm", () => {
  const dir = mkdtempSync(join(tmpdir(), "sc-wildcard-"));
  const out = join(dir, "out");
  let run: CrawlRun;
  let report: VerifyReport;
  let requests: AddressedRequest[];
  let dnsLog: DnsLogLine[];
  let counters: Record<string, number>;

  beforeAll(async () => {
    const cfg = join(dir, "simweb.json");
    writeFileSync(cfg, JSON.stringify({
      pageSize: { median: 3000, mean: 4000, min: 1000, max: 10000 }, pagesPerHost: { min: 3, alpha: 1.2, max: 10 }, hostPageCap: 10,
      wildcardFarm: FARM, dns: { addresses: 2, ttl: 300, faults: [] },
    }));
    const configArgs = ["--preset", "polite", "--seed", String(SEED), "--hosts", "6", "--config", cfg];
    const sim = await startSimwebWithDns(configArgs);
    try {
      const seedsFile = join(dir, "seeds.txt");
      writeSeeds(configArgs, seedsFile);
      appendFileSync(seedsFile, `http://www.${FARM.domain}/\n`);
      run = await runCrawl([
        "--seeds", seedsFile, "--out", out, "--scope", "domains", "--delay", "10", "--max-crawl-delay", "200",
        "--max-hosts-per-domain", String(HOST_CAP), "--fetchers", "2", "--parsers", "1", "--max-defer-wait", "3000",
        ...dnsCrawlFlags(sim),
      ]);
      await sim.stop();
      report = verifyLog(configArgs, sim.logFile, { minGapMs: 10, maxConcurrency: 1, seedsFile, scope: "domains", maxCrawlDelayMs: 200, politenessKey: "domain" });
      requests = readAddressedLog(sim.logFile);
      dnsLog = readDnsLog(sim.dnsLogFile);
      counters = (JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as { stats: { counters: Record<string, number> } }).stats.counters;
    } finally {
      await sim.stop();
    }
  }, 240_000);

  test("the farm's hosts stay within --max-hosts-per-domain, and the cap was what stopped it", () => {
    expect(run.code, run.stderr).toBe(0);
    const farmHosts = new Set(requests.filter((r) => r.host.endsWith(`.${FARM.domain}`)).map((r) => r.host));
    expect(farmHosts.size).toBeLessThanOrEqual(HOST_CAP);
    expect(farmHosts.size).toBeGreaterThan(HOST_CAP / 2);
    // No name beyond the cap was even looked up.
    const farmNames = new Set(dnsLog.filter((q) => q.name.endsWith(`.${FARM.domain}`)).map((q) => q.name));
    expect(farmNames.size).toBeLessThanOrEqual(HOST_CAP);
    expect(counters["dropped:domain-hosts"] ?? 0).toBeGreaterThan(0);
  });

  test("inspect url names the cap for a farm host that was never admitted", () => {
    const crawled = new Set(requests.map((r) => r.host));
    const farmPages = readPageLog(out).filter((p) => p.status === 200 && new URL(p.url).hostname.endsWith(`.${FARM.domain}`));
    const refused = farmPages.flatMap((p) => farmLinks(FARM, SEED, new URL(p.url).hostname)).find((u) => !crawled.has(new URL(u).hostname));
    expect(refused, "a linked farm host that was never requested").toBeDefined();
    const r = spawnSync(process.execPath, [SHARDCRAWL, "inspect", "url", refused!, "--out", out], { encoding: "utf8", timeout: 60_000 });
    expect(r.stdout + r.stderr).toMatch(/domain-hosts/);
    expect(r.stdout).toMatch(/--max-hosts-per-domain/);
  });

  test("every page of the ordinary hosts is fetched", () => {
    const c = report.coverage!;
    expect(c.missing.examples).toEqual([]);
    expect(c.fetchedExpected).toBe(c.expected);
    expect(report.violations.gap.examples).toEqual([]);
  });
});
