// The site owners' opt-out list against a real redis-server: patterns, purge of queued URLs (whole
// hosts and URL prefixes, counted), refusal at admission, and the list seen by another process's
// Frontier after a change.
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { Frontier, type FrontierOptions } from "../../src/frontier/index.js";
import { ExclusionSet, hostUnder, parseExclusionPattern } from "../../src/frontier/exclusions.js";
import { parseExcludeFile } from "../../src/node/exclude-file.js";
import { AdmissionCounts, BatchAdmission } from "../../src/admit/index.js";
import { checkInvariants, link } from "./helpers.js";

let redis: Redis;
let n = 0;
const bloom = { expectedUrls: 10_000, falsePositiveRate: 0.001 };

function open(opts: FrontierOptions = {}): Promise<Frontier> {
  return Frontier.open(redis, { prefix: `ex${++n}:`, bloom, ...opts });
}

useRedis((server) => {
  redis = server.client();
});

describe("exclusion patterns", () => {
  it("parses names and URL prefixes and refuses the rest", () => {
    expect(parseExclusionPattern(" Example.COM ")).toEqual({ pattern: "example.com", kind: "host" });
    expect(parseExclusionPattern("https://Example.com/private/")).toEqual({ pattern: "https://example.com/private/", kind: "url-prefix" });
    expect(() => parseExclusionPattern("ftp://x.test/")).toThrow(/domain, a host or an http/);
    expect(() => parseExclusionPattern("")).toThrow(/empty/);
    expect(() => parseExclusionPattern("a b")).toThrow();
  });

  it("a name covers its host and the hosts under it, not look-alikes", () => {
    expect(hostUnder("www.example.com", "example.com")).toBe(true);
    expect(hostUnder("example.com", "example.com")).toBe(true);
    expect(hostUnder("badexample.com", "example.com")).toBe(false);
    const set = new ExclusionSet([
      { pattern: "example.com", kind: "host", reason: "asked", at: 1 },
      { pattern: "https://other.test/private/", kind: "url-prefix", reason: "", at: 2 },
    ]);
    expect(set.match("https://a.b.example.com/x", "a.b.example.com")?.reason).toBe("asked");
    expect(set.match("https://notexample.com/x", "notexample.com")).toBeUndefined();
    expect(set.match("https://other.test/private/1", "other.test")?.pattern).toBe("https://other.test/private/");
    expect(set.match("https://other.test/public", "other.test")).toBeUndefined();
  });

  it("reads an exclude file with reasons and comments, naming the bad line", () => {
    expect(parseExcludeFile("# owners\nexample.com  asked by mail 2026-01-02\n\nhttps://x.test/a/\n", "f")).toEqual([
      { pattern: "example.com", reason: "asked by mail 2026-01-02" }, { pattern: "https://x.test/a/", reason: "" },
    ]);
    expect(() => parseExcludeFile("ok.test\nftp://bad/\n", "f")).toThrow(/f:2:/);
  });
});

describe("exclusion in the frontier and the admission chain", () => {
  for (const politenessKey of ["host", "domain"] as const) {
    it(`purges queued URLs of a domain's hosts and refuses new links to them (${politenessKey} politeness)`, async () => {
      const f = await open({ delayMs: 0, politenessKey });
      await f.addLinks([
        link("https://www.b.test/1"), link("https://www.b.test/2"), link("https://m.b.test/1"),
        link("https://a.test/1"), link("https://a.test/private/1"), link("https://a.test/private/2"),
      ], { now: 1 });
      const e = await f.exclusions.add("b.test", "owner asked", 10);
      expect(await f.purgeExcluded(e, 11)).toBe(3);
      const p = await f.exclusions.add("https://a.test/private/", "", 12);
      expect(await f.purgeExcluded(p, 13)).toBe(2);
      const s = await f.stats(14);
      expect(s.queued).toBe(1);
      expect(s.counters.excluded).toBe(5);
      await checkInvariants(redis, f);
      // Another process's admission chain, over its own Frontier on the same crawl, sees the list too.
      const other = await Frontier.open(redis, { prefix: f.keys.prefix, politenessKey });
      const admission = new BatchAdmission({ exclusions: other.exclusions, counts: new AdmissionCounts() });
      const { own, refused } = await admission.admit([link("https://shop.b.test/x"), link("https://a.test/private/3"), link("https://a.test/ok")]);
      expect(refused).toBe(2);
      expect(await other.addLinks(own, { now: 20 })).toMatchObject({ added: 1 });
      await admission.writeCounts(other);
      expect((await f.stats(21)).counters["excluded:refused"]).toBe(2);
      const leased: string[] = [];
      for (let t = 30; t < 40; t++) {
        for (const l of (await f.lease(10, t)).leases) {
          leased.push(l.url);
          await f.fail(l, "other", t);
        }
      }
      expect(leased.sort()).toEqual(["https://a.test/1", "https://a.test/ok"]);
      // Removed: links are admitted again (after the cached list is re-read).
      expect(await other.exclusions.remove("b.test")).toBe(true);
      expect(await other.exclusions.remove("b.test")).toBe(false);
      expect((await f.exclusions.all()).map((x) => x.pattern)).toEqual(["https://a.test/private/"]);
    });
  }
});
