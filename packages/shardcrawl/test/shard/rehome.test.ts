// Rebalancing with a real redis-server: a node of 3 that gets a 4th neighbour moves exactly the
// queued URLs of hosts it no longer owns to its outbox for the new owner, keeps the rest, and its
// frontier gauges stay consistent; the new owner ingests them.
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../../../../test/harness/redis.js";
import { openFrontier } from "../../src/node/open-frontier.js";
import { defaultConfig } from "../../src/node/config.js";
import { OutboxWriter } from "../../src/shard/outbox-writer.js";
import { readOutboxFile, type ReadReport } from "../../src/shard/outbox-reader.js";
import { rehomeQueues } from "../../src/shard/rehome.js";
import { ShardRouter, equalNodes } from "../../src/shard/shard-spec.js";
import { outboxDir } from "../../src/shard/outbox-format.js";
import { emptyIngestReport, ingestFile } from "../../src/shard/ingest.js";

describe("rehome after adding a node", () => {
  let redis: TestRedis;
  let client: ReturnType<TestRedis["client"]>;
  beforeAll(async () => {
    redis = await startRedis();
    client = redis.client();
  });
  afterAll(async () => {
    client.disconnect();
    await redis.stop();
  });

  it("moves the queues of hosts the new node now owns, and only those", async () => {
    const out = mkdtempSync(join(tmpdir(), "sc-rehome-"));
    const config = { ...defaultConfig(), out, prefix: "rh:", expectedUrls: 100_000 };
    const frontier = await openFrontier(client, config);
    const before = new ShardRouter({ self: "node0", nodes: equalNodes(3), key: "domain" });
    const after = new ShardRouter({ self: "node0", nodes: equalNodes(4), key: "domain" });
    // node0's share under 3 nodes: 200 domains with 2 hosts each, 5 URLs per host (one off-origin
    // spelling, different depths and tiers).
    const hosts: string[] = [];
    for (let i = 0; hosts.length < 400; i++) {
      const d = `d${i}.test`;
      if (before.ownsHost(d)) hosts.push(`www.${d}`, `blog.${d}`);
    }
    const links = hosts.flatMap((h) => [0, 1, 2, 3, 4].map((k) => ({ url: k === 4 ? `http://${h}/p${k}?q=${k}` : `https://${h}/p${k}`, host: h, tier: k % 4, depth: k, hops: 0 })));
    await frontier.addLinks(links, { now: Date.now() });
    expect((await frontier.stats()).queued).toBe(2000);

    const outbox = new OutboxWriter({ out, writer: "node0-rehome", maxFileBytes: 1 << 20, dedupEntries: 100_000 });
    const report = await rehomeQueues(client, "rh:", after, outbox);
    await outbox.close();
    const leaving = hosts.filter((h) => !after.ownsHost(h));
    expect(leaving.length / hosts.length).toBeGreaterThan(0.15);
    expect(leaving.length / hosts.length).toBeLessThan(0.35);
    expect(report).toMatchObject({ hostsScanned: 400, hostsMoved: leaving.length, urlsMoved: leaving.length * 5, byOwner: { node3: leaving.length * 5 } });

    const stats = await frontier.stats();
    expect(stats.queued).toBe(2000 - leaving.length * 5);
    expect(stats.hostsQueued).toBe(400 - leaving.length);
    const ready = await client.zrange("rh:ready", 0, -1);
    for (const h of leaving) expect(ready).not.toContain(h);

    // The outbox holds exactly the moved URLs (full URLs again, depths kept), for node3.
    expect(readdirSync(outboxDir(out))).toEqual(["node3"]);
    const moved: Array<{ url: string; depth: number }> = [];
    const files = readdirSync(outboxDir(out, "node3")).map((f) => join(outboxDir(out, "node3"), f));
    for (const f of files) {
      const r: ReadReport = { lines: 0, rejected: [] };
      for await (const b of readOutboxFile(f, r)) moved.push(...b);
    }
    const expected = links.filter((l) => leaving.includes(l.host)).map((l) => ({ url: l.url, depth: l.depth }));
    expect(moved.sort((a, b) => a.url.localeCompare(b.url))).toEqual(expected.sort((a, b) => a.url.localeCompare(b.url)));

    // node3 ingests them all.
    const n3 = await openFrontier(client, { ...config, prefix: "rh3:" });
    const ing = emptyIngestReport();
    for (const f of files) await ingestFile({ frontier: n3, router: new ShardRouter({ self: "node3", nodes: equalNodes(4), key: "domain" }), maxUrlLength: 2048 }, f, ing);
    expect(ing).toMatchObject({ added: expected.length, rerouted: 0, invalid: 0 });
  });
});
