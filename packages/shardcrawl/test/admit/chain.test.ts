// The admission chain: one order whatever order the filters are given in, the first refusal
// decides and is counted under its filter, sampled timing, and every filter's verdict in the one
// Refusal type (the Lua-decided and fetch-time ones included).
import { describe, expect, it } from "vitest";
import {
  AdmissionCounts, buildAdmissionChain, CHAIN_ORDER, DomainHostsFacts, ExclusionFilter, HostBudgetFacts, refusalsByFilter, admissionTimings,
  robotsRefusal, ScopeFilter, ShardFilter, TrapFilter, scopeSpecOf,
} from "../../src/admit/index.js";
import { ExclusionSet } from "../../src/frontier/index.js";
import { compileRobots, type RobotsEntry } from "../../src/fetch/robots.js";
import { ShardRouter, equalNodes } from "../../src/shard/shard-spec.js";

const host = (u: string) => new URL(u).hostname;

describe("AdmissionChain", () => {
  const scope = () => new ScopeFilter(scopeSpecOf(["http://www.a.test/"], "domains"));
  const trap = () => new TrapFilter(["max-path-depth=3", "max-query-params=2"]);
  const excl = (set: ExclusionSet) => new ExclusionFilter(() => set);

  it("puts filters in CHAIN_ORDER and the first refusal decides", () => {
    const set = new ExclusionSet([{ pattern: "blog.a.test", kind: "host", reason: "asked", at: 0 }]);
    const chain = buildAdmissionChain([trap(), excl(set), scope()], new AdmissionCounts());
    expect(chain.names).toEqual(["scope", "exclusions", "trap"]);
    expect(chain.names.map((n) => CHAIN_ORDER.indexOf(n))).toEqual([...chain.names.map((n) => CHAIN_ORDER.indexOf(n))].sort((a, b) => a - b));
    const check = (u: string) => chain.check(u, host(u));
    expect(check("http://shop.a.test/x")).toBeUndefined();
    // Out of scope and a trap: scope comes first.
    expect(check("http://b.test/1/2/3/4/5")).toMatchObject({ filter: "scope", reason: "out-of-scope" });
    // Excluded and a trap: the opt-out list comes first.
    expect(check("http://blog.a.test/1/2/3/4/5")).toMatchObject({ filter: "exclusions", reason: "excluded", detail: expect.stringContaining("(reason: asked)") });
    expect(check("http://shop.a.test/1/2/3/4")).toMatchObject({ filter: "trap", reason: "trap:path-depth" });
    expect(check("http://shop.a.test/?a=1&b=2&c=3")).toMatchObject({ filter: "trap", reason: "trap:query-params" });
  });

  it("counts refusals by filter and times one check in 256, filter by filter", () => {
    const counts = new AdmissionCounts();
    const chain = buildAdmissionChain([scope(), trap()], counts);
    for (let i = 0; i < 512; i++) chain.check(`http://b.test/${i}`, "b.test");
    for (let i = 0; i < 512; i++) chain.check(`http://a.test/${i}`, "a.test");
    const d = counts.take();
    expect(d.refused.get("admit:scope")).toBe(512);
    expect(d.refused.get("filtered:path-depth")).toBeUndefined();
    // 1024 checks: 4 timed; a refused check times only the filters it ran.
    const timedScope = d.timed.get("scope") ?? 0;
    expect(timedScope).toBe(4);
    expect(d.timed.get("trap") ?? 0).toBeLessThanOrEqual(timedScope);
    expect(d.ns.get("scope")).toBeGreaterThan(0);
    // Taken: the next delta starts from zero.
    expect(counts.take().refused.size).toBe(0);
  });

  it("drains into stats fields that the metrics map back to filters", () => {
    const counts = new AdmissionCounts();
    const chain = buildAdmissionChain([scope()], counts);
    for (let i = 0; i < 300; i++) chain.check("http://b.test/", "b.test");
    const fields: Record<string, number> = {};
    counts.drainInto({ add: (f, n) => (fields[f] = (fields[f] ?? 0) + n) });
    expect(fields["admit:scope"]).toBe(300);
    // Refusals decided in Lua, the frontier and the fetcher are counted under their old names.
    const byFilter = refusalsByFilter({
      ...fields, "filtered:path-depth": 2, "filtered:query-params": 3, "excluded:refused": 4, "dropped:host-budget": 5, "dropped:domain-hosts": 6,
      "dropped:host-full": 100, "err:robots-disallowed": 7, "err:robots-unavailable": 1, "err:crawl-delay-too-long": 8, "err:dns": 100,
    });
    expect(Object.fromEntries(byFilter)).toEqual({ scope: 300, trap: 5, exclusions: 4, "host-budget": 5, "domain-hosts": 6, robots: 8, "crawl-delay": 8 });
    expect(admissionTimings(fields).get("scope")?.checks).toBe(fields["admitTimed:scope"]);
  });

  it("refuses a filter given twice or one that is not a chain filter", () => {
    expect(() => buildAdmissionChain([scope(), scope()])).toThrow(/twice/);
    expect(() => buildAdmissionChain([{ name: "robots", check: () => undefined }])).toThrow(/not a chain filter/);
  });

  it("shard routing: a refusal that names the owner", () => {
    const router = new ShardRouter({ self: "node0", nodes: equalNodes(4), key: "domain" });
    const chain = buildAdmissionChain([new ShardFilter(router)], new AdmissionCounts());
    let routed = 0;
    for (let i = 0; i < 200; i++) {
      const h = `h${i}.test`;
      const v = chain.check(`http://${h}/`, h);
      expect(v?.routeTo).toBe(router.ownsHost(h) ? undefined : router.ownerOfHost(h));
      if (v) routed++;
    }
    // Four equal nodes: most hosts belong to the others.
    expect(routed).toBeGreaterThan(100);
    expect(routed).toBeLessThan(200);
  });

  it("the Lua-decided filters, from facts, in the same verdict type", () => {
    const chain = buildAdmissionChain([new DomainHostsFacts(() => ({ domain: "farm.test", hosts: 10, known: false }), 10), new HostBudgetFacts(() => 60, 60)], new AdmissionCounts());
    expect(chain.names).toEqual(["host-budget", "domain-hosts"]);
    expect(chain.check("http://x.farm.test/", "x.farm.test")).toMatchObject({ filter: "host-budget", reason: "host-budget" });
    expect(new HostBudgetFacts(() => 59, 60).check("u", "h")).toBeUndefined();
    expect(new HostBudgetFacts(() => 1e9, 0).check("u", "h")).toBeUndefined();
    // A host already admitted is never refused by the domain cap.
    expect(new DomainHostsFacts(() => ({ domain: "farm.test", hosts: 10, known: true }), 10).check("u", "h")).toBeUndefined();
    expect(chain.explain("http://x.farm.test/", "x.farm.test").map((a) => a.verdict?.reason)).toEqual(["host-budget", "domain-hosts"]);
  });
});

describe("fetch-time refusals (robots.txt, Crawl-delay)", () => {
  const view = (entry: RobotsEntry, maxCrawlDelayMs = 5000) => ({ compiled: compileRobots(entry, "shardcrawl/0.1", { maxCrawlDelayMs }), kind: entry.kind, ...(entry.kind === "disallow-all" ? { reason: entry.reason, errorClass: entry.errorClass } : {}) });

  it("disallowed, unavailable, Crawl-delay too long, allowed", () => {
    const rules: RobotsEntry = { kind: "rules", body: "User-agent: *\nDisallow: /private\n", fetchedAt: 1 };
    expect(robotsRefusal(view(rules), "http://a.test/private/x", 5000)).toMatchObject({ filter: "robots", reason: "robots-disallowed" });
    expect(robotsRefusal(view(rules), "http://a.test/public", 5000)).toBeUndefined();
    const slow: RobotsEntry = { kind: "rules", body: "User-agent: *\nCrawl-delay: 30\n", fetchedAt: 1 };
    expect(robotsRefusal(view(slow), "http://a.test/", 5000)).toMatchObject({ filter: "crawl-delay", reason: "crawl-delay-too-long", detail: expect.stringContaining("Crawl-delay 30 s") });
    const down: RobotsEntry = { kind: "disallow-all", retryAfterMs: 1, fetchedAt: 1, reason: "HTTP 500" };
    expect(robotsRefusal(view(down), "http://a.test/", 5000)).toMatchObject({ filter: "robots", reason: "robots-unavailable", detail: expect.stringContaining("HTTP 500") });
  });
});
