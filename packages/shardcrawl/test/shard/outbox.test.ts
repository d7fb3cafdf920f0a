// Outbox files and ingest, with a real redis-server: links owned by other nodes are written,
// deduplicated, rotated and finished; a file cut by a crash still yields its complete lines; ingest
// adds new URLs, lets the Bloom filter drop seen ones, and re-routes URLs this node does not own.
import { appendFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, truncateSync, statSync, writeFileSync } from "node:fs";
import { gunzipSync, gzipSync } from "node:zlib";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../../../../test/harness/redis.js";
import { OutboxWriter, finishAbandonedOutboxFiles } from "../../src/shard/outbox-writer.js";
import { readOutboxFile, type ReadReport } from "../../src/shard/outbox-reader.js";
import { emptyIngestReport, ingestFile, ingestInbox } from "../../src/shard/ingest.js";
import { ShardRouter, equalNodes } from "../../src/shard/shard-spec.js";
import { outboxDir, inboxDir, OUTBOX_SUFFIX, type OutboxLink } from "../../src/shard/outbox-format.js";
import { openFrontier } from "../../src/node/open-frontier.js";
import { inflateMember } from "../../src/store/warc-reader.js";
import { StoreWriteError } from "../../src/store/append-file.js";
import { defaultConfig } from "../../src/node/config.js";

async function readAll(path: string): Promise<{ links: OutboxLink[]; report: ReadReport }> {
  const report: ReadReport = { lines: 0, rejected: [] };
  const links: OutboxLink[] = [];
  for await (const b of readOutboxFile(path, report, 7)) links.push(...b);
  return { links, report };
}

function filesIn(dir: string, suffix = OUTBOX_SUFFIX): string[] {
  return existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith(suffix)).map((f) => join(dir, f)) : [];
}

describe("outbox writer and reader", () => {
  it("writes one gzip member per batch, drops duplicates, rotates by size and finishes on close", async () => {
    const out = mkdtempSync(join(tmpdir(), "sc-outbox-"));
    const w = new OutboxWriter({ out, writer: "node0-p0", maxFileBytes: 200, dedupEntries: 1000 });
    const urls = Array.from({ length: 60 }, (_, i) => ({ url: `https://b${i % 30}.test/p/${i}`, depth: i % 4 }));
    for (let i = 0; i < urls.length; i += 10) await w.append("node1", urls.slice(i, i + 10));
    await w.append("node1", urls.slice(0, 10)); // all seen before
    expect(filesIn(outboxDir(out, "node1"), ".open").length).toBeLessThanOrEqual(1);
    await w.close();
    const files = filesIn(outboxDir(out, "node1"));
    expect(files.length).toBeGreaterThan(1); // rotated
    expect(filesIn(outboxDir(out, "node1"), ".open")).toEqual([]);
    const got: OutboxLink[] = [];
    for (const f of files.sort()) got.push(...(await readAll(f)).links);
    expect(got.map((l) => l.url).sort()).toEqual(urls.map((u) => u.url).sort());
    expect(got.find((l) => l.url === urls[7]!.url)!.depth).toBe(urls[7]!.depth);
    expect(w.stats).toMatchObject({ written: 60, duplicates: 10 });
    // Standard tools read it: gunzip of the whole multi-member file gives the lines.
    expect(gunzipSync(readFileSync(files[0]!)).toString()).toMatch(/^https:\/\/b0\.test\/p\/0\t0\n/);
  });

  it("reads every complete line of a file cut by a crash, and reports bad lines by number", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-outbox-cut-"));
    const f = join(dir, `x${OUTBOX_SUFFIX}`);
    writeFileSync(f, gzipSync("https://a.test/1\t1\nhttps://a.test/2\tdeep\n\t3\n"));
    appendFileSync(f, gzipSync("https://a.test/3\t2\nhttps://a.test/4\t2\n"));
    const full = statSync(f).size;
    truncateSync(f, full - 12);
    const { links, report } = await readAll(f);
    // The first member whole; of the cut one, at most the complete lines that were written.
    expect(links[0]!.url).toBe("https://a.test/1");
    for (const l of links) expect(["https://a.test/1", "https://a.test/3"]).toContain(l.url);
    expect(report.rejected.map((r) => r.line)).toEqual([2, 3]);
    expect(report.damaged).toBeTruthy();
  });

  it("finishes files older than maxFileAgeMs, so a long-running node hands links over", async () => {
    const out = mkdtempSync(join(tmpdir(), "sc-outbox-age-"));
    const w = new OutboxWriter({ out, writer: "node0-p0", maxFileBytes: 1 << 20, dedupEntries: 10, maxFileAgeMs: 60_000 });
    await w.append("node1", [{ url: "https://d.test/", depth: 1 }]);
    await w.finishOld(Date.now() + 1000);
    expect(filesIn(outboxDir(out, "node1"))).toEqual([]);
    await w.finishOld(Date.now() + 61_000);
    expect(filesIn(outboxDir(out, "node1")).length).toBe(1);
    expect(filesIn(outboxDir(out, "node1"), ".open")).toEqual([]);
  });

  it("with group commit, writes many pages' batches for a node as one member and settles each page when it is written", async () => {
    const out = mkdtempSync(join(tmpdir(), "sc-outbox-group-"));
    const w = new OutboxWriter({ out, writer: "node0-p0", maxFileBytes: 1 << 20, dedupEntries: 1000, groupCommitMs: 100 });
    // 40 pages at once, each with links for two nodes; some URLs repeat across pages.
    const pages = Array.from({ length: 40 }, (_, p) => ({
      node1: [{ url: `https://a.test/p/${p}`, depth: 1 }, { url: `https://a.test/shared/${p % 5}`, depth: 2 }],
      node2: [{ url: `https://b.test/p/${p}`, depth: 1 }],
    }));
    let settled = 0;
    const done = pages.map((pg) => Promise.all([w.append("node1", pg.node1), w.append("node2", pg.node2)]).then(() => settled++));
    // Nothing is written before the group's time: no page may be acknowledged yet.
    await new Promise((r) => setTimeout(r, 20));
    expect(settled).toBe(0);
    expect(filesIn(outboxDir(out, "node1"), ".open")).toEqual([]);
    await Promise.all(done);
    expect(settled).toBe(40);
    // Written before close(): the open file already holds one member with every link of the group.
    const open1 = filesIn(outboxDir(out, "node1"), ".open");
    expect(open1.length).toBe(1);
    const buf = readFileSync(open1[0]!);
    const member = inflateMember(buf, 0, 1 << 20);
    expect(member.kind).toBe("ok");
    if (member.kind !== "ok") return;
    expect(member.end).toBe(buf.length);
    expect(member.data.toString().trim().split("\n").length).toBe(45); // 40 pages + 5 shared URLs
    expect(w.stats).toMatchObject({ written: 85, duplicates: 35 });
    // A later page's URL already written is a duplicate and waits for nothing.
    await w.append("node1", [{ url: "https://a.test/p/0", depth: 1 }]);
    expect(w.stats.duplicates).toBe(36);
    await w.close();
    const got = (await readAll(filesIn(outboxDir(out, "node2"))[0]!)).links;
    expect(got.map((l) => l.url).sort()).toEqual(pages.map((pg) => pg.node2[0]!.url).sort());
  });

  it("with group commit, a failed write fails every page of the group, and their URLs are written again when retried", async () => {
    const out = mkdtempSync(join(tmpdir(), "sc-outbox-group-fail-"));
    const w = new OutboxWriter({ out, writer: "node0-p0", maxFileBytes: 1 << 20, dedupEntries: 1000, groupCommitMs: 20 });
    await w.append("node1", [{ url: "https://a.test/first", depth: 1 }]);
    await w.close();
    // The destination's folder is replaced by a file: the next group cannot open its file there.
    const dir = outboxDir(out, "node1");
    renameSync(dir, `${dir}.aside`);
    writeFileSync(dir, "not a folder");
    const results = await Promise.allSettled([0, 1, 2].map((i) => w.append("node1", [{ url: `https://a.test/${i}`, depth: 1 }])));
    for (const r of results) {
      expect(r.status).toBe("rejected");
      if (r.status === "rejected") expect(r.reason).toBeInstanceOf(StoreWriteError);
    }
    expect(w.stats.written).toBe(1);
    rmSync(dir);
    renameSync(`${dir}.aside`, dir);
    // Retried pages: their URLs were never taken for written, so they are written now.
    await Promise.all([0, 1, 2].map((i) => w.append("node1", [{ url: `https://a.test/${i}`, depth: 1 }])));
    await w.close();
    expect(w.stats.written).toBe(4);
    const urls: string[] = [];
    for (const f of filesIn(dir).sort()) urls.push(...(await readAll(f)).links.map((l) => l.url));
    expect(urls.sort()).toEqual(["https://a.test/0", "https://a.test/1", "https://a.test/2", "https://a.test/first"]);
  });

  it("finishes .open files a crash left behind", async () => {
    const out = mkdtempSync(join(tmpdir(), "sc-outbox-open-"));
    const w = new OutboxWriter({ out, writer: "node0-p0", maxFileBytes: 1 << 20, dedupEntries: 10 });
    await w.append("node2", [{ url: "https://c.test/", depth: 0 }]);
    // no close(): the process "died"
    expect(finishAbandonedOutboxFiles(out)).toBe(1);
    expect((await readAll(filesIn(outboxDir(out, "node2"))[0]!)).links).toEqual([{ url: "https://c.test/", depth: 0 }]);
  });
});

describe("ingest into a real frontier", () => {
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

  it("adds new URLs once, drops seen ones, and re-routes URLs another node owns", async () => {
    const out = mkdtempSync(join(tmpdir(), "sc-ingest-"));
    const config = { ...defaultConfig(), out, prefix: "ing:", expectedUrls: 10_000 };
    const frontier = await openFrontier(client, config);
    const router = new ShardRouter({ self: "node0", nodes: equalNodes(3), key: "domain" });
    const hosts = Array.from({ length: 30 }, (_, i) => `h${i}.test`);
    const mine = hosts.filter((h) => router.ownsHost(h));
    const theirs = hosts.filter((h) => !router.ownsHost(h));
    expect(mine.length).toBeGreaterThan(3);
    expect(theirs.length).toBeGreaterThan(3);

    // node1 wrote these for node0 (plus URLs that are not node0's: a stale cluster view).
    const src = mkdtempSync(join(tmpdir(), "sc-ingest-src-"));
    const w = new OutboxWriter({ out: src, writer: "node1-p0", maxFileBytes: 1 << 20, dedupEntries: 1000 });
    await w.append("node0", [...mine, ...theirs].map((h) => ({ url: `https://${h}/a`, depth: 2 })));
    await w.append("node0", [{ url: "not a url", depth: 1 }]);
    await w.close();
    const file = filesIn(outboxDir(src, "node0"))[0]!;

    const own = new OutboxWriter({ out, writer: "node0-ingest", maxFileBytes: 1 << 20, dedupEntries: 1000 });
    const report = emptyIngestReport();
    await ingestFile({ frontier, router, outbox: own, maxUrlLength: 2048 }, file, report);
    expect(report).toMatchObject({ files: 1, added: mine.length, seen: 0, rerouted: theirs.length, invalid: 1 });
    expect((await frontier.stats()).queued).toBe(mine.length);

    // The same file again (an exchange repeated after a crash): nothing new.
    const again = emptyIngestReport();
    await ingestFile({ frontier, router, outbox: own, maxUrlLength: 2048 }, file, again);
    expect(again).toMatchObject({ added: 0, seen: mine.length });
    await own.close();
    // The re-routed URLs wait in node0's outbox for their real owners.
    const rerouted: string[] = [];
    for (const dest of readdirSync(outboxDir(out))) {
      for (const f of filesIn(outboxDir(out, dest))) {
        for (const l of (await readAll(f)).links) {
          expect(router.ownerOfHost(new URL(l.url).hostname)).toBe(dest);
          rerouted.push(l.url);
        }
      }
    }
    expect(rerouted.sort()).toEqual(theirs.map((h) => `https://${h}/a`).sort());
  });

  it("ingests the inbox and moves its files to inbox/done", async () => {
    const out = mkdtempSync(join(tmpdir(), "sc-inbox-"));
    const frontier = await openFrontier(client, { ...defaultConfig(), out, prefix: "inb:", expectedUrls: 10_000 });
    const src = mkdtempSync(join(tmpdir(), "sc-inbox-src-"));
    const w = new OutboxWriter({ out: src, writer: "node2-p0", maxFileBytes: 1 << 20, dedupEntries: 1000 });
    await w.append("node0", [{ url: "https://x.test/1", depth: 1 }, { url: "https://x.test/2", depth: 1 }]);
    await w.close();
    const { mkdirSync, renameSync } = await import("node:fs");
    mkdirSync(inboxDir(out), { recursive: true });
    const f = filesIn(outboxDir(src, "node0"))[0]!;
    renameSync(f, join(inboxDir(out), "a" + OUTBOX_SUFFIX));
    const report = emptyIngestReport();
    expect(await ingestInbox({ frontier, maxUrlLength: 2048 }, out, report)).toBe(1);
    expect(report.added).toBe(2);
    expect(filesIn(inboxDir(out))).toEqual([]);
    expect(filesIn(join(inboxDir(out), "done")).length).toBe(1);
  });
});
