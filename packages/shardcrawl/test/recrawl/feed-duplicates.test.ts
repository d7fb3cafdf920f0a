// A feed entry is queued at once even while its discovery copy waits in a host queue. The loop
// marks it (P rfq) and the fetchers ask RecrawlVisits.duplicate before each first attempt: of the
// two copies only the first leased is fetched; a retry is never dropped, nor an unmarked URL.
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
  it("the copy leased second is dropped; unmarked URLs and other entries are not", async () => {
    const prefix = "fd1:";
    const visits = new RecrawlVisits(redis, prefix, recrawlConfigFromFlags({ continuous: true })!);
    const entry = "https://shop.test/p/1";
    // Not marked: never a duplicate, however often leased.
    expect(await visits.duplicate(entry)).toBe(false);
    expect(await visits.duplicate(entry)).toBe(false);
    expect(await redis.hexists(feedQueuedKey(prefix), entry)).toBe(0);
    // The loop marks what it queues from a feed (continuous-loop.ts readHints).
    await redis.hset(feedQueuedKey(prefix), entry, "0", "https://shop.test/p/2", "0");
    // Two fetchers lease the two copies at once: exactly one is fetched.
    const both = await Promise.all([visits.duplicate(entry), visits.duplicate(entry)]);
    expect(both.filter((d) => d)).toHaveLength(1);
    // The mark is gone with the second copy: a later planned revisit is fetched.
    expect(await visits.duplicate(entry)).toBe(false);
    expect(await redis.hexists(feedQueuedKey(prefix), entry)).toBe(0);
    // Another entry's mark is untouched.
    expect(await visits.duplicate("https://shop.test/p/2")).toBe(false);
    expect(await visits.duplicate("https://shop.test/p/2")).toBe(true);
  });
});
