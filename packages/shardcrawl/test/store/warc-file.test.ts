import { spawn } from "node:child_process";
import { createReadStream } from "node:fs";
import { readdir, readFile, stat } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";
import { CDXIndexer } from "warcio";
import { AppendFile, StoreWriteError } from "../../src/store/append-file.js";
import { StoreBusyError } from "../../src/store/serial-queue.js";
import { buildPageRecords } from "../../src/store/warc-record.js";
import { type FinishedWarcFile, type WarcLocation, WarcFileWriter } from "../../src/store/warc-file.js";
import { verifyWarcFile } from "../../src/store/warc-reader.js";
import { html, page, prng, randomBytes, readWithWarcio, referenceSha1Base32, tempDir, varietyPages } from "./helpers.js";
import type { FetchedPage } from "../../src/shared/types.js";

const WARCINFO = { software: "shardcrawl/test", operator: "tests", robots: "obey" };

/** Pages of mixed size and type, deterministic. */
function manyPages(n: number, seed: number): FetchedPage[] {
  const rand = prng(seed);
  const out: FetchedPage[] = [];
  for (let i = 0; i < n; i++) {
    const binary = rand() < 0.3;
    const body = binary ? randomBytes(rand, Math.floor(rand() * 6000)) : html(rand, 1 + Math.floor(rand() * 20));
    out.push(
      page({
        url: `http://h${i % 7}.example.com/p/${i}?b=${i}&a=1`,
        host: `h${i % 7}.example.com`,
        fetchedAt: new Date(Date.UTC(2024, 4, 6, 7, 8, 9) + i * 1234).toISOString(),
        body,
        headers: [["Content-Type", binary ? "application/octet-stream" : "text/html; charset=utf-8"], ["Content-Length", String(body.length)]],
      }),
    );
  }
  return out;
}

async function cdxjOf(path: string): Promise<string[]> {
  return (await readFile(path, "utf8")).split("\n").filter((l) => l !== "");
}

describe("WarcFileWriter", () => {
  test("writes every kind of page; warcio reads the file completely and the CDXJ matches warcio's indexer", async () => {
    const dir = await tempDir("writer");
    const finished: FinishedWarcFile[] = [];
    const writer = new WarcFileWriter({ dir, prefix: "crawl", maxFileBytes: 1 << 30, warcinfo: WARCINFO, onFileFinished: (f) => finished.push(f) });
    const pages = varietyPages();
    const locations: WarcLocation[] = [];
    for (const p of pages) locations.push(await writer.append(buildPageRecords(p, { warcinfoId: writer.warcinfoId })));
    await writer.close();

    expect(finished).toHaveLength(1);
    const f = finished[0]!;
    expect(f.name).toMatch(new RegExp(`^crawl-\\d{14}-${process.pid}-\\d{5}\\.warc\\.gz$`));
    expect((await readdir(dir)).sort()).toEqual([f.name.replace(/\.warc\.gz$/, ".cdxj"), f.name].sort());
    expect(locations.every((l) => l.file === f.name)).toBe(true);

    const records = await readWithWarcio(f.path);
    expect(records.map((r) => r.type)).toEqual(["warcinfo", ...pages.flatMap(() => ["request", "response"])]);
    const infoId = records[0]!.warc.get("WARC-Record-ID");
    expect(records[0]!.warc.get("WARC-Filename")).toBe(f.name);
    pages.forEach((p, i) => {
      const resp = records[2 + 2 * i]!;
      expect(resp.warc.get("WARC-Warcinfo-ID")).toBe(infoId);
      expect(resp.payload.equals(p.body)).toBe(true);
      expect(resp.warc.get("WARC-Payload-Digest")).toBe(referenceSha1Base32(resp.payload));
      expect(resp.offset).toBe(locations[i]!.offset);
    });

    // Our index equals the one warcio's CDXJ indexer builds from the file.
    const indexer = new CDXIndexer({ format: "cdxj" });
    const theirs: string[] = [];
    for await (const row of indexer.iterIndex([{ filename: f.name, reader: createReadStream(f.path) }])) {
      theirs.push(indexer.serializeCDXJ(row).trimEnd());
    }
    const ours = await cdxjOf(f.cdxjPath);
    expect(ours).toHaveLength(pages.length);
    expect(ours).toEqual([...ours].sort());
    expect(ours).toEqual(theirs.sort());
    expect(ours.some((l) => l.startsWith("com,pcmag)/join/0,,,00.asp 20240506070809 {"))).toBe(true);
    expect(ours.some((l) => l.startsWith("com,example)/search?a=1&q=b "))).toBe(true);

    // Every CDXJ offset/length is a byte range warcio can read on its own: exactly that response.
    for (const line of ours) {
      const j = JSON.parse(line.slice(line.indexOf("{"))) as Record<string, string>;
      const start = Number(j["offset"]);
      const got = await readWithWarcio(f.path, { start, end: start + Number(j["length"]) - 1 });
      expect(got).toHaveLength(1);
      expect(got[0]!.type).toBe("response");
      expect(got[0]!.warc.get("WARC-Target-URI")).toBe(j["url"]);
      expect(got[0]!.warc.get("WARC-Payload-Digest")).toBe(`sha1:${j["digest"]}`);
    }
    expect((await verifyWarcFile(f.path)).ok).toBe(true);
  });

  test("rotates by size: every file opens with its own warcinfo, records name it, all pages kept in order", async () => {
    const dir = await tempDir("rotate");
    const finished: FinishedWarcFile[] = [];
    const maxFileBytes = 20_000;
    const writer = new WarcFileWriter({ dir, prefix: "rot", maxFileBytes, warcinfo: WARCINFO, onFileFinished: (f) => finished.push(f) });
    const pages = manyPages(60, 3);
    let largest = 0;
    // Four pages are built against the same warcinfo ID and appended together, like parser
    // workers finishing concurrently across a rotation.
    for (let i = 0; i < pages.length; i += 4) {
      const warcinfoId = writer.warcinfoId;
      const built = pages.slice(i, i + 4).map((p) => buildPageRecords(p, { warcinfoId }));
      largest = Math.max(largest, ...built.map((b) => b.data.length));
      await Promise.all(built.map((b) => writer.append(b)));
    }
    await writer.close();
    expect(writer.stats.staleWarcinfoRefs).toBe(0);
    expect(finished.length).toBeGreaterThan(3);

    const names = finished.map((f) => f.name);
    expect([...names].sort()).toEqual(names); // names sort in creation order
    expect(new Set(names).size).toBe(names.length);
    expect((await readdir(dir)).filter((n) => n.endsWith(".open"))).toEqual([]);

    const seenUrls: string[] = [];
    for (const [k, f] of finished.entries()) {
      const size = (await stat(f.path)).size;
      if (k < finished.length - 1) expect(size).toBeGreaterThanOrEqual(maxFileBytes);
      expect(size).toBeLessThan(maxFileBytes + 4 * largest);
      const records = await readWithWarcio(f.path);
      expect(records[0]!.type).toBe("warcinfo");
      expect(records[0]!.warc.get("WARC-Filename")).toBe(f.name);
      const infoId = records[0]!.warc.get("WARC-Record-ID");
      for (const r of records.slice(1)) expect(r.warc.get("WARC-Warcinfo-ID")).toBe(infoId);
      seenUrls.push(...records.filter((r) => r.type === "response").map((r) => r.warc.get("WARC-Target-URI")!));
      expect(await cdxjOf(f.cdxjPath)).toHaveLength(f.responses);
    }
    expect(seenUrls).toEqual(pages.map((p) => p.url));
  });

  test("appends made together share one write (group commit); each resolves with its own record's location", async () => {
    const dir = await tempDir("group");
    const writer = new WarcFileWriter({ dir, prefix: "grp", maxFileBytes: 1 << 30, warcinfo: WARCINFO });
    const pages = manyPages(10, 11);
    const built = pages.map((p) => buildPageRecords(p, { warcinfoId: writer.warcinfoId }));
    const locations = await Promise.all(built.map((b) => writer.append(b)));
    expect(writer.stats.writes).toBe(1);
    locations.push(await writer.append(buildPageRecords(pages[0]!, { warcinfoId: writer.warcinfoId })));
    expect(writer.stats.writes).toBe(2);
    const finished = await writer.close();
    const file = await readFile(finished!.path);
    // Every location is the response member of its own page, readable alone (what CDXJ replay does).
    locations.forEach((l, i) => {
      const member = gunzipSync(file.subarray(l.offset, l.offset + l.length)).toString("latin1");
      expect(member).toContain(`\r\nWARC-Target-URI: ${pages[i % pages.length]!.url}\r\n`);
      expect(member).toContain("WARC-Type: response");
    });
    const records = await readWithWarcio(finished!.path);
    expect(records.filter((r) => r.type === "response").map((r) => r.warc.get("WARC-Target-URI"))).toEqual([...pages, pages[0]!].map((p) => p.url));
    expect(await cdxjOf(finished!.cdxjPath)).toHaveLength(11);
  });

  test("appends still waiting for their batch are written before a rotate or close called after them", async () => {
    const dir = await tempDir("group-order");
    const writer = new WarcFileWriter({ dir, prefix: "go", maxFileBytes: 1 << 30, warcinfo: WARCINFO });
    const pages = manyPages(6, 12);
    const first = pages.slice(0, 3).map((p) => writer.append(buildPageRecords(p, { warcinfoId: writer.warcinfoId })));
    const rotated = writer.rotate();
    const [locations, file] = await Promise.all([Promise.all(first), rotated]);
    expect(file!.responses).toBe(3);
    expect(locations.every((l) => l.file === file!.name)).toBe(true);
    const second = pages.slice(3).map((p) => writer.append(buildPageRecords(p, { warcinfoId: writer.warcinfoId })));
    const closed = writer.close();
    const [later, last] = await Promise.all([Promise.all(second), closed]);
    expect(last!.name).not.toBe(file!.name);
    expect(later.every((l) => l.file === last!.name)).toBe(true);
    expect((await readWithWarcio(last!.path)).filter((r) => r.type === "response")).toHaveLength(3);
  });

  test("a batch that crosses a rotation lands in the same files as the same appends made one by one", async () => {
    async function run(together: boolean): Promise<{ files: number[]; stale: number; writes: number }> {
      const dir = await tempDir(together ? "rot-batch" : "rot-seq");
      const writer = new WarcFileWriter({ dir, prefix: "rb", maxFileBytes: 15_000, warcinfo: WARCINFO, gzipLevel: 0 });
      const pages = manyPages(48, 4);
      const locations: WarcLocation[] = [];
      for (let i = 0; i < pages.length; i += 6) {
        const warcinfoId = writer.warcinfoId;
        // The last page of each group names no warcinfo the writer knows about yet: a stale reference.
        const built = pages.slice(i, i + 6).map((p, k) => buildPageRecords(p, { warcinfoId: k === 5 ? "urn:uuid:00000000-0000-4000-8000-00000000000f" : warcinfoId, gzipLevel: 0 }));
        if (together) locations.push(...(await Promise.all(built.map((b) => writer.append(b)))));
        else for (const b of built) locations.push(await writer.append(b));
      }
      await writer.close();
      const names = [...new Set(locations.map((l) => l.file))];
      for (const n of names) expect((await verifyWarcFile(join(dir, n))).errors).toEqual([]);
      return { files: locations.map((l) => names.indexOf(l.file)), stale: writer.stats.staleWarcinfoRefs, writes: writer.stats.writes };
    }
    const seq = await run(false);
    const batched = await run(true);
    expect(batched.files).toEqual(seq.files);
    expect(batched.stale).toBe(seq.stale);
    expect(new Set(seq.files).size).toBeGreaterThan(3);
    expect(batched.writes).toBeLessThan(seq.writes);
  });

  test("the index of the open file is bounded too: maxIndexEntries rotates the file", async () => {
    const dir = await tempDir("entries");
    const writer = new WarcFileWriter({ dir, prefix: "ent", maxFileBytes: 1 << 30, warcinfo: WARCINFO, maxIndexEntries: 3 });
    const locations: WarcLocation[] = [];
    for (const p of manyPages(7, 9)) locations.push(await writer.append(buildPageRecords(p, { warcinfoId: writer.warcinfoId })));
    await writer.close();
    const perFile = new Map<string, number>();
    for (const l of locations) perFile.set(l.file, (perFile.get(l.file) ?? 0) + 1);
    expect([...perFile.values()]).toEqual([3, 3, 1]);
  });

  test("an append beyond the queue bound is refused with StoreBusyError; the others are written", async () => {
    const dir = await tempDir("busy");
    const writer = new WarcFileWriter({ dir, prefix: "busy", maxFileBytes: 1 << 30, warcinfo: WARCINFO, maxQueuedBytes: 50_000 });
    const built = manyPages(40, 5).map((p) => buildPageRecords(p));
    const results = await Promise.allSettled(built.map((b) => writer.append(b)));
    const finished = await writer.close();
    const refused = results.filter((r) => r.status === "rejected");
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect((r as PromiseRejectedResult).reason).toBeInstanceOf(StoreBusyError);
    const records = await readWithWarcio(finished!.path);
    expect(records.filter((r) => r.type === "response")).toHaveLength(results.length - refused.length);
  });

  test("records that crossed a worker boundary (structured clone: Buffers become Uint8Arrays) append fine", async () => {
    const dir = await tempDir("clone");
    const writer = new WarcFileWriter({ dir, prefix: "clone", maxFileBytes: 1 << 30, warcinfo: WARCINFO });
    const p = varietyPages()[0]!;
    // The page travels to the worker and the records travel back, both by structured clone.
    const built = structuredClone(buildPageRecords(structuredClone(p), { warcinfoId: writer.warcinfoId }));
    expect(Buffer.isBuffer(built.data)).toBe(false);
    const loc = await writer.append(built);
    const f = (await writer.close())!;
    const got = await readWithWarcio(f.path, { start: loc.offset, end: loc.offset + loc.length - 1 });
    expect(got[0]!.payload.equals(p.body)).toBe(true);
  });

  test("bad appends and appends after close are clear errors", async () => {
    const dir = await tempDir("bad");
    const writer = new WarcFileWriter({ dir, prefix: "bad", maxFileBytes: 1000, warcinfo: WARCINFO });
    await expect(writer.append({ data: Buffer.alloc(0) })).rejects.toThrow(/non-empty/);
    await expect(writer.append({ data: Buffer.alloc(10), responseOffset: 5, responseLength: 10 })).rejects.toThrow(/outside/);
    expect(() => new WarcFileWriter({ dir, prefix: "../x", maxFileBytes: 1000, warcinfo: WARCINFO })).toThrow(/prefix/);
    expect(() => new WarcFileWriter({ dir, prefix: "ok", maxFileBytes: 0, warcinfo: WARCINFO })).toThrow(/maxFileBytes/);
    expect(await writer.close()).toBeNull();
    await expect(writer.append(buildPageRecords(page()))).rejects.toThrow(/closed/);
  });
});

describe("write failures", () => {
  test("a write to a full device (/dev/full) rejects with StoreWriteError ENOSPC, and keeps rejecting cleanly", async () => {
    const f = await AppendFile.create("/dev/full", { exclusive: false });
    const err = await f.append(Buffer.from("record")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreWriteError);
    expect((err as StoreWriteError).code).toBe("ENOSPC");
    expect((err as StoreWriteError).message).toMatch(/write failed on \/dev\/full: ENOSPC/);
    await expect(f.append(Buffer.from("again"))).rejects.toBeInstanceOf(StoreWriteError);
    await f.abandon();
  });

  test.each([1, 4])("a WARC writer hitting the file size limit (ulimit -f) reports EFBIG, rolls back, and leaves a valid file (%i appends at a time)", async (together) => {
    const dir = await tempDir("full");
    const child = fileURLToPath(new URL("./fixtures/write-until-full.mjs", import.meta.url));
    const src = fileURLToPath(new URL("../../src/store", import.meta.url));
    const out = await new Promise<string>((resolve, reject) => {
      // ulimit -f counts 1024-byte blocks: 64 KiB per file.
      const proc = spawn("bash", ["-c", 'ulimit -f 64 && exec "$0" "$@"', process.execPath, child, src, dir, String(together)], { stdio: ["ignore", "pipe", "pipe"] });
      let stdout = "";
      let stderr = "";
      const timer = setTimeout(() => proc.kill("SIGKILL"), 60_000);
      proc.stdout.on("data", (d: Buffer) => (stdout += d.toString()));
      proc.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
      proc.on("error", reject);
      proc.on("close", (code) => {
        clearTimeout(timer);
        if (code === 0) resolve(stdout);
        else reject(new Error(`child exited ${code}: ${stderr}`));
      });
    });
    const result = JSON.parse(out) as { name: string; code: string; message: string; rolledBack: boolean; written: number; path: string };
    expect(result.name).toBe("StoreWriteError");
    expect(result.code).toBe("EFBIG");
    expect(result.rolledBack).toBe(true);
    expect(result.message).toMatch(/pause output and retry/);
    // The child closed the writer after the failure: the finished file holds exactly the appends that succeeded.
    const records = await readWithWarcio(result.path);
    expect(records[0]!.type).toBe("warcinfo");
    expect(records.filter((r) => r.type === "response")).toHaveLength(result.written);
    expect((await verifyWarcFile(result.path)).ok).toBe(true);
    expect(await cdxjOf(result.path.replace(/\.warc\.gz$/, ".cdxj"))).toHaveLength(result.written);
  });
});
