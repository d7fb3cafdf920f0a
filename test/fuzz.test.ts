// Property-based fuzzing (issue 8) of the pieces that eat hostile input and the WARC writer:
// robots.txt parsing never throws and always lets /robots.txt through; every WARC record we write,
// whatever the URL, headers and body, reads back whole with warcio and with our own verifier.
// (The URL normalizer and the link extractor have their own properties in packages/shardcrawl/test.)
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { WARCParser } from "warcio";
import { compileRobots } from "../packages/shardcrawl/src/fetch/robots.js";
import { buildPageRecords } from "../packages/shardcrawl/src/store/warc-record.js";
import { verifyWarcFile } from "../packages/shardcrawl/src/store/warc-reader.js";
import type { FetchedPage } from "../packages/shardcrawl/src/shared/types.js";

const RUNS = Number(process.env.FUZZ_RUNS ?? 300);

const robotsLine = fc.oneof(
  fc.constantFrom("User-agent: *", "User-agent: shardcrawl", "user-agent: ShardCrawl/2", "Allow: /", "Disallow: /", "Crawl-delay: 2", "Sitemap: http://x.test/s.xml", "", "# c"),
  fc.tuple(fc.constantFrom("Allow", "Disallow", "Crawl-delay", "User-agent", "Sitemap", "disallow", "ALLOW"), fc.string({ maxLength: 40 })).map(([k, v]) => `${k}: ${v}`),
  fc.string({ maxLength: 80 }),
);

describe("robots.txt parsing (fast-check)", () => {
  it("never throws, answers a boolean for any path, and always allows /robots.txt", () => {
    fc.assert(
      fc.property(fc.array(robotsLine, { maxLength: 40 }), fc.string({ maxLength: 60 }), fc.constantFrom("\n", "\r\n", "\r"), (lines, path, eol) => {
        const robots = compileRobots({ kind: "rules", body: lines.join(eol), fetchedAt: 0 }, "shardcrawl/0.1 (+https://x.test)");
        const url = `http://h.test/${encodeURI(path).replace(/^\/+/, "")}`;
        expect(typeof robots.isAllowed(url)).toBe("boolean");
        expect(robots.isAllowed("http://h.test/robots.txt")).toBe(true);
        if (robots.crawlDelayMs !== undefined) expect(robots.crawlDelayMs).toBeGreaterThanOrEqual(0);
      }),
      { numRuns: RUNS * 3 },
    );
  });
});

const headerName = fc.stringMatching(/^[!#$%&'*+.^_`|~0-9A-Za-z-]{1,20}$/);
const headerValue = fc.string({ maxLength: 60 });
const pathChars = fc.stringMatching(/^[A-Za-z0-9,;=&%~._/-]{0,40}$/);

const page = fc.record({
  path: pathChars,
  query: fc.option(pathChars, { nil: undefined }),
  status: fc.integer({ min: 100, max: 599 }),
  headers: fc.array(fc.tuple(headerName, headerValue), { maxLength: 8 }),
  body: fc.uint8Array({ maxLength: 3000 }),
  truncated: fc.constantFrom(undefined, "length" as const, "time" as const),
});

describe("WARC writer (fast-check)", () => {
  it("every record reads back with warcio and our verifier, payload intact", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-fuzz-warc-"));
    let n = 0;
    await fc.assert(
      fc.asyncProperty(page, async (p) => {
        const url = `http://www.d1.test/${p.path.replace(/^\/+/, "")}${p.query !== undefined ? `?${p.query}` : ""}`;
        const fetched: FetchedPage = {
          url, host: "www.d1.test", depth: 0, hops: 0, fetchedAt: new Date(1_700_000_000_000).toISOString(),
          status: p.status, httpVersion: "1.1", statusText: "X", headers: [["Content-Type", "text/html"], ...p.headers],
          requestHeaders: [["User-Agent", "fuzz"]], body: Buffer.from(p.body), truncated: p.truncated, timings: { total: 1 },
        };
        const rec = buildPageRecords(fetched, { gzipLevel: 1 });
        const file = join(dir, `f${n++}.warc.gz`);
        writeFileSync(file, rec.data);
        const report = await verifyWarcFile(file);
        expect(report.errors).toEqual([]);
        expect(report.records).toBe(2);
        const types: string[] = [];
        for await (const record of new WARCParser(Readable.from([rec.data]))) {
          types.push(record.warcType ?? "");
          if (record.warcType === "response") {
            expect(record.warcTargetURI).toBe(url);
            // warcio.js mis-splits a response with no header lines at all; we always send some.
            const payload = Buffer.from(await record.readFully(false));
            expect(payload.equals(Buffer.from(p.body))).toBe(true);
          } else await record.readFully(false);
        }
        expect(types).toEqual(["request", "response"]);
      }),
      { numRuns: RUNS },
    );
  }, 120_000);
});
