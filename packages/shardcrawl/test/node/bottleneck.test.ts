// The bottleneck rules: each stage is named when its signal dominates, in the documented order.
import { describe, expect, it } from "vitest";
import { findBottleneck, type BottleneckInput } from "../../src/node/bottleneck.js";

/** A busy node with no stage in trouble: 100 hosts queued, 40 due, fetch slots half used. */
const healthy: BottleneckInput = {
  windowMs: 10_000, fetchers: 2, fetchCapacity: 512, leases: 256, queued: 5000, hostsQueued: 100, dueHosts: 40,
  parseQueue: 10, parseQueueMax: 256, blockedMs: {}, readyLagMs: 0, redisUsedBytes: 1e8, redisBudgetBytes: 1e9, hostsUnderBackoff: 0,
};
const stage = (over: Partial<BottleneckInput>) => findBottleneck({ ...healthy, ...over });

describe("findBottleneck", () => {
  it("blames per-host politeness when no other stage is under strain", () => {
    const b = stage({});
    expect(b.stage).toBe("politeness");
    expect(b.reason).toMatch(/40 of 100 queued hosts/);
    expect(b.fetchFill).toBe(0.5);
    expect(stage({ hostsUnderBackoff: 7 }).reason).toMatch(/7 hosts pushing back/);
  });

  it("blames parsers when fetchers wait on the parse queue or it is nearly full", () => {
    // 2 fetchers x 10 s = 20 s of fetcher time; 6 s blocked = 30%.
    const b = stage({ blockedMs: { "parse-full": 6000 } });
    expect(b.stage).toBe("parse");
    expect(b.blockedShare["parse-full"]).toBeCloseTo(0.3);
    expect(stage({ parseQueue: 240 }).stage).toBe("parse");
    // Below the threshold the parse stage is not the bottleneck.
    expect(stage({ blockedMs: { "parse-full": 2000 }, parseQueue: 200 }).stage).toBe("politeness");
  });

  it("blames our upstream when its quota stopped fetching or its rate limit paused it", () => {
    expect(stage({ stopped: "quota exhausted" })).toMatchObject({ stage: "upstream", reason: "fetching stopped: quota exhausted" });
    expect(stage({ blockedMs: { upstream: 9000 } }).stage).toBe("upstream");
    expect(stage({ blockedMs: { quota: 20_000 } }).stage).toBe("upstream");
  });

  it("blames memory near the Redis budget, and ignores it without a budget", () => {
    expect(stage({ redisUsedBytes: 9e8 }).stage).toBe("memory");
    expect(stage({ redisUsedBytes: 9e8, redisBudgetBytes: 0 }).stage).toBe("politeness");
  });

  it("blames fetching at the global cap, with full fetch slots, or when due hosts wait", () => {
    expect(stage({ blockedMs: { "global-full": 10_000 } }).stage).toBe("fetch");
    expect(stage({ leases: 500 })).toMatchObject({ stage: "fetch", reason: expect.stringMatching(/500 of 512 in flight/) as string });
    expect(stage({ readyLagMs: 5000 }).reason).toMatch(/wait 5\.0 s for a fetcher/);
  });

  it("says idle or draining when the frontier is empty", () => {
    expect(stage({ queued: 0, leases: 0, parseQueue: 0 }).stage).toBe("idle");
    expect(stage({ queued: 0, leases: 3, parseQueue: 0 })).toMatchObject({ stage: "draining", reason: expect.stringMatching(/3 fetches/) as string });
  });

  it("puts a stopped upstream before a full parse queue, and parsing before memory", () => {
    expect(stage({ stopped: "x", parseQueue: 256 }).stage).toBe("upstream");
    expect(stage({ parseQueue: 256, redisUsedBytes: 9.9e8 }).stage).toBe("parse");
  });
});
