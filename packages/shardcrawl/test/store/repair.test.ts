import { mkdir, readdir, readFile, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import fc from "fast-check";
import { beforeAll, describe, expect, test } from "vitest";
import { repairOutputDir } from "../../src/store/repair.js";
import { buildPageRecords } from "../../src/store/warc-record.js";
import { type FinishedWarcFile, WarcFileWriter } from "../../src/store/warc-file.js";
import { verifyWarcFile } from "../../src/store/warc-reader.js";
import { page, prng, randomBytes, readWithWarcio, tempDir, varietyPages } from "./helpers.js";

interface Original {
  bytes: Buffer;
  name: string;
  /** End offset of every gzip member (= record), in file order. */
  memberEnds: number[];
  recordIds: string[];
  /** The writer's CDXJ lines with the end offset of the member each points at. */
  index: Array<{ line: string; end: number }>;
}

let original: Original;

beforeAll(async () => {
  const dir = await tempDir("repair-src");
  let finished: FinishedWarcFile | null = null;
  const writer = new WarcFileWriter({ dir, prefix: "rep", maxFileBytes: 1 << 30, warcinfo: { software: "test" } });
  const rand = prng(11);
  const pages = [
    ...varietyPages(),
    page({ url: "http://example.com/big1", body: randomBytes(rand, 60_000), headers: [["Content-Type", "application/pdf"]] }),
    ...Array.from({ length: 8 }, (_, i) => page({ url: `http://example.com/s/${i}`, body: Buffer.from(`page ${i} `.repeat(50 + i * 30)) })),
    page({ url: "http://example.com/big2", body: randomBytes(rand, 40_000), headers: [["Content-Type", "image/jpeg"]] }),
  ];
  const memberEnds: number[] = [];
  for (const p of pages) {
    const built = buildPageRecords(p, { warcinfoId: writer.warcinfoId });
    const loc = await writer.append(built);
    const requestStart = loc.offset - built.responseOffset;
    if (memberEnds.length === 0) memberEnds.push(requestStart); // the warcinfo member
    memberEnds.push(loc.offset, loc.offset + loc.length);
  }
  finished = await writer.close();
  const bytes = await readFile(finished!.path);
  const recordIds = (await readWithWarcio(finished!.path)).map((r) => r.warc.get("WARC-Record-ID")!);
  const index = (await readFile(finished!.cdxjPath, "utf8"))
    .split("\n")
    .filter((l) => l)
    .map((line) => {
      const j = JSON.parse(line.slice(line.indexOf("{"))) as Record<string, string>;
      return { line, end: Number(j["offset"]) + Number(j["length"]) };
    });
  expect(memberEnds.at(-1)).toBe(bytes.length);
  expect(recordIds).toHaveLength(memberEnds.length);
  original = { bytes, name: finished!.name, memberEnds, recordIds, index };
});

/** Writes the first `cut` bytes as an unfinished file, repairs, and checks the result against the original. */
async function checkCut(cut: number, windowBytes: number): Promise<void> {
  const out = await tempDir("repair");
  try {
    const warcDir = join(out, "warc");
    await mkdir(warcDir);
    await writeFile(join(warcDir, `${original.name}.open`), original.bytes.subarray(0, cut));
    const report = await repairOutputDir(out, { windowBytes });
    expect(report.errors).toEqual([]);

    const kept = original.memberEnds.filter((e) => e <= cut).length;
    const keptBytes = kept === 0 ? 0 : original.memberEnds[kept - 1]!;
    expect(report.recordsKept).toBe(kept);
    expect(report.bytesDropped).toBe(cut - keptBytes);
    const finalPath = join(warcDir, original.name);
    const cdxjPath = finalPath.replace(/\.warc\.gz$/, ".cdxj");
    if (kept === 0) {
      expect(report.filesRemoved).toBe(1);
      expect(await readdir(warcDir)).toEqual([]);
      return;
    }
    expect(report.filesRepaired).toBe(1);
    expect((await readdir(warcDir)).sort()).toEqual([cdxjPath.slice(warcDir.length + 1), original.name].sort());
    expect((await stat(finalPath)).size).toBe(keptBytes);
    // The repaired file reads back completely with warcio and keeps every record wholly before the cut.
    const records = await readWithWarcio(finalPath);
    expect(records.map((r) => r.warc.get("WARC-Record-ID"))).toEqual(original.recordIds.slice(0, kept));
    const lines = (await readFile(cdxjPath, "utf8")).split("\n").filter((l) => l);
    expect(lines).toEqual(original.index.filter((e) => e.end <= cut).map((e) => e.line));
  } finally {
    await rm(out, { recursive: true, force: true });
  }
}

describe("repair of a WARC file cut by a crash", () => {
  test("cut at random points (property): reads back completely, keeps every record before the cut", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: original.bytes.length }), fc.constantFrom(1024, 16_384, 4 << 20), checkCut),
      { numRuns: 60, seed: 20240506 },
    );
  });

  test("cut at, just before and just after every record boundary", async () => {
    for (const end of [0, ...original.memberEnds]) {
      for (const cut of [end - 1, end, end + 1]) if (cut >= 0 && cut <= original.bytes.length) await checkCut(cut, 8192);
    }
  });

  test("a complete gzip member holding half a record, or garbage, is dropped; a corrupt middle member cuts there", async () => {
    const out = await tempDir("repair-bad");
    const ends = original.memberEnds;
    const [a, b] = [ends[1]!, ends[2]!]; // the first response member spans a..b
    const lastRecord = gzipSync(Buffer.from("WARC/1.1\r\nWARC-Type: response\r\nContent-Length: 100\r\n\r\nonly part of the block"));
    await writeFile(join(out, "half-20240101000000-1-00001.warc.gz.open"), Buffer.concat([original.bytes.subarray(0, b), lastRecord]));
    await writeFile(join(out, "junk-20240101000000-1-00001.warc.gz.open"), Buffer.concat([original.bytes.subarray(0, b), Buffer.from("not gzip at all")]));
    const corrupt = Buffer.from(original.bytes);
    corrupt[a + Math.floor((b - a) / 2)]! ^= 0xff;
    await writeFile(join(out, "flip-20240101000000-1-00001.warc.gz.open"), corrupt);
    const before = await verifyWarcFile(join(out, "half-20240101000000-1-00001.warc.gz.open"));
    expect(before).toMatchObject({ ok: false, records: 3, validBytes: b });
    expect(before.errors[0]).toMatch(/block incomplete/);
    const report = await repairOutputDir(out, { skipLiveWriters: false });
    expect(report.errors).toEqual([]);
    const byName = new Map(report.warcFiles.map((f) => [f.path.slice(out.length + 1), f]));
    expect(byName.get("half-20240101000000-1-00001.warc.gz.open")).toMatchObject({ kept: 3, bytesDropped: lastRecord.length });
    expect(byName.get("half-20240101000000-1-00001.warc.gz.open")!.cutReason).toMatch(/block incomplete/);
    expect(byName.get("junk-20240101000000-1-00001.warc.gz.open")).toMatchObject({ kept: 3, bytesDropped: 15 });
    expect(byName.get("flip-20240101000000-1-00001.warc.gz.open")).toMatchObject({ kept: 2, bytesDropped: original.bytes.length - a });
    for (const f of report.warcFiles) {
      expect((await verifyWarcFile(f.finalPath!)).ok).toBe(true);
      expect((await readWithWarcio(f.finalPath!)).length).toBe(f.kept);
    }
  });

  test("verifyWarcFile catches a record whose bytes changed under an intact gzip member", async () => {
    const out = await tempDir("verify");
    const built = buildPageRecords(page({ body: Buffer.from("original body") }));
    const response = gunzipSync(built.data.subarray(built.responseOffset));
    const at = response.indexOf("original body");
    response[at] = "O".charCodeAt(0);
    const path = join(out, "tampered.warc.gz");
    await writeFile(path, Buffer.concat([built.data.subarray(0, built.responseOffset), gzipSync(response)]));
    const v = await verifyWarcFile(path);
    expect(v.ok).toBe(false);
    expect(v.errors.join("\n")).toMatch(/WARC-Block-Digest mismatch[^]*WARC-Payload-Digest mismatch/);
  });

  test("leaves finished files, live writers' files and missing folders alone; removes stray index temp files", async () => {
    expect((await repairOutputDir("/nonexistent/sc-store-output")).filesRepaired).toBe(0);
    const out = await tempDir("repair-live");
    await writeFile(join(out, "done-20240101000000-99999999-00002.warc.gz"), original.bytes);
    await writeFile(join(out, "live-20240101000000-1-00001.warc.gz.open"), original.bytes); // pid 1 is alive
    await writeFile(join(out, `dead-20240101000000-${process.pid}-00001.cdxj.tmp`), "partial");
    await writeFile(join(out, "clash-20240101000000-99999999-00001.warc.gz"), "x");
    await writeFile(join(out, "clash-20240101000000-99999999-00001.warc.gz.open"), original.bytes);
    const report = await repairOutputDir(out);
    expect(report.skipped.map((s) => s.path)).toEqual([join(out, "live-20240101000000-1-00001.warc.gz.open")]);
    expect(report.errors).toHaveLength(1);
    expect(report.errors[0]!.error).toMatch(/already exists/);
    expect((await readdir(out)).sort()).toEqual([
      "clash-20240101000000-99999999-00001.warc.gz",
      "clash-20240101000000-99999999-00001.warc.gz.open",
      "done-20240101000000-99999999-00002.warc.gz",
      "live-20240101000000-1-00001.warc.gz.open",
    ]);
  });
});
