// The fetcher's memo of compiled robots.txt: bounded by the bytes the compiled rules hold, oldest
// (least recently confirmed) first, re-checked against the node's cache after its TTL.
import { describe, expect, it } from "vitest";
import { RobotsMemo } from "../../src/fetch/robots-memo.js";
import type { RobotsEntry } from "../../src/fetch/robots.js";

const UA = "shardcrawl/0.1";
const rulesOf = (count: number, fetchedAt = 1): RobotsEntry => ({
  kind: "rules",
  fetchedAt,
  body: ["User-agent: *", ...Array.from({ length: count }, (_, i) => `Disallow: /retired-${i}/`)].join("\n"),
});

function memoWith(entries: Map<string, RobotsEntry>, maxBytes: number, clock = { now: 0 }) {
  let loads = 0;
  const memo = new RobotsMemo((origin) => {
    loads++;
    return Promise.resolve(entries.get(origin) ?? null);
  }, UA, 300_000, 0, () => clock.now, maxBytes);
  return { memo, loads: () => loads, clock };
}

describe("RobotsMemo", () => {
  it("keeps compiled files within its byte budget, dropping the oldest first", async () => {
    const entries = new Map(["a", "b", "c", "d"].map((h) => [`https://${h}.test`, rulesOf(2_000)] as const));
    const oneFile = new RobotsMemo(() => Promise.resolve(null), UA, 300_000).remember("https://x.test", rulesOf(2_000)).compiled.bytes;
    const { memo } = memoWith(entries, oneFile * 2.5);
    for (const origin of entries.keys()) expect(await memo.get(origin)).not.toBeNull();
    expect(memo.stats.entries).toBe(2);
    expect(memo.stats.bytes).toBeLessThanOrEqual(oneFile * 2.5);
    expect(memo.stats.bytes).toBe(oneFile * 2);
  });

  it("keeps a file alone over the budget (it is the one in use)", () => {
    const { memo } = memoWith(new Map(), 1_000);
    const view = memo.remember("https://big.test", rulesOf(5_000));
    expect(view.compiled.isAllowed("https://big.test/retired-7/x")).toBe(false);
    expect(memo.stats.entries).toBe(1);
    memo.remember("https://big.test", rulesOf(5_000, 2));
    expect(memo.stats).toEqual({ entries: 1, bytes: view.compiled.bytes });
  });

  it("evicts hosts that left the rotation before hosts still confirmed in use", async () => {
    const origins = ["https://a.test", "https://b.test", "https://c.test"];
    const entries = new Map(origins.map((o) => [o, rulesOf(500)] as const));
    const clock = { now: 0 };
    const oneFile = new RobotsMemo(() => Promise.resolve(null), UA, 300_000).remember("https://x.test", rulesOf(500)).compiled.bytes;
    const { memo, loads } = memoWith(entries, oneFile * 2, clock);
    await memo.get(origins[0]!);
    await memo.get(origins[1]!);
    // a's TTL runs out and it is confirmed (same file): it is young again, b is now the oldest.
    clock.now = 61_000;
    await memo.get(origins[0]!);
    expect(loads()).toBe(3);
    await memo.get(origins[2]!);
    const before = loads();
    clock.now = 61_001;
    await memo.get(origins[0]!); // still remembered: no load
    expect(loads()).toBe(before);
    await memo.get(origins[1]!); // evicted: loaded and compiled again
    expect(loads()).toBe(before + 1);
  });
});
