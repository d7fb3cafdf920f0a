// Queue bounds from rate x accepted wait (node/queue-sizing.ts), and how flags and config files use it.
import { describe, expect, it } from "vitest";
import { applyQueueSizing, deriveQueueBounds } from "../../src/node/queue-sizing.js";
import { defaultConfig } from "../../src/node/config.js";
import { parseCrawlFlags, UsageError } from "../../src/cli/flags.js";
import { nodeConfigFromObject } from "../../src/cli/config-file.js";

const KB = 1024;

describe("deriveQueueBounds", () => {
  it("is rate x wait in pages, times the typical page in bytes, shared among parsers for the write buffer", () => {
    expect(deriveQueueBounds({ targetPagesPerSec: 50, acceptedWaitMs: 4000, typicalPageBytes: 100 * KB, maxPageBytes: 2048 * KB, parsers: 4 })).toEqual({
      parseQueueMax: 200,
      parseQueueMaxBytes: 200 * 100 * KB,
      writeBufferBytes: 50 * 100 * KB,
    });
  });

  it("rounds up, keeps at least one page, and fits at least one largest page in every byte bound", () => {
    expect(deriveQueueBounds({ targetPagesPerSec: 0.3, acceptedWaitMs: 1000, typicalPageBytes: 10 * KB, maxPageBytes: 512 * KB, parsers: 3 })).toEqual({
      parseQueueMax: 1, parseQueueMaxBytes: 512 * KB, writeBufferBytes: 512 * KB,
    });
  });

  it("refuses inputs that cannot size a queue", () => {
    expect(() => deriveQueueBounds({ targetPagesPerSec: 10, acceptedWaitMs: 0, typicalPageBytes: 1, maxPageBytes: 1, parsers: 1 })).toThrow(/acceptedWaitMs must be > 0/);
    expect(() => deriveQueueBounds({ targetPagesPerSec: Number.NaN, acceptedWaitMs: 1, typicalPageBytes: 1, maxPageBytes: 1, parsers: 1 })).toThrow(/targetPagesPerSec/);
  });
});

describe("applyQueueSizing", () => {
  it("derives what was not set explicitly and records the source of every bound", () => {
    const c = { ...defaultConfig(), targetPagesPerSec: 20, acceptedWaitMs: 5000, typicalPageBytes: 64 * KB, parsers: 2, parseQueueMax: 7 };
    applyQueueSizing(c, new Set(["parseQueueMax"]));
    expect(c.parseQueueMax).toBe(7);
    expect(c.parseQueueMaxBytes).toBe(100 * 64 * KB);
    expect(c.writeBufferBytes).toBe(Math.max(c.maxPageBytes, 50 * 64 * KB));
    expect(c.queueSizing).toEqual({
      derivedFrom: { targetPagesPerSec: 20, acceptedWaitMs: 5000, typicalPageBytes: 64 * KB, maxPageBytes: c.maxPageBytes, parsers: 2 },
      bounds: { parseQueueMax: 7, parseQueueMaxBytes: 100 * 64 * KB, writeBufferBytes: c.writeBufferBytes },
      source: { parseQueueMax: "explicit", parseQueueMaxBytes: "derived", writeBufferBytes: "derived" },
    });
  });

  it("without a target rate keeps the defaults", () => {
    const c = defaultConfig();
    const before = { q: c.parseQueueMax, b: c.parseQueueMaxBytes, w: c.writeBufferBytes };
    applyQueueSizing(c, new Set());
    expect({ q: c.parseQueueMax, b: c.parseQueueMaxBytes, w: c.writeBufferBytes }).toEqual(before);
    expect(c.queueSizing?.source).toEqual({ parseQueueMax: "default", parseQueueMaxBytes: "default", writeBufferBytes: "default" });
    expect(c.queueSizing?.derivedFrom).toBeUndefined();
  });
});

describe("flags and config files", () => {
  it("crawl flags derive bounds; an explicit flag overrides its bound", () => {
    const c = parseCrawlFlags(["--out", "o", "--parsers", "1", "--target-pages-per-sec", "10", "--accepted-wait", "3000", "--typical-page-bytes", "100000", "--write-buffer-bytes", "4000000"]);
    expect(c.parseQueueMax).toBe(30);
    expect(c.parseQueueMaxBytes).toBe(3_000_000);
    expect(c.writeBufferBytes).toBe(4_000_000);
    expect(c.queueSizing?.source.writeBufferBytes).toBe("explicit");
    expect(() => parseCrawlFlags(["--out", "o", "--target-pages-per-sec", "-1"])).toThrow(UsageError);
  });

  it("a config file derives bounds it does not set", () => {
    const c = nodeConfigFromObject({ out: "o", parsers: 2, targetPagesPerSec: 100, acceptedWaitMs: 1000, typicalPageBytes: 50_000, parseQueueMaxBytes: 123_456_789 }, "node.yaml");
    expect(c.parseQueueMax).toBe(100);
    expect(c.parseQueueMaxBytes).toBe(123_456_789);
    expect(c.queueSizing?.source).toEqual({ parseQueueMax: "derived", parseQueueMaxBytes: "explicit", writeBufferBytes: "derived" });
    expect(() => nodeConfigFromObject({ out: "o", queueSizing: {} }, "node.yaml")).toThrow(/unknown key "queueSizing"/);
  });
});
