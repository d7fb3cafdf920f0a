// Pure pieces of the start-up checks: passwords never printed, rejected seeds reported with a fix.
import { describe, expect, it } from "vitest";
import { redactRedisUrl, seedRejectionLines } from "../../src/node/preflight.js";
import { parseSeeds, tallyOf } from "../../src/node/seeds.js";

describe("preflight messages", () => {
  it("hides the password of a Redis URL, keeps the rest", () => {
    expect(redactRedisUrl("redis://:s3cret@10.0.0.5:6379")).toBe("redis://:***@10.0.0.5:6379");
    expect(redactRedisUrl("redis://crawler:s3cret@h:6380/2")).toBe("redis://crawler:***@h:6380/2");
    expect(redactRedisUrl("redis://h:6379")).toBe("redis://h:6379");
  });

  it("names each rejected seed line and says the rest are crawled", () => {
    const seeds = parseSeeds("http://a.test/\nnot a url\nhttp://b.test/\n", 2048);
    const lines = seedRejectionLines("s.txt", tallyOf(seeds));
    expect(lines[0]).toMatch(/^seed rejected: s\.txt line 2: .*not a url$/);
    expect(lines.at(-1)).toMatch(/^1 seed lines rejected; the other 2 seeds are crawled: fix or remove those lines/);
    expect(seedRejectionLines("s.txt", tallyOf(parseSeeds("http://a.test/\n", 2048)))).toEqual([]);
  });

  it("shows at most five and counts the rest", () => {
    const seeds = parseSeeds(Array.from({ length: 8 }, (_, i) => `bad ${i}`).concat("http://a.test/").join("\n"), 2048);
    const lines = seedRejectionLines("s.txt", tallyOf(seeds));
    expect(lines).toHaveLength(6);
    expect(lines.at(-1)).toMatch(/8 seed lines rejected \(3 more not shown\)/);
  });
});
