// The bounded newest-first page-log scan: reads files backwards across chunk boundaries, merges
// files by time, stops at the limit and at the byte budget (and says when it was cut short).
import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { pageLogLinesOfHost, pageLogLinesOfUrl } from "../../../src/cli/inspect/page-log-scan.js";

function line(url: string, t: number, status = 200): string {
  return `${JSON.stringify({ url, final_url: url, status, error: null, fetched_at: new Date(t).toISOString(), bytes: 1, timings: { total: 1 } })}\n`;
}

function outWith(files: Record<string, { lines: string[]; mtime: number }>): string {
  const out = mkdtempSync(join(tmpdir(), "sc-scan-"));
  mkdirSync(join(out, "pages"));
  for (const [name, f] of Object.entries(files)) {
    const p = join(out, "pages", name);
    writeFileSync(p, f.lines.join(""));
    utimesSync(p, f.mtime / 1000, f.mtime / 1000);
  }
  return out;
}

const T0 = Date.UTC(2026, 0, 1);

describe("page-log scan", () => {
  const a = Array.from({ length: 50 }, (_, i) => line(`http://a.test/p${i}`, T0 + i * 1000));
  const b = Array.from({ length: 50 }, (_, i) => line(`http://b.test/p${i}`, T0 + i * 1000 + 500));
  const out = outWith({
    "n-p0-1.jsonl": { lines: a, mtime: T0 + 49_000 },
    "n-p1-1.jsonl.open": { lines: [...b, '{"url":"http://a.test/cut'], mtime: T0 + 60_000 },
  });

  it("finds a URL's line whatever the chunk size (lines cut across chunks)", () => {
    for (const chunkBytes of [7, 64, 1000, 1 << 20]) {
      const r = pageLogLinesOfUrl(out, "http://a.test/p3", { limit: 1, maxBytes: 1e9, chunkBytes });
      expect(r.lines.map((l) => l.url)).toEqual(["http://a.test/p3"]);
      expect(r.complete).toBe(true);
    }
  });

  it("returns a host's newest lines, newest first, and skips a cut last line", () => {
    const r = pageLogLinesOfHost(out, "a.test", { limit: 3, maxBytes: 1e9, chunkBytes: 33 });
    expect(r.lines.map((l) => l.url)).toEqual(["http://a.test/p49", "http://a.test/p48", "http://a.test/p47"]);
  });

  it("stops at the byte budget and says the scan was cut short", () => {
    const r = pageLogLinesOfUrl(out, "http://a.test/p0", { limit: 1, maxBytes: 500, chunkBytes: 100 });
    expect(r.lines).toEqual([]);
    expect(r.scannedBytes).toBe(500);
    expect(r.complete).toBe(false);
  });

  it("an unknown URL reads everything and finds nothing", () => {
    const r = pageLogLinesOfUrl(out, "http://c.test/", { limit: 1, maxBytes: 1e9 });
    expect(r.lines).toEqual([]);
    expect(r.complete).toBe(true);
    expect(r.scannedBytes).toBe(r.totalBytes);
  });
});
