// The URL verdict: records (lease, queue, page log, spill, shed log) win over the admission chain;
// refusals that leave no record are only given for URLs the seen filter never admitted.
import { describe, expect, it } from "vitest";
import { decideUrlVerdict, URL_EXIT_CODES, type UrlFacts } from "../../../src/cli/inspect/url-verdict.js";
import { robotsGroupFor } from "../../../src/cli/inspect/robots-group.js";
import type { PageLogLine } from "../../../src/shared/types.js";
import { buildAdmissionChain, DomainHostsFacts, HostBudgetFacts, ScopeFilter, TrapFilter } from "../../../src/admit/index.js";

const base: UrlFacts = {
  url: "http://a.test/x", owner: "n0", node: "n0", lease: null, parsing: null, queued: null, lastOutcome: null, spilled: null, shed: null,
  seen: false, scope: { mode: "domains", key: "a.test", inScope: true }, filter: null, hostBudget: null, robots: { verdict: "allowed", kind: "rules" },
};
const line = (over: Partial<PageLogLine>): PageLogLine => ({
  url: base.url, final_url: base.url, status: 200, error: null, content_type: "text/html", bytes: 10, truncated: false, digest: null,
  fetched_at: "2026-01-01T00:00:00.000Z", timings: { total: 5 }, outlinks: 0, depth: 0, ...over,
});

describe("decideUrlVerdict", () => {
  it("fetched, with the WARC location", () => {
    const v = decideUrlVerdict({ ...base, seen: true, lastOutcome: line({ warc: { file: "w.warc.gz", offset: 42, length: 9 } }) });
    expect(v).toMatchObject({ status: "fetched", reason: "200" });
    expect(v.detail).toContain("w.warc.gz at offset 42");
  });

  it("a robots-disallowed page-log line is a robots refusal; other errors are failures", () => {
    expect(decideUrlVerdict({ ...base, seen: true, lastOutcome: line({ status: null, error: "robots-disallowed" }) })).toMatchObject({ status: "refused", reason: "robots" });
    expect(decideUrlVerdict({ ...base, seen: true, lastOutcome: line({ status: null, error: "connect" }) })).toMatchObject({ status: "failed", reason: "connect" });
  });

  it("leased and queued come before the page log (a retry waits in its queue)", () => {
    const queued = { tier: 1, position: 2, ahead: 5, depth: 1, attempt: 1 };
    expect(decideUrlVerdict({ ...base, seen: true, queued, lastOutcome: line({ status: 503 }) }).status).toBe("queued");
    expect(decideUrlVerdict({ ...base, seen: true, lease: { id: "7", tier: 0, url: base.url, expiresAt: 1 } }).status).toBe("leased");
    // Fetched, not yet parsed: no page-log line yet, and no longer queued.
    expect(decideUrlVerdict({ ...base, seen: true, parsing: { id: "3", status: 200, fetchedAt: "t", consumer: "n0-p0" } })).toMatchObject({ status: "parsing", reason: "200" });
  });

  it("a queued URL that robots.txt disallows says it will be refused", () => {
    const v = decideUrlVerdict({ ...base, seen: true, queued: { tier: 0, position: 0, ahead: 0, depth: 0, attempt: 0 }, robots: { verdict: "disallowed" } });
    expect(v.detail).toContain("robots.txt disallows it");
  });

  it("spilled and shed-log entries say shed, with the reason", () => {
    expect(decideUrlVerdict({ ...base, seen: true, spilled: { where: "disk", file: "spill-1-0.txt.gz", tier: 3 } })).toMatchObject({ status: "shed", reason: "spilled" });
    expect(decideUrlVerdict({ ...base, shed: { at: 0, reason: "dropped:frontier-full", host: "a.test", url: base.url } })).toMatchObject({ status: "shed", reason: "dropped:frontier-full" });
  });

  it("never admitted: normalization, then the admission chain's first refusal (in its order), else not seen", () => {
    // The same filters inspect-url.ts builds, given out of order: the chain puts them in its order.
    const first = (filters: Parameters<typeof buildAdmissionChain>[0], url = "http://a.test/a/b/c") => {
      const answers = buildAdmissionChain(filters).explain(url, "a.test");
      return answers.find((a) => a.verdict !== undefined)?.verdict ?? null;
    };
    const outOfScope = new ScopeFilter({ mode: "hosts", keys: ["b.test"] });
    const trap = new TrapFilter(["max-path-depth=2"]);
    const budget = new HostBudgetFacts(() => 5, 5);
    const domainHosts = new DomainHostsFacts(() => ({ domain: "a.test", hosts: 1000, known: false }), 1000);
    expect(decideUrlVerdict({ ...base, admission: first([budget, trap, outOfScope]) })).toMatchObject({ status: "refused", reason: "out-of-scope" });
    expect(decideUrlVerdict({ ...base, admission: first([domainHosts, budget, trap]) })).toMatchObject({ status: "refused", reason: "trap:path-depth" });
    expect(decideUrlVerdict({ ...base, admission: first([domainHosts, budget]) })).toMatchObject({ status: "refused", reason: "host-budget" });
    expect(decideUrlVerdict({ ...base, admission: first([domainHosts]) })).toMatchObject({ status: "refused", reason: "domain-hosts", detail: expect.stringContaining("--max-hosts-per-domain") });
    expect(decideUrlVerdict({ ...base, admission: first([trap]), strippedTo: "https://a.test/x" })).toMatchObject({ status: "refused", reason: "trap:params-stripped" });
    expect(decideUrlVerdict({ ...base, admission: first([trap, budget], "http://a.test/ok") })).toMatchObject({ status: "refused", reason: "host-budget" });
    expect(decideUrlVerdict({ ...base, admission: first([new TrapFilter(["max-path-depth=9"])]) }).status).toBe("not-seen");
    expect(decideUrlVerdict(base).status).toBe("not-seen");
  });

  it("seen without records: robots when robots.txt disallows, else seen", () => {
    expect(decideUrlVerdict({ ...base, seen: true, robots: { verdict: "disallowed" } })).toMatchObject({ status: "refused", reason: "robots" });
    expect(decideUrlVerdict({ ...base, seen: true }).status).toBe("seen");
  });

  it("another node's URL is sent there, and every status has its own documented exit code", () => {
    expect(decideUrlVerdict({ ...base, owner: "n1" }).status).toBe("other-node");
    expect(URL_EXIT_CODES).toEqual({ fetched: 0, leased: 3, parsing: 3, queued: 3, refused: 4, shed: 5, failed: 6, seen: 7, "not-seen": 8, "other-node": 9 });
  });
});

describe("robotsGroupFor", () => {
  const body = "# hi\nUser-agent: other\nDisallow: /\n\nUser-agent: ShardCrawl\nUser-agent: x\nDisallow: /private # no\nCrawl-delay: 2\n\nUser-agent: *\nAllow: /\nDisallow: /tmp\n";
  it("picks our agent's groups, else the * groups", () => {
    expect(robotsGroupFor(body, "shardcrawl")).toEqual({ matched: "shardcrawl", rules: ["Disallow: /private", "Crawl-delay: 2"] });
    expect(robotsGroupFor(body, "nobody")).toEqual({ matched: "*", rules: ["Allow: /", "Disallow: /tmp"] });
    expect(robotsGroupFor("", "nobody")).toEqual({ matched: "*", rules: [] });
  });
});
