import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseCrawlFlags, UsageError } from "../../src/cli/flags.js";
import { loadNodeConfigFile } from "../../src/cli/config-file.js";
import { parseSeeds } from "../../src/node/seeds.js";

describe("crawl flags (a contract outside tests rely on)", () => {
  const cfgDir = mkdtempSync(join(tmpdir(), "sc-flags-"));
  const write = (name: string, text: string) => {
    const p = join(cfgDir, name);
    writeFileSync(p, text);
    return p;
  };
  it("maps every contract flag onto the node config", () => {
    const c = parseCrawlFlags([
      "--seeds", "s.txt", "--out", "o", "--max-pages", "10", "--delay", "250", "--host-concurrency", "2",
      "--user-agent", "bot/1.0", "--connect-to", "::127.0.0.1:8080", "--connect-to", ":443:127.0.0.1:8443",
      "--allow-private", "--scope", "hosts", "--ca-file", "ca.pem", "--max-page-bytes", "1000",
      "--fetchers", "3", "--parsers", "2", "--cut-drain-bytes", "0",
    ]);
    expect(c).toMatchObject({
      seeds: "s.txt", out: "o", maxPages: 10, delayMs: 250, hostConcurrency: 2, userAgent: "bot/1.0",
      connectTo: ["::127.0.0.1:8080", ":443:127.0.0.1:8443"], allowPrivate: true, scope: "hosts",
      caFile: "ca.pem", maxPageBytes: 1000, fetchers: 3, parsers: 2, cutDrainBytes: 0,
    });
  });

  it("defaults: 1000 ms delay, one request per host, private destinations refused, domains scope", () => {
    const c = parseCrawlFlags(["--out", "o"]);
    expect(c.delayMs).toBe(1000);
    expect(c.hostConcurrency).toBe(1);
    expect(c.allowPrivate).toBe(false);
    expect(c.scope).toBe("domains");
    expect(c.cutDrainBytes).toBe(512 * 1024);
  });

  it("--fetch-timeout caps every phase's timeout", () => {
    const c = parseCrawlFlags(["--out", "o", "--fetch-timeout", "3000"]);
    expect(c.timeouts).toEqual({ connectMs: 3000, headersMs: 3000, bodyMs: 3000, totalMs: 3000 });
  });

  it("parse the DNS TTL clamp and resolver concurrency, and refuse a max below the min", () => {
    const c = parseCrawlFlags(["--out", "o", "--dns-min-ttl", "5000", "--dns-max-ttl", "600000", "--dns-concurrency", "8"]);
    expect([c.dnsMinTtlMs, c.dnsMaxTtlMs, c.dnsConcurrency]).toEqual([5000, 600000, 8]);
    const d = parseCrawlFlags(["--out", "o"]);
    expect([d.dnsMinTtlMs, d.dnsMaxTtlMs, d.dnsConcurrency]).toEqual([30_000, 3600_000, 64]);
    expect(() => parseCrawlFlags(["--out", "o", "--dns-min-ttl", "60000", "--dns-max-ttl", "1000"])).toThrow(/dnsMaxTtlMs/);
    expect(() => parseCrawlFlags(["--out", "o", "--dns-concurrency", "0"])).toThrow(/dns-?[cC]oncurrency/);
  });

  it("--derivatives takes a list of wet, wat, index, or all / none", () => {
    expect(parseCrawlFlags(["--out", "o"]).derivatives).toEqual([]);
    expect(parseCrawlFlags(["--out", "o", "--derivatives", "wat,wet,wat"]).derivatives).toEqual(["wat", "wet"]);
    expect(parseCrawlFlags(["--out", "o", "--derivatives", "all"]).derivatives).toEqual(["wet", "wat", "index"]);
    expect(parseCrawlFlags(["--out", "o", "--derivatives", "none"]).derivatives).toEqual([]);
    expect(() => parseCrawlFlags(["--out", "o", "--derivatives", "wet,pdf"])).toThrow(/--derivatives: expected a list of wet, wat, index/);
    expect(() => loadNodeConfigFile(write("derivatives.yaml", "out: x\nderivatives: [wet, text]\n"))).toThrow(/derivatives\[1\]: expected wet, wat or index, got "text"/);
    expect(loadNodeConfigFile(write("derivatives-ok.yaml", "out: x\nderivatives: [index]\n")).derivatives).toEqual(["index"]);
  });

  it("bad values get specific errors", () => {
    expect(() => parseCrawlFlags(["--out", "o", "--delay", "soon"])).toThrow(/--delay: expected a non-negative integer/);
    expect(() => parseCrawlFlags(["--out", "o", "--scope", "planet"])).toThrow(/scope: expected domains, hosts or any/);
    expect(() => parseCrawlFlags(["--seeds", "s"])).toThrow(/--out <dir> is required/);
    expect(() => parseCrawlFlags(["--out", "o", "--fetchers", "0"])).toThrow(/--fetchers: expected >= 1, got 0/);
    expect(() => parseCrawlFlags(["--out", "o", "--bogus"])).toThrow(UsageError);
    expect(() => parseCrawlFlags(["--out", "o", "--cut-drain-bytes=x1"])).toThrow(/--cut-drain-bytes: expected a non-negative integer/);
  });
});

describe("node config file", () => {
  const dir = mkdtempSync(join(tmpdir(), "sc-cfg-"));
  const write = (name: string, text: string) => {
    const p = join(dir, name);
    writeFileSync(p, text);
    return p;
  };

  it("reads YAML with the NodeConfig keys", () => {
    const c = loadNodeConfigFile(write("ok.yaml", "out: /data/crawl\ndelayMs: 70000\ntimeouts:\n  totalMs: 30000\n"));
    expect(c.out).toBe("/data/crawl");
    expect(c.delayMs).toBe(70000);
    expect(c.timeouts.totalMs).toBe(30000);
    expect(c.timeouts.connectMs).toBe(10000);
  });

  it("names the key that is wrong", () => {
    expect(() => loadNodeConfigFile(write("unknown.yaml", "out: x\ndelay: 5\n"))).toThrow(/unknown key "delay"/);
    expect(() => loadNodeConfigFile(write("type.yaml", "out: x\ndelayMs: fast\n"))).toThrow(/type\.yaml: delayMs: expected a number, got "fast"/);
    expect(() => loadNodeConfigFile(write("bad.yaml", "out: [\n"))).toThrow(/not valid YAML/);
    expect(() => loadNodeConfigFile(join(dir, "missing.yaml"))).toThrow(/cannot read config file/);
  });
});

describe("seed files", () => {
  it("skips blanks and comments, normalizes, dedupes, and reports bad lines with their numbers", () => {
    const r = parseSeeds("# seeds\n\nhttp://Example.COM:80/a#x\nhttp://example.com/a\nftp://x.test/\n  https://b.test/  \n", 2048);
    expect(r.accepted).toEqual(["http://example.com/a", "https://b.test/"]);
    expect(r.rejected).toEqual([{ line: 5, text: "ftp://x.test/", reason: "scheme" }]);
  });
});
