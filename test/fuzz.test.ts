// Property-based fuzzing of the pieces that eat hostile input and the WARC writer:
// robots.txt parsing never throws and always lets /robots.txt through; every WARC record we write,
// whatever the URL, headers and body, reads back whole with warcio and with our own verifier; the
// shard function (rendezvous over shard keys) is stable, order-independent, balanced by weight,
// and moves only the new node's share when a node joins.
// (The URL normalizer -- idempotent, never throws, output parses -- and the link extractor -- never
// throws, bounded output -- have their properties in packages/shardcrawl/test/url/normalize.test.ts
// and packages/shardcrawl/test/parse/extract.test.ts.)
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
import { ownerIndex, type ShardNode } from "../packages/shardcrawl/src/shard/rendezvous.js";
import { ShardRouter, equalNodes } from "../packages/shardcrawl/src/shard/shard-spec.js";
import { shardKeyOf } from "../packages/shardcrawl/src/shard/shard-key.js";

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

// Host names as links bring them: labels of letters/digits/hyphens, sometimes IDNA, IPs, odd TLDs.
const label = fc.stringMatching(/^[a-z0-9]([a-z0-9-]{0,14}[a-z0-9])?$/);
const hostName = fc.oneof(
  fc.array(label, { minLength: 1, maxLength: 4 }).chain((ls) => fc.constantFrom("com", "co.uk", "github.io", "test", "xn--p1ai", "blogspot.com").map((tld) => `${ls.join(".")}.${tld}`)),
  fc.ipV4(),
  fc.constantFrom("localhost", "com", "co.uk", "[::1]", "xn--bcher-kva.example"),
);
const nodeSet = fc.uniqueArray(fc.stringMatching(/^[a-z][a-z0-9-]{0,10}$/), { minLength: 1, maxLength: 9 })
  .chain((names) => fc.tuple(fc.constant(names), fc.array(fc.double({ min: 0.25, max: 4, noNaN: true }), { minLength: names.length, maxLength: names.length })))
  .map(([names, weights]): ShardNode[] => names.map((name, i) => ({ name, weight: weights[i]! })));

describe("shard function (fast-check)", () => {
  it("never throws, is stable across calls and routers, and does not depend on node order", () => {
    fc.assert(
      fc.property(nodeSet, fc.array(hostName, { minLength: 1, maxLength: 20 }), fc.constantFrom("domain" as const, "host" as const), (nodes, hosts, key) => {
        const a = new ShardRouter({ self: nodes[0]!.name, nodes, key });
        const b = new ShardRouter({ self: nodes[0]!.name, nodes: [...nodes].reverse(), key });
        for (const h of hosts) {
          const owner = a.ownerOfHost(h);
          expect(nodes.map((n) => n.name)).toContain(owner);
          expect(a.ownerOfHost(h)).toBe(owner);
          expect(b.ownerOfHost(h)).toBe(owner);
          expect(nodes[ownerIndex(nodes, shardKeyOf(h, key))]!.name).toBe(owner);
        }
      }),
      { numRuns: RUNS },
    );
  });

  it("balances keys by weight, and a joining node takes only keys it now owns", () => {
    fc.assert(
      fc.property(nodeSet, fc.string({ minLength: 1, maxLength: 8 }), (nodes, salt) => {
        const N = 3000;
        const keys = Array.from({ length: N }, (_, i) => `${salt}-${i}.example`);
        const total = nodes.reduce((s, n) => s + n.weight, 0);
        const counts = new Map<string, number>();
        for (const k of keys) {
          const o = nodes[ownerIndex(nodes, k)]!.name;
          counts.set(o, (counts.get(o) ?? 0) + 1);
        }
        for (const n of nodes) {
          // Binomial: expected N*p, standard deviation sqrt(N*p*(1-p)); 6 deviations never fail by chance.
          const p = n.weight / total;
          const sd = Math.sqrt(N * p * (1 - p));
          expect(Math.abs((counts.get(n.name) ?? 0) - N * p), `${n.name} w=${n.weight}`).toBeLessThanOrEqual(6 * sd + 1);
        }
        const joined = [...nodes, { name: "zz-new-node", weight: 1 }];
        for (const k of keys.slice(0, 500)) {
          const before = nodes[ownerIndex(nodes, k)]!.name;
          const after = joined[ownerIndex(joined, k)]!.name;
          if (after !== before) expect(after).toBe("zz-new-node");
        }
      }),
      { numRuns: Math.max(20, Math.round(RUNS / 10)) },
    );
  });

  it("equal nodes: every node gets a share near 1/n", () => {
    for (const n of [2, 3, 5, 8]) {
      const nodes = equalNodes(n);
      const counts = new Array<number>(n).fill(0);
      for (let i = 0; i < 8000; i++) counts[ownerIndex(nodes, `site-${i}.test`)]!++;
      for (const c of counts) expect(Math.abs(c - 8000 / n)).toBeLessThanOrEqual(6 * Math.sqrt(8000 * (1 / n) * (1 - 1 / n)));
    }
  });
});
