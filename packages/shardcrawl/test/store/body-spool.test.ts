// The body spool: bodies appended to segments, read back only when size and CRC match; segments
// no page refers to are swept once idle or once their writer is gone.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { BodySpool, formatSpoolRef, parseSpoolRef, readSpooled, SpoolEntryLost, sweepSpool } from "../../src/store/body-spool.js";
import { StoreWriteError } from "../../src/store/append-file.js";

const fresh = () => join(mkdtempSync(join(tmpdir(), "spool-")), "spool");

describe("body spool", () => {
  it("appends concurrent bodies to one segment, rotates by size, and reads each back", async () => {
    const dir = fresh();
    const spool = new BodySpool(dir, "node0-f0", 10_000);
    const bodies = Array.from({ length: 6 }, (_, i) => Buffer.alloc(3000 + i, 65 + i));
    const refs = await Promise.all(bodies.map((b) => spool.put(b)));
    await spool.close();
    refs.forEach((r, i) => expect(readSpooled(dir, r).equals(bodies[i]!)).toBe(true));
    // A segment takes bodies until it holds 10,000 bytes: four here, then a new segment.
    expect(refs.map((r) => r.file === refs[0]!.file)).toEqual([true, true, true, true, false, false]);
    expect(refs.slice(0, 4).map((r) => r.offset)).toEqual([0, 3000, 6001, 9003]);
    expect(parseSpoolRef(formatSpoolRef(refs[3]!))).toEqual(refs[3]);
    expect(() => parseSpoolRef("../etc/passwd:1:2:3")).toThrow(/invalid spool reference/);
    await spool.close();
  });

  it("writes a body given in pieces as one entry (many pieces too), with the CRC of the whole", async () => {
    const dir = fresh();
    const spool = new BodySpool(dir, "node0-f0");
    const pieces = [Buffer.from("<html>"), Buffer.alloc(70_000, 66), Buffer.alloc(0), Buffer.from("</html>")];
    const many = Array.from({ length: 600 }, (_, i) => Buffer.from(`<p>${i}</p>`));
    const first = await spool.put(pieces);
    const second = await spool.put(many);
    await spool.close();
    expect(first).toMatchObject({ offset: 0, bytes: 70_013 });
    expect(second.offset).toBe(70_013);
    expect(readSpooled(dir, first).equals(Buffer.concat(pieces))).toBe(true);
    expect(readSpooled(dir, second).equals(Buffer.concat(many))).toBe(true);
    expect(first.crc).toBe((await spool.put(Buffer.concat(pieces))).crc);
    await spool.close();
  });

  it("a failed write is a StoreWriteError with its errno, and the next put starts a new segment", async () => {
    const dir = fresh();
    const spool = new BodySpool(dir, "node0-f0");
    rmSync(dir, { recursive: true }); // the segment cannot be created: like a disk that refuses writes
    const err = await spool.put(Buffer.from("lost")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StoreWriteError);
    expect((err as StoreWriteError).code).toBe("ENOENT");
    mkdirSync(dir, { recursive: true }); // room again
    const body = Buffer.from("<html>kept</html>");
    const ref = await spool.put(body);
    await spool.close();
    expect(readSpooled(dir, ref).equals(body)).toBe(true);
  });

  it("reports a missing, short or corrupt body as lost", async () => {
    const dir = fresh();
    const spool = new BodySpool(dir, "node0-f0");
    const body = Buffer.from("<html>".repeat(1000));
    const [a, b] = [await spool.put(body), await spool.put(body)];
    await spool.close();
    const path = join(dir, a.file);
    const bytes = readFileSync(path);
    bytes[100] = bytes[100]! ^ 0xff;
    writeFileSync(path, bytes);
    expect(() => readSpooled(dir, a)).toThrow(/CRC mismatch at offset 0/);
    truncateSync(path, 7000);
    expect(() => readSpooled(dir, b)).toThrow(SpoolEntryLost);
    expect(() => readSpooled(dir, b)).toThrow(/1000 of 6000 bytes at offset 6000/);
    expect(() => readSpooled(dir, { ...b, file: "gone-1-a-1" })).toThrow(/ENOENT/);
  });

  it("sweeps only unreferenced segments that are idle, whose writer is gone, or whose writer finished", async () => {
    const dir = fresh();
    const live = new BodySpool(dir, "node0-f0");
    const kept = await live.put(Buffer.from("x"));
    await live.close();
    const young = await live.put(Buffer.from("y")); // a new segment (the last one was closed)
    await live.close();
    const old = await new BodySpool(dir, "node0-f1").put(Buffer.from("z"));
    const past = new Date(Date.now() - 3_600_000);
    utimesSync(join(dir, old.file), past, past);
    // A segment of a writer that no longer runs (pid 2^22+1 is above Linux's pid_max).
    writeFileSync(join(dir, "node0-f2-4194305-abcdef-7"), "w");
    expect(await sweepSpool(dir, new Set([kept.file]))).toBe(2);
    expect(readdirSync(dir).sort()).toEqual([kept.file, young.file].sort());
    // At exit the writer sweeps its own unreferenced segments at once.
    expect(await sweepSpool(dir, new Set([kept.file]), { finishedPid: process.pid })).toBe(1);
    expect(readdirSync(dir)).toEqual([kept.file]);
  });
});
