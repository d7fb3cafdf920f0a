// Configurable URL priority rules (schedule/priority.ts) and their config validation.
import { describe, expect, it } from "vitest";
import { UrlPrioritizer, checkPriorityRules, parsePriorityRuleFlag, tierFor } from "../../src/schedule/priority.js";
import { parseCrawlFlags, UsageError } from "../../src/cli/flags.js";
import { nodeConfigFromObject } from "../../src/cli/config-file.js";

describe("UrlPrioritizer", () => {
  it("first matching rule wins; URLs no rule matches get the depth/shape heuristic", () => {
    const p = new UrlPrioritizer([
      { pattern: "/archive/", priority: 3 },
      { pattern: "^https://news\\.test/", priority: 0 },
      { pattern: "/archive/keep", priority: 0 },
    ]);
    expect(p.tier("https://a.test/archive/keep/1", 0)).toBe(3);
    expect(p.tier("https://news.test/a/b/c/d/e/f/g/h", 9)).toBe(0);
    expect(p.tier("https://a.test/x", 0)).toBe(tierFor("https://a.test/x", 0));
    expect(p.tier("https://a.test/x", 5)).toBe(tierFor("https://a.test/x", 5));
  });

  it("without rules it is the heuristic", () => {
    const p = new UrlPrioritizer();
    for (const [u, d] of [["https://a.test/", 0], ["https://a.test/a?x=1&y=2&z=3", 2], ["https://a.test/1/2/3/4/5/6/7/8", 4]] as const) expect(p.tier(u, d)).toBe(tierFor(u, d));
  });
});

describe("priority rule validation", () => {
  it("names the rule and the problem", () => {
    expect(checkPriorityRules([{ pattern: "ok", priority: 1 }])).toEqual([]);
    expect(checkPriorityRules([{ pattern: "(", priority: 1 }])[0]).toMatch(/rule 0: pattern "\(" is not a valid regular expression/);
    expect(checkPriorityRules([{ pattern: "a", priority: 7 }])[0]).toMatch(/rule 0: priority must be an integer tier 0..3/);
    expect(checkPriorityRules([{ pattern: "a", priority: 1, weight: 2 }])[0]).toMatch(/unknown key "weight"/);
    expect(checkPriorityRules("x")).toEqual(["expected a list of {pattern, priority}"]);
    expect(() => new UrlPrioritizer([{ pattern: "[", priority: 0 }])).toThrow(/priority rules: rule 0/);
  });

  it("come from a YAML/JSON config (priorityRules) or repeatable --priority-rule flags", () => {
    const c = nodeConfigFromObject({ out: "o", priorityRules: [{ pattern: "\\?sort=", priority: 3 }] }, "node.yaml");
    expect(c.priorityRules).toEqual([{ pattern: "\\?sort=", priority: 3 }]);
    expect(() => nodeConfigFromObject({ out: "o", priorityRules: [{ pattern: "x", priority: -1 }] }, "node.yaml")).toThrow(/node.yaml: priorityRules: rule 0: priority/);
    const f = parseCrawlFlags(["--out", "o", "--priority-rule", "3:/tag/", "--priority-rule", "0:^https://a\\.test/$"]);
    expect(f.priorityRules).toEqual([{ priority: 3, pattern: "/tag/" }, { priority: 0, pattern: "^https://a\\.test/$" }]);
    expect(parsePriorityRuleFlag("2:a:b")).toEqual({ priority: 2, pattern: "a:b" });
    expect(() => parseCrawlFlags(["--out", "o", "--priority-rule", "x"])).toThrow(UsageError);
    expect(() => parseCrawlFlags(["--out", "o", "--priority-rule", "9:x"])).toThrow(/priorityRules: rule 0: priority/);
  });
});
