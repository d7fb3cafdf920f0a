// The hostile web on raw sockets, crawled by one real node: every host of
// harness/hostile-tcp.ts (broken HTTP, drips, resets, bombs, a 100 MB robots.txt, odd hrefs,
// redirect loops and chains, bad certificates) plus DNS failures from a real DNS server on
// loopback. Each URL must end as a recorded, classified outcome in the page log within its time
// and size caps; the node's memory stays bounded; no child restarts, no crash.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { readPageLog, startCrawl, TEST_UA, type CrawlRun, type PageLine } from "./harness/crawl.js";
import { startDnsServer, type TestDnsServer } from "./harness/dns-server.js";
import { HOSTILE_CASES, ODD_HREFS, ROBOTS_HUGE_BYTES, startHostileServer, type HostileServer } from "./harness/hostile-tcp.js";
import { watchGroupRss, type RssPeak } from "./harness/proc-rss.js";

const FETCH_TIMEOUT_MS = 4000;
const MAX_PAGE_BYTES = 4 * 1024 * 1024;
const MAX_URL_LENGTH = 2048; // the crawler's default
const ROBOTS_MAX_BYTES = 500 * 1024; // RFC 9309 minimum, what the crawler reads
/** Slack for a loaded 2-core CI box on top of a time cap: the point is "ends at the cap", not speed. */
const SLACK_MS = 6000;
/** Memory bound for any one node process of the crawl (supervisor, fetcher, parser with its worker thread). */
const MAX_PROCESS_RSS = 300 * 1024 * 1024;
/** ... and for all of them together. */
const MAX_NODE_TOTAL_RSS = 750 * 1024 * 1024;

describe("hostile web on raw TCP, DNS and TLS", () => {
  let server: HostileServer;
  let dns: TestDnsServer;
  let run: CrawlRun;
  let pages: PageLine[];
  let rss: RssPeak;
  let summary: { restarts: number; reason: string; deferred?: { hosts: number; urls: number; list: Array<{ host: string; urls: number; lastError: string; tries: number }> } };
  let elapsedMs = 0;

  beforeAll(async () => {
    server = await startHostileServer();
    dns = await startDnsServer((name) => {
      if (name === "nx.dnsfail.test") return "nxdomain";
      if (name === "servfail.dnsfail.test") return "servfail";
      if (name === "timeout.dnsfail.test") return "silent";
      return { addresses: ["127.0.0.1"] };
    });
    const dir = mkdtempSync(join(tmpdir(), "sc-hostile-tcp-"));
    const seeds = join(dir, "seeds.txt");
    writeFileSync(seeds, server.seeds.join("\n") + "\n");
    const out = join(dir, "out");
    const t0 = Date.now();
    const crawl = startCrawl([
      "--seeds", seeds, "--out", out, "--scope", "domains", "--delay", "20",
      "--fetchers", "1", "--parsers", "1", "--fetch-timeout", String(FETCH_TIMEOUT_MS), "--max-page-bytes", String(MAX_PAGE_BYTES),
      "--retry-max-attempts", "1", "--allow-private",
      // robots.txt outages (DNS SERVFAIL, no answer) are waited out: short back-off, short end wait;
      // an NXDOMAIN is believed once a second try (a back-off later) says it again.
      "--robots-backoff-base", "1000", "--robots-backoff-max", "2000", "--max-defer-wait", "3000", "--ca-file", server.caFile, "--user-agent", TEST_UA,
      // Names resolve through our DNS server; connect-to changes only the port (so DNS is really asked).
      "--dns-server", dns.address, "--connect-to", `:80::${server.httpPort}`, "--connect-to", `:443::${server.tlsPort}`,
    ]);
    const watch = watchGroupRss(crawl.proc.pid!);
    run = await crawl.done;
    rss = watch.stop();
    elapsedMs = Date.now() - t0;
    pages = readPageLog(out);
    summary = JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as typeof summary;
    console.log(`hostile-tcp: ${pages.length} page-log lines in ${elapsedMs} ms; peak RSS one node process ${(rss.perProcess.node ?? 0) >> 20} MiB, all node processes ${rss.nodeTotal >> 20} MiB (${rss.samples} samples); robots.txt bytes the 100 MB host got out: ${server.robotsHugeBytesSent()}`);
  }, 180_000);

  afterAll(async () => {
    await server?.close();
    await dns?.close();
  });

  const lines = (url: string) => pages.filter((p) => p.url === url);
  const one = (url: string): PageLine => {
    const l = lines(url);
    expect(l, `page-log lines for ${url}`).toHaveLength(1);
    return l[0]!;
  };

  test("the node finished without a crash or a child restart, with every host recorded", () => {
    expect(run.stderr).not.toMatch(/fatal|exited \(code|failed unexpectedly|internal parse failure/);
    expect(run.code).toBe(0);
    expect(summary.restarts).toBe(0);
    expect(summary.reason).toBe("done");
    // Every host is recorded: in the page log, or (robots.txt outage) deferred in the summary.
    const deferred = new Set(summary.deferred?.list.map((d) => d.host) ?? []);
    for (const seed of server.seeds) if (!deferred.has(new URL(seed).hostname)) expect(lines(seed).length, seed).toBeGreaterThan(0);
    expect(Object.keys(HOSTILE_CASES).length).toBe(server.seeds.length);
  });

  test("every page-log line is classified and ended within the time cap", () => {
    for (const p of pages) {
      expect(p.status !== null || p.error !== null, p.url).toBe(true);
      expect(p.timings.total, p.url).toBeLessThanOrEqual(FETCH_TIMEOUT_MS + SLACK_MS);
      expect(p.bytes, p.url).toBeLessThanOrEqual(MAX_PAGE_BYTES);
    }
  });

  test("node memory stayed within its bound (RSS from /proc)", () => {
    expect(rss.samples).toBeGreaterThan(5);
    expect(rss.perProcess.node).toBeLessThanOrEqual(MAX_PROCESS_RSS);
    expect(rss.nodeTotal).toBeLessThanOrEqual(MAX_NODE_TOTAL_RSS);
  });

  test("a normal host next to all this is crawled normally", () => {
    expect(one("http://ok.hostile.test/")).toMatchObject({ status: 200, error: null });
    expect(one("http://ok.hostile.test/a")).toMatchObject({ status: 200, error: null });
    expect(one("https://good.tls.test/")).toMatchObject({ status: 200, error: null });
  });

  test("headers that never end hit the header/total timeout", () => {
    expect(["headers-timeout", "total-timeout"]).toContain(one("http://headers-forever.hostile.test/").error);
  });

  test("oversized headers are refused as too-large-headers", () => {
    expect(one("http://headers-huge.hostile.test/").error).toBe("too-large-headers");
  });

  test("a body dripping one byte a second is cut at the time cap", () => {
    const p = one("http://drip.hostile.test/");
    expect(p.status).toBe(200);
    expect(p.truncated).toBe(true);
    expect(p.bytes).toBeLessThan(100);
    expect(p.error_detail).toMatch(/time cap/);
  });

  test("a connection reset mid-body is recorded as reset", () => {
    expect(one("http://reset-mid-body.hostile.test/").error).toBe("reset");
  });

  test("a 10 MB single line is cut at the page cap and parsed", () => {
    expect(one("http://long-line.hostile.test/")).toMatchObject({ status: 200, truncated: true, bytes: MAX_PAGE_BYTES });
  });

  test("deeply nested markup and invalid UTF-8 are parsed: their links are followed", () => {
    expect(one("http://deep-nesting.hostile.test/").status).toBe(200);
    expect(one("http://deep-nesting.hostile.test/deep-ok").status).toBe(200);
    expect(one("http://invalid-utf8.hostile.test/").status).toBe(200);
    expect(one("http://invalid-utf8.hostile.test/after-bad-bytes").status).toBe(200);
  });

  test("binary served as text/html is recorded, not a crash", () => {
    expect(one("http://binary-as-html.hostile.test/")).toMatchObject({ status: 200, bytes: 1024 * 1024 });
  });

  test("gzip and brotli bombs are stopped at the decode cap", () => {
    expect(one("http://gzip-bomb.hostile.test/").error).toBe("decode-bomb");
    expect(one("http://brotli-bomb.hostile.test/").error).toBe("decode-bomb");
  });

  test("a redirect loop ends: each URL fetched once", () => {
    for (const u of ["/", "/loop/a", "/loop/b"]) expect(one(`http://redirect-loop.hostile.test${u}`).status).toBe(302);
    expect(server.requests.filter((r) => r.startsWith("redirect-loop.hostile.test /loop/")).length).toBe(2);
  });

  test("a long redirect chain stops at the redirect limit, recorded as redirect-limit", () => {
    const chain = pages.filter((p) => p.url.startsWith("http://redirect-chain.hostile.test/"));
    expect(chain).toHaveLength(6); // "/" and 5 hops (maxRedirects 5)
    expect(chain.filter((p) => p.error === "redirect-limit").map((p) => p.url)).toEqual(["http://redirect-chain.hostile.test/chain/5"]);
    expect(server.requests).not.toContain("redirect-chain.hostile.test /chain/6");
  });

  test("odd hrefs: no script/data/mailto/overlong URL is fetched; sane ones after clean-up are", () => {
    expect(one("http://odd-hrefs.hostile.test/").status).toBe(200);
    for (const p of pages) {
      expect(p.url, p.url).toMatch(/^https?:\/\//);
      expect(p.url.length).toBeLessThanOrEqual(MAX_URL_LENGTH);
      expect(() => new URL(p.url)).not.toThrow();
    }
    const seen = server.requests.filter((r) => r.startsWith("odd-hrefs.hostile.test ")).map((r) => r.slice(r.indexOf(" ") + 1));
    expect(seen).toContain("/ws-ok");
    expect(seen).toContain("/backslash-ok");
    for (const path of seen) expect(path.length).toBeLessThanOrEqual(MAX_URL_LENGTH);
    expect(seen.some((p) => /javascript|mailto|data:/i.test(p))).toBe(false);
    expect(ODD_HREFS.length).toBeGreaterThan(15);
  });

  test("a 100 MB robots.txt is read up to the robots cap only, and its rules apply", () => {
    expect(server.robotsHugeBytesSent()).toBeGreaterThanOrEqual(ROBOTS_MAX_BYTES);
    expect(server.robotsHugeBytesSent()).toBeLessThan(ROBOTS_HUGE_BYTES / 4);
    expect(one("http://robots-huge.hostile.test/public").status).toBe(200);
    expect(one("http://robots-huge.hostile.test/private/x").error).toBe("robots-disallowed");
  });

  test("garbage instead of HTTP is an http-protocol failure", () => {
    expect(one("http://garbage.hostile.test/").error).toBe("http-protocol");
  });

  /** A host whose robots.txt failed for good: its page fails with the failure's class, the cause in the detail. */
  const refusedCause = (url: string, errorClass: string) => {
    const p = one(url);
    expect(p.error).toBe(errorClass);
    return p.error_detail ?? "";
  };
  const deferredHost = (host: string) => summary.deferred?.list.find((d) => d.host === host);

  test("DNS: NXDOMAIN (confirmed by a second try) fails as dns; SERVFAIL and no answer wait as deferred", () => {
    expect(refusedCause("http://nx.dnsfail.test/", "dns")).toMatch(/\(dns: ENOTFOUND.*confirmed by a second lookup/);
    for (const [host, code] of [["servfail.dnsfail.test", /dns-transient: ESERVFAIL/], ["timeout.dnsfail.test", /dns-transient: ETIMEOUT/]] as const) {
      expect(lines(`http://${host}/`), host).toHaveLength(0);
      const d = deferredHost(host);
      expect(d, host).toBeDefined();
      expect(d!.urls).toBe(1);
      expect(d!.lastError).toMatch(code);
    }
    expect(dns.questions).toContain("timeout.dnsfail.test A");
  });

  test("TLS certificate errors fail as tls, with the certificate error", () => {
    expect(refusedCause("https://expired.tls.test/", "tls")).toMatch(/\(tls: CERT_HAS_EXPIRED/);
    expect(refusedCause("https://wronghost.tls.test/", "tls")).toMatch(/\(tls: ERR_TLS_CERT_ALTNAME_INVALID/);
    expect(refusedCause("https://selfsigned.tls.test/", "tls")).toMatch(/\(tls: DEPTH_ZERO_SELF_SIGNED_CERT/);
  });
});
