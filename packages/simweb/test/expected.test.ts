import { describe, expect, test } from "vitest";
import { makeConfig, World } from "../src/index.js";

const UA = "shardcrawl/1.0";

describe("expected(): reachable, robots-allowed, in-scope canonical URLs", () => {
  test("closure: every followable link of an expected page is expected or excluded for a stated reason", () => {
    const w = new World(makeConfig({ preset: "hostile", hosts: 150, seed: 21, hostPageCap: 150 }));
    const seeds = w.seeds(10);
    const res = w.expected({ seeds, scope: "domains", userAgent: UA });
    expect(res.urls.size).toBeGreaterThan(100);
    expect(res.truncated).toBe(false);
    expect(res.trapsExcluded).toBeGreaterThan(0);
    const seedDomains = new Set(seeds.map((s) => new URL(s).hostname.split(".").slice(-2).join(".")));
    let redirects = 0;
    for (const url of res.urls) {
      const r = w.resolve(url)!;
      expect(r, url).not.toBeNull();
      expect(seedDomains.has(r.host.info.domain)).toBe(true);
      expect(r.resource.kind).not.toBe("trap");
      const u = new URL(url);
      expect(w.robots.allows(r.host, u.pathname + u.search, UA)).toBe(true);
      if (r.resource.kind === "redirect") {
        redirects++;
        const t = w.resolve(r.resource.target);
        // a redirect's target is expected unless it is out of scope or disallowed
        if (t && seedDomains.has(t.host.info.domain) && w.robots.allows(t.host, new URL(r.resource.target).pathname + new URL(r.resource.target).search, UA)) {
          expect(res.urls.has(r.resource.target), r.resource.target).toBe(true);
        }
      }
      if (r.resource.kind !== "page" || r.resource.page.nofollowPage) continue;
      for (const l of w.links(r.resource.page)) {
        if (l.nofollow || res.urls.has(l.url)) continue;
        const t = w.resolve(l.url);
        const why = !t ? "unserved" : !seedDomains.has(t.host.info.domain) ? "scope" : t.resource.kind === "trap" ? "trap" : "robots";
        if (why === "robots") expect(w.robots.allows(t!.host, new URL(l.url).pathname + new URL(l.url).search, UA), l.url).toBe(false);
      }
    }
    expect(redirects).toBeGreaterThan(0);
    expect(res.disallowed).toBeGreaterThan(0);
  });

  test("hosts with 5xx, unreachable or disallow-all robots.txt contribute nothing", () => {
    const w = new World(makeConfig({ hosts: 120, seed: 2, hostPageCap: 40 }));
    const res = w.expected({ seeds: w.seeds(), scope: "any", userAgent: UA });
    const blocked = new Set(w.hosts().filter((h) => ["server-error", "unreachable", "disallow-all"].includes(h.robots)).map((h) => h.name));
    expect(blocked.size).toBeGreaterThan(0);
    for (const url of res.urls) expect(blocked.has(new URL(url).hostname)).toBe(false);
  });

  test("scopes nest: hosts within domains within any", () => {
    const w = new World(makeConfig({ preset: "polite", hosts: 120, seed: 8, hostPageCap: 60 }));
    const seeds = w.seeds(5);
    const hosts = w.expected({ seeds, scope: "hosts", userAgent: UA }).urls;
    const domains = w.expected({ seeds, scope: "domains", userAgent: UA }).urls;
    const any = w.expected({ seeds, scope: "any", userAgent: UA }).urls;
    for (const u of hosts) expect(domains.has(u)).toBe(true);
    for (const u of domains) expect(any.has(u)).toBe(true);
    expect(any.size).toBeGreaterThan(domains.size);
    const seedHosts = new Set(seeds.map((s) => new URL(s).hostname));
    for (const u of hosts) expect(seedHosts.has(new URL(u).hostname)).toBe(true);
  });

  test("rel=nofollow links and links on meta-robots-nofollow pages are not followed", () => {
    const allNofollow = new World(makeConfig({ preset: "polite", hosts: 30, nofollowShare: 1, robots: { absent: 1, empty: 0, rules: 0, "agent-specific": 0, "crawl-delay": 0, sitemap: 0, large: 0, redirect: 0, "disallow-all": 0, "server-error": 0, unreachable: 0 } }));
    const seeds = allNofollow.seeds(3);
    expect([...allNofollow.expected({ seeds, scope: "any", userAgent: UA }).urls].sort()).toEqual([...seeds].sort());
    // Every non-home page is a meta-nofollow page: only home pages and what home pages link to.
    const w = new World(makeConfig({ preset: "polite", hosts: 30, nofollowShare: 0, metaNofollowShare: 1 }));
    const s2 = w.seeds(3);
    const got = w.expected({ seeds: s2, scope: "any", userAgent: UA }).urls;
    const allowed = new Set<string>();
    for (const u of got) {
      const r = w.resolve(u)!;
      if (r.resource.kind === "page" && r.resource.page.id === 0) {
        allowed.add(u);
        for (const l of w.links(r.resource.page)) allowed.add(l.url);
      }
    }
    expect(got.size).toBeGreaterThan(3);
    for (const u of got) expect(allowed.has(u), u).toBe(true);
  });

  test("maxPages bounds the walk and says so", () => {
    const w = new World(makeConfig({ hosts: 1000, seed: 1 }));
    const res = w.expected({ seeds: w.seeds(50), scope: "any", userAgent: UA, maxPages: 500 });
    expect(res.urls.size).toBe(500);
    expect(res.truncated).toBe(true);
  });
});
