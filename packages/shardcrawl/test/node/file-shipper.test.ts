// The shipper with real files and a real shell command: closed files only, success recorded in
// shipped.log before a file is deleted, failures retried, pending shipments found again by a new
// shipper (a restart), processed inbox files pruned. Also the --min-free-disk parser.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseMinFreeDisk, thresholdBytes } from "../../src/node/disk-space.js";
import { FileShipper, INBOX_DONE_KEEP_MS } from "../../src/node/file-shipper.js";

function outDir(): { out: string; dest: string } {
  const root = mkdtempSync(join(tmpdir(), "sc-ship-"));
  const out = join(root, "out");
  mkdirSync(join(out, "warc"), { recursive: true });
  mkdirSync(join(out, "pages"), { recursive: true });
  mkdirSync(join(root, "dest"));
  return { out, dest: join(root, "dest") };
}

describe("FileShipper", () => {
  it("ships closed files, records them, deletes them, and leaves open ones alone", async () => {
    const { out, dest } = outDir();
    writeFileSync(join(out, "warc", "a-1.warc.gz"), "warc");
    writeFileSync(join(out, "warc", "a-1.cdxj"), "cdx");
    writeFileSync(join(out, "warc", "a-2.warc.gz.open"), "open");
    writeFileSync(join(out, "warc", "a-2.cdxj.tmp"), "tmp");
    writeFileSync(join(out, "pages", "p-1.jsonl"), "{}\n");
    const logs: string[] = [];
    const s = new FileShipper({ out, command: `cp -t ${dest}`, deleteShipped: true, log: (m) => logs.push(m) });
    expect(s.pending()).toEqual(["warc/a-1.cdxj", "warc/a-1.warc.gz", "pages/p-1.jsonl"]);
    expect(await s.drain(10_000)).toEqual([]);
    expect(readFileSync(join(dest, "a-1.warc.gz"), "utf8")).toBe("warc");
    expect(existsSync(join(out, "warc", "a-1.warc.gz"))).toBe(false);
    expect(existsSync(join(out, "warc", "a-2.warc.gz.open"))).toBe(true);
    expect(readFileSync(join(out, "shipped.log"), "utf8").trim().split("\n").map((l) => l.split("\t")[0])).toHaveLength(3);
    expect(logs).toEqual([]);
  });

  it("retries a failing command and never deletes an unshipped file; a new shipper picks up what is pending", async () => {
    const { out, dest } = outDir();
    writeFileSync(join(out, "warc", "b-1.warc.gz"), "x");
    const gate = join(dest, "..", "gate");
    writeFileSync(gate, "");
    const counts: Record<string, number> = {};
    const cmd = `test ! -e ${gate} && cp -t ${dest}`;
    const first = new FileShipper({ out, command: cmd, deleteShipped: true, log: () => undefined, count: (f, n) => (counts[f] = (counts[f] ?? 0) + n) });
    expect(await first.drain(1_500)).toEqual(["warc/b-1.warc.gz"]);
    expect(counts["ship:failures"]).toBeGreaterThanOrEqual(1);
    expect(existsSync(join(out, "warc", "b-1.warc.gz"))).toBe(true);
    // "Restart": a new shipper with the gate open ships it.
    rmSync(gate);
    const second = new FileShipper({ out, command: cmd, deleteShipped: true, log: () => undefined });
    expect(second.pending()).toEqual(["warc/b-1.warc.gz"]);
    expect(await second.drain(10_000)).toEqual([]);
    expect(existsSync(join(dest, "b-1.warc.gz"))).toBe(true);
    // And a third one knows it was shipped (from shipped.log), even with the file kept.
    writeFileSync(join(out, "warc", "b-1.warc.gz"), "x");
    expect(new FileShipper({ out, command: cmd, deleteShipped: false, log: () => undefined }).pending()).toEqual([]);
  });

  it("prunes processed inbox files older than the keep time", () => {
    const { out } = outDir();
    const done = join(out, "inbox", "done");
    mkdirSync(done, { recursive: true });
    writeFileSync(join(done, "old.links.gz"), "");
    writeFileSync(join(done, "new.links.gz"), "");
    const old = (Date.now() - INBOX_DONE_KEEP_MS - 60_000) / 1000;
    utimesSync(join(done, "old.links.gz"), old, old);
    new FileShipper({ out, command: "true", deleteShipped: false, log: () => undefined }).tick();
    expect(existsSync(join(done, "old.links.gz"))).toBe(false);
    expect(existsSync(join(done, "new.links.gz"))).toBe(true);
  });
});

describe("--min-free-disk", () => {
  it("takes a percentage or bytes", () => {
    expect(parseMinFreeDisk("5%")).toEqual({ percent: 5 });
    expect(parseMinFreeDisk("2G")).toEqual({ bytes: 2 * 1024 ** 3 });
    expect(parseMinFreeDisk("500m")).toEqual({ bytes: 500 * 1024 ** 2 });
    expect(parseMinFreeDisk("1048576")).toEqual({ bytes: 1048576 });
    expect(thresholdBytes({ percent: 2 }, 1000)).toBe(20);
    expect(() => parseMinFreeDisk("lots")).toThrow(RangeError);
    expect(() => parseMinFreeDisk("100%")).toThrow(RangeError);
  });
});
