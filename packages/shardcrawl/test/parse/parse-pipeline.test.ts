// The parser's stages without a parser process: a real redis-server and frontier, the inline parse
// runner, real WARC, page-log and outbox files. One fetched page goes take > parse > write > route
// > ack; its links end where the admission chain sends them (own frontier, another node's outbox,
// out of scope), and the counters say so.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../../../../test/harness/redis.js";
import { Frontier } from "../../src/frontier/index.js";
import { NodeFrontier } from "../../src/node/open-frontier.js";
import { parseRunner } from "../../src/parse/parse-runner.js";
import { ParsePipeline } from "../../src/parse/parse-pipeline.js";
import { PageOutput } from "../../src/parse/page-output.js";
import { LinkRouter } from "../../src/parse/route-links.js";
import type { WorkerSetup } from "../../src/parse/worker.js";
import { BatchAdmission, processAdmissionCounts, scopeSpecOf } from "../../src/admit/index.js";
import { ShardRouter, equalNodes } from "../../src/shard/shard-spec.js";
import { OutboxWriter } from "../../src/shard/outbox-writer.js";
import { readOutboxFile } from "../../src/shard/outbox-reader.js";
import { outboxDir } from "../../src/shard/outbox-format.js";
import { PageLogWriter } from "../../src/store/page-log.js";
import { WarcFileWriter } from "../../src/store/warc-file.js";
import { WriteBudget } from "../../src/store/write-budget.js";
import { isDiskFull } from "../../src/node/disk-pause.js";
import { page } from "../frontier/helpers.js";

let server: TestRedis;
let out: string;
beforeAll(async () => {
  server = await startRedis();
  out = mkdtempSync(join(tmpdir(), "parse-pipeline-"));
});
afterAll(async () => {
  await server.stop();
  rmSync(out, { recursive: true, force: true });
});

describe("parse pipeline stages", () => {
  it("a page's links: own ones acked into the frontier, others' to the outbox, out-of-scope counted", async () => {
    const redis = server.client();
    const frontier = await Frontier.open(redis, { prefix: "pp:", delayMs: 0, bloom: { expectedUrls: 10_000, falsePositiveRate: 0.01 } });
    const nf = new NodeFrontier(frontier);
    const router = new ShardRouter({ self: "node0", nodes: equalNodes(2), key: "domain" });
    // Hosts in scope (seed domains), one owned by each node, and one out of scope.
    const domains = Array.from({ length: 40 }, (_, i) => `d${i}.test`);
    const mine = domains.find((d) => router.ownsHost(d))!;
    const theirs = domains.find((d) => !router.ownsHost(d))!;
    const seed = `http://${mine}/`;
    await nf.addSeeds([seed], Date.now());
    const { leases } = await nf.lease(1, Date.now());
    expect(leases.map((l) => l.url)).toEqual([seed]);
    const html = `<html><body><a href="/own">own</a><a href="http://www.${theirs}/theirs">theirs</a><a href="http://elsewhere.example/out">out</a></body></html>`;
    expect(await nf.completeWithPage(leases[0]!, Date.now(), page(seed, html))).not.toBeNull();

    const setup: WorkerSetup = {
      userAgent: "shardcrawl/0.1", maxLinksPerPage: 100, maxUrlLength: 2048, maxDecodedBytes: 1 << 20, honourNofollow: true, maxRedirects: 5,
      gzipLevel: 1, warcinfoId: "<urn:uuid:00000000-0000-0000-0000-000000000000>", scope: scopeSpecOf([seed, `http://${theirs}/`], "domains"),
      bloom: frontier.bloom, priorityRules: [], spoolDir: join(out, "spool"), hashLinks: false,
    };
    const runner = await parseRunner(setup, 0);
    const warc = new WarcFileWriter({ dir: join(out, "warc"), prefix: "t-p0", maxFileBytes: 1 << 20, warcinfo: { software: "test" } });
    const pageLog = new PageLogWriter({ dir: join(out, "pages"), prefix: "t-p0", maxFileBytes: 1 << 20 });
    const outbox = new OutboxWriter({ out, writer: "t-p0", maxFileBytes: 1 << 20, dedupEntries: 1000, maxFileAgeMs: 60_000 });
    const stats = new Map<string, number>();
    processAdmissionCounts.take();
    const pipeline = new ParsePipeline({
      queue: {
        take: (max, blockMs) => nf.takePages("t-p0", max, blockMs),
        ack: (id, links, error) => nf.ackPage("t-p0", id, links, { error }),
        refetch: (id) => nf.refetchPage("t-p0", id),
        takeSeenCacheHits: () => nf.takeSeenCacheHits(),
        unknownLinks: (links) => nf.unknownLinks(links),
      },
      runner,
      output: new PageOutput({ warc, warcinfoId: warc.warcinfoId, pageLog, derivatives: false, nodeName: "node0", recrawl: null, spoolDir: setup.spoolDir, log: () => undefined }),
      router: new LinkRouter(new BatchAdmission({ router }), outbox),
      budget: new WriteBudget(1 << 20), pageLog, stats: { add: (f, n) => stats.set(f, (stats.get(f) ?? 0) + n) },
      maxInFlight: 4, threaded: false, keepPage: false, isDiskFull, onDiskFull: () => Promise.resolve(),
      log: () => undefined, sleep: (ms) => new Promise((r) => setTimeout(r, ms)), isStopping: () => false, stopRequested: new Promise(() => undefined),
    });

    // take > parse > (write > route > ack)
    const [taken] = await nf.takePages("t-p0", 1, 100);
    if (!taken?.page) throw new Error("no page taken");
    const parsed = await pipeline.parse(taken.id, taken.page, taken.spool);
    if (parsed === "lost") throw new Error("the body was lost");
    expect(parsed.line).toMatchObject({ url: seed, status: 200, outlinks: 2 });
    await pipeline.finish(parsed);
    await warc.close();
    await pageLog.close();
    await outbox.close();

    // Own link queued here (and nothing else), the other node's link in its outbox.
    const next = await nf.lease(10, Date.now() + 1000);
    expect(next.leases.map((l) => l.url)).toEqual([`http://${mine}/own`]);
    const dir = outboxDir(out, "node1");
    const files = readdirSync(dir).filter((f) => f.endsWith(".urls.gz"));
    const routed: string[] = [];
    for (const f of files) for await (const batch of readOutboxFile(join(dir, f), { lines: 0, rejected: [] })) routed.push(...batch.map((l) => l.url));
    expect(routed).toEqual([`http://www.${theirs}/theirs`]);
    // The page log has the page, with its WARC location.
    const logFile = readdirSync(join(out, "pages")).find((f) => f.endsWith(".jsonl"))!;
    const lines = readFileSync(join(out, "pages", logFile), "utf8").trim().split("\n").map((l) => JSON.parse(l) as { url: string; warc?: unknown });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ url: seed, warc: expect.anything() });
    // Counters: one out of scope (the chain's scope filter, counted under its name), one routed.
    expect(Object.fromEntries(stats)).toMatchObject({ outOfScope: 1, "admit:scope": 1, "admit:shard": 1, outboxLinks: 1 });
    // The page was acknowledged: nothing left in flight.
    expect((await nf.stats()).parseInFlight).toBe(0);
    await runner.destroy();
    redis.disconnect();
  });
});
