// The body spool: files written once, read back only when size and CRC match, orphans swept.
import { mkdtempSync, readdirSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BodySpool, formatSpoolRef, parseSpoolRef, readSpooled, removeSpooled, SpoolEntryLost, sweepSpool } from "../../src/store/body-spool.js";

describe("body spool", () => {
  it("reads back what was written and reports a missing, short or corrupt file as lost", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "spool-")), "spool");
    const spool = new BodySpool(dir, "node0-f0");
    const body = Buffer.from("<html>".repeat(1000));
    const refs = await Promise.all([1, 2, 3, 4].map(() => spool.put(body)));
    expect(new Set(refs.map((r) => r.file)).size).toBe(4);
    expect(parseSpoolRef(formatSpoolRef(refs[0]!))).toEqual(refs[0]);
    expect(readSpooled(dir, refs[0]!).equals(body)).toBe(true);
    await removeSpooled(dir, refs[1]!);
    await removeSpooled(dir, refs[1]!); // already gone: fine
    expect(() => readSpooled(dir, refs[1]!)).toThrow(SpoolEntryLost);
    truncateSync(join(dir, refs[2]!.file), 10);
    expect(() => readSpooled(dir, refs[2]!)).toThrow(/10 bytes, expected 6000/);
    const flipped = Buffer.from(body);
    flipped[100] = 0;
    writeFileSync(join(dir, refs[3]!.file), flipped);
    expect(() => readSpooled(dir, refs[3]!)).toThrow(/CRC/);
    expect(() => parseSpoolRef("../etc/passwd:1:2")).toThrow(/invalid spool reference/);
  });

  it("sweeps only unreferenced files that are old or whose writer is gone", async () => {
    const dir = join(mkdtempSync(join(tmpdir(), "spool-")), "spool");
    const live = new BodySpool(dir, "node0-f0");
    const [kept, young, old] = await Promise.all([1, 2, 3].map(() => live.put(Buffer.from("x"))));
    const past = new Date(Date.now() - 3_600_000);
    utimesSync(join(dir, old!.file), past, past);
    // A file of a writer that no longer runs (pid 2^22+1 is above Linux's pid_max).
    writeFileSync(join(dir, "node0-f1-4194305-abcdef-7"), "y");
    const removed = await sweepSpool(dir, new Set([kept!.file]), 60_000);
    expect(removed).toBe(2);
    expect(readdirSync(dir).sort()).toEqual([kept!.file, young!.file].sort());
  });
});
