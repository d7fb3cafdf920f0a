// Page outcomes for the metrics, and the batch that carries counters to the Redis stats hash
// (a real redis-server from the harness).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pageOutcome, StatsBatch } from "../../src/node/stats-batch.js";
import { Frontier } from "../../src/frontier/index.js";
import { startRedis, type TestRedis } from "../../../../test/harness/redis.js";

describe("pageOutcome", () => {
  it("is the error class when there is one, else the HTTP status class", () => {
    expect(pageOutcome({ error: null, status: 200 })).toBe("2xx");
    expect(pageOutcome({ error: null, status: 301 })).toBe("3xx");
    expect(pageOutcome({ error: null, status: 429 })).toBe("4xx");
    expect(pageOutcome({ error: "robots-disallowed", status: null })).toBe("robots-disallowed");
    expect(pageOutcome({ error: "decode-bomb", status: 200 })).toBe("decode-bomb");
    expect(pageOutcome({ error: null, status: null })).toBe("other");
    expect(pageOutcome({ error: null, status: 999 })).toBe("other");
  });
});

describe("StatsBatch", () => {
  let server: TestRedis;
  beforeAll(async () => {
    server = await startRedis();
  });
  afterAll(async () => {
    await server?.stop();
  });

  it("adds the deltas to the stats hash on flush and on close, never twice", async () => {
    const redis = server.client();
    // Through the frontier, which owns the stats hash (P stats).
    const frontier = await Frontier.open(redis, { prefix: "t:", bloom: { expectedUrls: 1000, falsePositiveRate: 0.01 } });
    const batch = new StatsBatch(frontier, 60_000);
    batch.add("page:2xx");
    batch.add("page:2xx");
    batch.add("pageBytes:2xx", 1500);
    batch.add("zero", 0);
    await batch.flush();
    expect(await redis.hgetall("t:stats")).toEqual({ "page:2xx": "2", "pageBytes:2xx": "1500" });
    await batch.flush();
    batch.add("page:2xx");
    await batch.close();
    expect(await redis.hget("t:stats", "page:2xx")).toBe("3");
    redis.disconnect();
  });
});
