// A feed entry is queued at once even while its discovery copy waits in a host queue. The loop
// marks it (P rfq) and the fetchers ask RecrawlVisits.duplicate before each first attempt: of the
// two copies only the first leased is fetched; later planned visits and unmarked URLs are not
// dropped (retries are not asked: fetch-pipeline.ts).
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { recrawlConfigFromFlags } from "../../src/schedule/recrawl/continuous-config.js";
import { RecrawlVisits, feedQueuedKey } from "../../src/schedule/recrawl/continuous-visits.js";

let redis: Redis;
useRedis((server) => {
  redis = server.client();
});

describe("a feed entry and its discovery copy (real redis-server)", () => {
  it("whichever copy is fetched first, the other is dropped; later planned visits and unmarked URLs are not", async () => {
    const prefix = "fd1:";
    const visits = new RecrawlVisits(redis, prefix, recrawlConfigFromFlags({ continuous: true })!);
    const [a, b, c] = ["https://shop.test/p/1", "https://shop.test/p/2", "https://shop.test/list/1"];
    // Not marked: never a duplicate, however often leased.
    for (const depth of [0, 2, 0]) expect(await visits.duplicate(a, depth)).toBe(false);
    expect(await redis.hexists(feedQueuedKey(prefix), a)).toBe(0);
    // The loop marks what it queues from a feed or sitemap (continuous-loop.ts readHints).
    await redis.hset(feedQueuedKey(prefix), a, "0", b, "0", c, "0");
    // The feed's copy (depth 0) first: the discovery copy (depth 2) is dropped, then the mark is gone.
    expect(await visits.duplicate(a, 0)).toBe(false);
    expect(await visits.duplicate(a, 2)).toBe(true);
    expect(await redis.hexists(feedQueuedKey(prefix), a)).toBe(0);
    expect(await visits.duplicate(a, 0)).toBe(false);
    // The discovery copy first: the feed's copy is dropped.
    expect(await visits.duplicate(b, 1)).toBe(false);
    expect(await visits.duplicate(b, 0)).toBe(true);
    // A listing found in a sitemap is read again and again (planned, depth 0): never dropped.
    for (let i = 0; i < 3; i++) expect(await visits.duplicate(c, 0)).toBe(false);
    expect(await visits.duplicate(c, 1)).toBe(true);
  });
});
