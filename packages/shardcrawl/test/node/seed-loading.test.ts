// The seed file streamed into the frontier: batches bounded whatever the file's size, every line
// accounted for (accepted, rejected with its line number, repeated), the scope stored from all
// batches, the shard filter keeping this node's share, and the seen filter dropping seeds already
// known -- on a real Redis.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { defaultConfig } from "../../src/node/config.js";
import { openFrontier } from "../../src/node/open-frontier.js";
import { loadSeeds } from "../../src/node/seed-loading.js";
import { readSeedBatches, type SeedTally } from "../../src/node/seeds.js";
import { ShardRouter, equalNodes } from "../../src/shard/shard-spec.js";

let redis: Redis;
useRedis((server) => {
  redis = server.client();
});

function seedFile(lines: string[]): string {
  const f = join(mkdtempSync(join(tmpdir(), "sc-seeds-")), "seeds.txt");
  writeFileSync(f, lines.join("\n"));
  return f;
}

const emptyTally = (): SeedTally => ({ accepted: 0, rejected: 0, firstRejected: [] });

describe("readSeedBatches", () => {
  it("streams batches of the given size and accounts for every line", async () => {
    const lines = ["# comment", "", ...Array.from({ length: 25 }, (_, i) => `http://h${i % 7}.test/p${i}`), "not a url", "http://h0.test/p0", "ftp://x.test/\r"];
    const tally = emptyTally();
    const batches: string[][] = [];
    for await (const b of readSeedBatches(seedFile(lines), 2048, [], tally, 10)) batches.push(b);
    expect(batches.map((b) => b.length)).toEqual([10, 10, 6]);
    // p0 repeated 26 lines later lands in another batch: passed on, the seen filter drops it.
    expect(batches.flat().filter((u) => u === "http://h0.test/p0")).toHaveLength(2);
    expect(tally.accepted).toBe(26);
    expect(tally.rejected).toBe(2);
    expect(tally.firstRejected.map((r) => [r.line, r.text])).toEqual([[28, "not a url"], [30, "ftp://x.test/"]]);
  });

  it("drops a repeat within one batch and cuts a line without end", async () => {
    const long = "http://a.test/" + "x".repeat(100_000);
    const tally = emptyTally();
    const out: string[][] = [];
    for await (const b of readSeedBatches(seedFile(["http://a.test/1", "http://A.test:80/1", long, "http://a.test/2"]), 2048, [], tally, 100)) out.push(b);
    expect(out).toEqual([["http://a.test/1", "http://a.test/2"]]);
    expect(tally.rejected).toBe(1);
    expect(tally.firstRejected[0]!.reason).toBe("too-long");
    expect(tally.firstRejected[0]!.text.length).toBeLessThanOrEqual(500);
  });
});

describe("loadSeeds", () => {
  it("adds seeds batch by batch through the frontier, stores the scope of every batch, counts what the seen filter drops", async () => {
    // Sized far above the 45,000 seeds: at 100,000 a Bloom false positive (~1e-4 each at this fill)
    // fell on one seed or none depending on the order in which the two in-flight batches reached
    // Redis, and the exact counts below would have judged that order, not the loading.
    const config = { ...defaultConfig(), out: mkdtempSync(join(tmpdir(), "sc-seedload-")), prefix: "sl1:", expectedUrls: 10_000_000 };
    const frontier = await openFrontier(redis, config);
    // 45,000 URLs over 300 hosts: three batches of SEED_BATCH and more.
    const lines = Array.from({ length: 45_000 }, (_, i) => `http://h${i % 300}.test/p${i}`);
    const file = seedFile([...lines, "bad line", lines[0]!]);
    const first = await loadSeeds(frontier, { file, scope: "hosts", maxUrlLength: 2048, stripParams: [] });
    expect(first.report).toEqual({ read: 45_002, accepted: 45_000, rejected: 1, otherShards: 0 });
    expect((await frontier.stats()).queued).toBe(45_000);
    const scope = await frontier.loadScope();
    expect(scope.mode).toBe("hosts");
    expect(new Set(scope.keys)).toEqual(new Set(Array.from({ length: 300 }, (_, i) => `h${i}.test`)));
    // Loading the same file again (a resumed crawl) adds nothing.
    const again = await loadSeeds(frontier, { file, scope: "hosts", maxUrlLength: 2048, stripParams: [] });
    expect(again.report.accepted).toBe(0);
    expect((await frontier.stats()).queued).toBe(45_000);
  });

  it("keeps this node's share of the seeds and stores the whole list's scope", async () => {
    const config = { ...defaultConfig(), out: mkdtempSync(join(tmpdir(), "sc-seedload-")), prefix: "sl2:", expectedUrls: 10_000 };
    const frontier = await openFrontier(redis, config);
    const router = new ShardRouter({ self: "node0", nodes: equalNodes(3), key: "domain" });
    const hosts = Array.from({ length: 60 }, (_, i) => `h${i}.test`);
    const mine = hosts.filter((h) => router.ownsHost(h));
    const lines = hosts.flatMap((h) => [`http://${h}/a`, `http://${h}/b`]);
    const { report } = await loadSeeds(frontier, { file: seedFile(lines), scope: "domains", maxUrlLength: 2048, stripParams: [], router });
    expect(mine.length).toBeGreaterThan(5);
    expect(report.accepted).toBe(2 * mine.length);
    expect(report.otherShards).toBe(2 * (hosts.length - mine.length));
    expect((await frontier.loadScope()).keys).toHaveLength(hosts.length);
  });

  it("records the scope mode for a file with no URL, so the crawl can be resumed", async () => {
    const config = { ...defaultConfig(), out: mkdtempSync(join(tmpdir(), "sc-seedload-")), prefix: "sl3:", expectedUrls: 10_000 };
    const frontier = await openFrontier(redis, config);
    const { report } = await loadSeeds(frontier, { file: seedFile(["# nothing yet"]), scope: "any", maxUrlLength: 2048, stripParams: [] });
    expect(report).toEqual({ read: 0, accepted: 0, rejected: 0, otherShards: 0 });
    expect(await frontier.hasScope()).toBe(true);
  });
});
