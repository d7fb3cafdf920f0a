import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import fc from "fast-check";
import { describe, expect, test } from "vitest";
import { PageLogWriter, serializePageLogLine } from "../../src/store/page-log.js";
import { repairOutputDir } from "../../src/store/repair.js";
import { StoreBusyError } from "../../src/store/serial-queue.js";
import type { PageLogLine } from "../../src/shared/types.js";
import { tempDir } from "./helpers.js";

function line(i: number, over: Partial<PageLogLine> = {}): PageLogLine {
  return {
    url: `http://example.com/p/${i}`,
    final_url: `http://example.com/p/${i}`,
    status: i % 10 === 0 ? null : 200,
    error: i % 10 === 0 ? "connect-timeout" : null,
    content_type: "text/html",
    bytes: 1000 + i,
    truncated: false,
    digest: "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ",
    fetched_at: "2024-05-06T07:08:09.123Z",
    timings: { total: 12, ttfb: 5 },
    outlinks: i % 17,
    depth: 1,
    title: `Title ${i} with "quotes", a\nnewline and \u2028 separators`,
    warc: { file: "crawl-20240506070809-1-00001.warc.gz", offset: i * 1000, length: 900 },
    ...over,
  };
}

async function readLines(path: string): Promise<PageLogLine[]> {
  const text = await readFile(path, "utf8");
  expect(text.endsWith("\n")).toBe(true);
  return text
    .slice(0, -1)
    .split("\n")
    .map((l) => JSON.parse(l) as PageLogLine);
}

describe("PageLogWriter", () => {
  test("appends JSON lines, rotates by size, finishes files under their final names", async () => {
    const dir = join(await tempDir("pages"), "pages");
    const writer = new PageLogWriter({ dir, prefix: "node1", maxFileBytes: 4000 });
    const lines = Array.from({ length: 50 }, (_, i) => line(i));
    for (const l of lines.slice(0, 40)) await writer.append(l);
    await writer.appendMany(lines.slice(40));
    const last = await writer.close();
    expect(last).not.toBeNull();
    const names = (await readdir(dir)).sort();
    expect(names.length).toBeGreaterThan(3);
    expect(names.every((n) => /^node1-\d{14}-\d+-\d{5}\.jsonl$/.test(n))).toBe(true);
    const back: PageLogLine[] = [];
    for (const n of names) back.push(...(await readLines(join(dir, n))));
    expect(back).toEqual(lines);
    // U+2028 is escaped so no line splitter breaks a record in two.
    expect((await readFile(join(dir, names[0]!), "utf8")).includes("\u2028")).toBe(false);
    expect(writer.stats).toMatchObject({ linesWritten: 50, filesFinished: names.length });
  });

  test("lines appended together share one write, in call order", async () => {
    const dir = await tempDir("pages-group");
    const writer = new PageLogWriter({ dir, prefix: "grp", maxFileBytes: 1 << 30 });
    const lines = Array.from({ length: 12 }, (_, i) => line(i));
    await Promise.all(lines.slice(0, 10).map((l) => writer.append(l)));
    expect(writer.stats.writes).toBe(1);
    await writer.appendMany(lines.slice(10));
    await writer.close();
    expect(writer.stats).toMatchObject({ writes: 2, linesWritten: 12 });
    const [name] = await readdir(dir);
    expect(await readLines(join(dir, name!))).toEqual(lines);
    // Lines still waiting for their batch go out before a close called after them.
    const dir2 = await tempDir("pages-group-close");
    const writer2 = new PageLogWriter({ dir: dir2, prefix: "grp", maxFileBytes: 1 << 30 });
    const pending = lines.map((l) => writer2.append(l));
    const closed = writer2.close();
    await Promise.all([...pending, closed]);
    expect(await readLines((await closed)!.path)).toEqual(lines);
  });

  test("over-long free text is shortened; a line that still cannot fit is a clear error", () => {
    const text = serializePageLogLine(line(1, { title: "t".repeat(100_000), error_detail: "e".repeat(100_000) }), 8192);
    expect(Buffer.byteLength(text)).toBeLessThanOrEqual(8192);
    expect((JSON.parse(text) as PageLogLine).title).toHaveLength(1025);
    expect(() => serializePageLogLine(line(1, { url: `http://example.com/${"u".repeat(20_000)}` }), 8192)).toThrow(/over the 8192-byte cap/);
  });

  test("a caller that stops awaiting hits the queue bound, not unbounded memory", async () => {
    const dir = await tempDir("pages-busy");
    const writer = new PageLogWriter({ dir, prefix: "busy", maxFileBytes: 1 << 30, maxQueuedBytes: 2000 });
    const results = await Promise.allSettled(Array.from({ length: 30 }, (_, i) => writer.append(line(i))));
    await writer.close();
    const refused = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    expect(refused.length).toBeGreaterThan(0);
    for (const r of refused) expect(r.reason).toBeInstanceOf(StoreBusyError);
    const [name] = await readdir(dir);
    expect(await readLines(join(dir, name!))).toHaveLength(30 - refused.length);
  });
});

describe("page log repair", () => {
  test("cut at random points (property): the log is cut after its last complete line and renamed", async () => {
    const src = await tempDir("pages-src");
    const writer = new PageLogWriter({ dir: src, prefix: "cut", maxFileBytes: 1 << 30 });
    const lines = Array.from({ length: 40 }, (_, i) => line(i));
    await writer.appendMany(lines);
    const finished = (await writer.close())!;
    const bytes = await readFile(finished.path);
    const lineEnds: number[] = [];
    for (let i = bytes.indexOf(0x0a); i >= 0; i = bytes.indexOf(0x0a, i + 1)) lineEnds.push(i + 1);

    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: bytes.length }), async (cut) => {
        const out = await tempDir("pages-cut");
        try {
          const pagesDir = join(out, "pages");
          await writeFile(join(out, "ignored.txt"), "x");
          await mkdir(pagesDir);
          await writeFile(join(pagesDir, `${finished.name}.open`), bytes.subarray(0, cut));
          const report = await repairOutputDir(out);
          const kept = lineEnds.filter((e) => e <= cut).length;
          expect(report.linesKept).toBe(kept);
          expect(report.bytesDropped).toBe(cut - (kept === 0 ? 0 : lineEnds[kept - 1]!));
          if (kept === 0) {
            expect(await readdir(pagesDir)).toEqual([]);
          } else {
            expect(await readdir(pagesDir)).toEqual([finished.name]);
            expect(await readLines(join(pagesDir, finished.name))).toEqual(lines.slice(0, kept));
          }
        } finally {
          await rm(out, { recursive: true, force: true });
        }
      }),
      { numRuns: 60, seed: 42 },
    );
  });
});
