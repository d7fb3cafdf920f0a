// WET, WAT and the Parquet capture index, written beside WARC files by the real writer from the
// real parse task, on real-world pages (htmlparser-benchmark's corpus) and on the store's page
// variety (hostile headers, a comma URL warcio's writer refuses, binary, redirects): warcio reads
// every record back, each WET text is the text the parser extracted, each WAT JSON carries the
// page's links, and every index row locates its response record.
import { readdirSync, readFileSync } from "node:fs";
import { mkdir, rm } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parsePage } from "../../src/parse/parse-page.js";
import { makeParseTask, type WorkerResult, type WorkerSetup } from "../../src/parse/worker.js";
import { mergeCaptureIndexes, readCaptureIndex, type CaptureRow } from "../../src/store/capture-index.js";
import { WarcDerivatives } from "../../src/store/warc-derivatives.js";
import { WarcFileWriter } from "../../src/store/warc-file.js";
import { registrableDomain } from "../../src/url/scope.js";
import type { FetchedPage } from "../../src/shared/types.js";
import { page, readWithWarcio, tempDir, varietyPages, type ReadRecord } from "./helpers.js";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
const OPTIONS = { userAgentToken: "shardcrawl" };

/** htmlparser-benchmark's real pages, spread over a few sites so domains repeat. */
function realPages(): FetchedPage[] {
  const benchRequire = createRequire(join(ROOT, "packages/bench/package.json"));
  const dir = join(benchRequire.resolve("htmlparser-benchmark/package.json"), "..", "files");
  return readdirSync(dir).filter((f) => f.endsWith(".html")).sort().slice(0, 120).map((f, i) => {
    const body = readFileSync(join(dir, f));
    return page({
      url: `https://www${i % 3}.site${i % 7}.example/dir/page-${i}.html`,
      host: `www${i % 3}.site${i % 7}.example`,
      depth: i % 4,
      fetchedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(),
      body,
      headers: [["Content-Type", "text/html"], ["Content-Length", String(body.length)]],
    });
  });
}

const setup: WorkerSetup = {
  userAgent: "shardcrawl/0.1",
  maxLinksPerPage: 10_000,
  maxUrlLength: 2048,
  maxDecodedBytes: 10 * 1024 * 1024,
  honourNofollow: true,
  maxRedirects: 5,
  gzipLevel: 1,
  warcinfoId: "urn:uuid:00000000-0000-4000-8000-000000000000",
  scope: { mode: "any", keys: [] },
  bloom: { m: 1 << 20, k: 4, seed: 1 },
  priorityRules: [],
  spoolDir: "/nonexistent",
  derivatives: { wet: true, wat: true },
};

interface Written {
  page: FetchedPage;
  res: WorkerResult;
  location: { file: string; offset: number; length: number };
}

describe("WET, WAT and Parquet index beside the WARC files", () => {
  let dir: string;
  const written: Written[] = [];
  let derivatives: WarcDerivatives;
  const errors: string[] = [];
  const byName = new Map<string, ReadRecord[]>();
  const names: string[] = [];

  beforeAll(async () => {
    dir = await tempDir("derivatives");
    derivatives = new WarcDerivatives({ dir, wet: true, wat: true, index: true, warcinfo: { software: "test" }, gzipLevel: 1, onError: (m) => errors.push(m) });
    // Small files: the set rotates several times, and the derivatives must rotate with it.
    const writer = new WarcFileWriter({ dir, prefix: "t", maxFileBytes: 400_000, warcinfo: { software: "test" }, derivatives });
    const parse = makeParseTask(setup);
    const pages = [...realPages(), ...varietyPages()];
    // Appends made in one turn share a batch (the parser's group commit).
    for (let i = 0; i < pages.length; i += 8) {
      const batch = pages.slice(i, i + 8).map((p) => {
        const res = parse({ meta: { ...p, body: undefined } as never, body: p.body }) as WorkerResult;
        const appended = writer.append({
          data: res.warc,
          warcinfoId: writer.warcinfoId,
          responseOffset: res.responseOffset,
          responseLength: res.responseLength,
          cdx: res.cdx,
          derivatives: {
            ...(res.wet ? { wet: res.wet } : {}),
            ...(res.wat ? { wat: res.wat } : {}),
            capture: { url: p.url, fetchTime: p.fetchedAt, status: p.status, mime: res.contentType, charset: res.facts?.charset ?? null, language: res.facts?.lang ?? null, digest: res.payloadDigest, truncated: Boolean(p.truncated), error: res.error ?? null, depth: p.depth, node: "n1" },
          },
        });
        return appended.then((location) => written.push({ page: p, res, location }));
      });
      await Promise.all(batch);
    }
    await writer.close();
    for (const f of readdirSync(dir).sort()) {
      if (f.endsWith(".gz")) byName.set(f, await readWithWarcio(join(dir, f)));
      if (f.endsWith(".warc.gz")) names.push(f.replace(/\.warc\.gz$/, ""));
    }
  }, 120_000);

  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("rotates with the WARC files: every WARC file has its WET, WAT and index, nothing left .open", () => {
    expect(names.length).toBeGreaterThan(2);
    const files = readdirSync(dir);
    expect(files.filter((f) => f.endsWith(".open") || f.endsWith(".tmp"))).toEqual([]);
    for (const n of names) {
      expect(files).toContain(`${n}.warc.wet.gz`);
      expect(files).toContain(`${n}.warc.wat.gz`);
      expect(files).toContain(`${n}.parquet`);
    }
    expect(errors).toEqual([]);
    expect(derivatives.stats.errors).toBe(0);
  });

  it("WET: a warcinfo record, then one conversion record per successful HTML page with the parser's exact text", () => {
    let conversions = 0;
    for (const n of names) {
      const warc = byName.get(`${n}.warc.gz`)!;
      const responses = new Map(warc.filter((r) => r.type === "response").map((r) => [r.warc.get("WARC-Record-ID"), r.warc.get("WARC-Target-URI")]));
      const wet = byName.get(`${n}.warc.wet.gz`)!;
      expect(wet[0]!.type).toBe("warcinfo");
      expect(wet[0]!.warc.get("WARC-Filename")).toBe(`${n}.warc.wet.gz`);
      for (const rec of wet.slice(1)) {
        expect(rec.type).toBe("conversion");
        expect(rec.warc.get("Content-Type")).toBe("text/plain");
        // Refers to a response record of the WARC file it sits beside, for the same URL.
        const uri = responses.get(rec.warc.get("WARC-Refers-To"));
        expect(uri).toBe(rec.warc.get("WARC-Target-URI"));
        const w = written.find((x) => x.page.url === uri)!;
        const parsed = parsePage({ url: w.page.url, status: w.page.status, headers: w.page.headers, body: w.page.body }, OPTIONS);
        expect(rec.payload.toString("utf8")).toBe(parsed.text);
        conversions++;
      }
    }
    const expected = written.filter((w) => {
      const parsed = parsePage({ url: w.page.url, status: w.page.status, headers: w.page.headers, body: w.page.body }, OPTIONS);
      return parsed.isHtml && parsed.text && w.page.status >= 200 && w.page.status < 300;
    });
    expect(conversions).toBe(expected.length);
    expect(conversions).toBeGreaterThan(100);
  });

  it("WAT: one metadata record per response, JSON in Common Crawl's Envelope shape carrying the page's title, metas and links", () => {
    let html = 0;
    let withMetas = 0;
    for (const n of names) {
      const warc = byName.get(`${n}.warc.gz`)!;
      const responses = warc.filter((r) => r.type === "response");
      const wat = byName.get(`${n}.warc.wat.gz`)!;
      expect(wat[0]!.type).toBe("warcinfo");
      expect(wat.length - 1).toBe(responses.length);
      for (const rec of wat.slice(1)) {
        expect(rec.type).toBe("metadata");
        expect(rec.warc.get("Content-Type")).toBe("application/json");
        // eslint-disable-next-line @typescript-eslint/no-explicit-any -- the WAT JSON is walked by its documented paths
        const json = JSON.parse(rec.payload.toString("utf8")) as { Envelope: Record<string, any> };
        const env = json.Envelope;
        const refersTo = rec.warc.get("WARC-Refers-To");
        expect(env["WARC-Header-Metadata"]["WARC-Record-ID"]).toBe(refersTo);
        const response = responses.find((r) => r.warc.get("WARC-Record-ID") === refersTo)!;
        expect(env["WARC-Header-Metadata"]["WARC-Target-URI"]).toBe(response.warc.get("WARC-Target-URI"));
        expect(env["WARC-Header-Metadata"]["WARC-Payload-Digest"]).toBe(response.warc.get("WARC-Payload-Digest"));
        const http = env["Payload-Metadata"]["HTTP-Response-Metadata"];
        expect(http["Response-Message"].Status).toBe(String(response.http!.status));
        expect(Number(http["Entity-Length"])).toBe(response.payload.length);
        const w = written.find((x) => x.page.url === response.warc.get("WARC-Target-URI"))!;
        const parsed = parsePage({ url: w.page.url, status: w.page.status, headers: w.page.headers, body: w.page.body }, OPTIONS);
        if (!parsed.isHtml) {
          expect(http["HTML-Metadata"]).toBeUndefined();
          continue;
        }
        html++;
        const meta = http["HTML-Metadata"];
        expect(meta.Links.map((l: { url: string }) => l.url)).toEqual(parsed.links);
        for (const l of meta.Links) expect(l.path).toBe("A@/href");
        expect(meta.Head.Title).toBe(parsed.title);
        expect(meta.Head.Metas ?? []).toEqual(parsed.metas);
        if (meta.Head.Metas?.length) withMetas++;
      }
    }
    expect(html).toBeGreaterThan(100);
    expect(withMetas).toBeGreaterThan(50);
    // The real pages have links and meta tags: the check above compared non-empty lists.
    expect(written.some((w) => w.res.links.length > 50)).toBe(true);
  });

  it("Parquet index: one row per response, sorted by registrable domain, every (file, offset, length) reads back its record", async () => {
    const all: CaptureRow[] = [];
    for (const n of names) {
      const rows = await readCaptureIndex(join(dir, `${n}.parquet`));
      const responses = byName.get(`${n}.warc.gz`)!.filter((r) => r.type === "response");
      expect(rows.length).toBe(responses.length);
      for (let i = 1; i < rows.length; i++) expect(rows[i - 1]!.domain <= rows[i]!.domain).toBe(true);
      all.push(...rows);
    }
    expect(all.length).toBe(written.length);
    for (const row of all) {
      const w = written.find((x) => x.page.url === row.url)!;
      expect(row).toMatchObject({ file: w.location.file, offset: w.location.offset, length: w.location.length, domain: registrableDomain(new URL(w.page.url).hostname), depth: w.page.depth, node: "n1" });
      expect(row.fetchTime).toBe(w.page.fetchedAt);
      const [rec] = await readWithWarcio(join(dir, row.file), { start: row.offset, end: row.offset + row.length - 1 });
      expect(rec!.type).toBe("response");
      expect(rec!.warc.get("WARC-Target-URI")).toBe(row.url);
    }
  });

  it("index merge: one file with every row, sorted by domain", async () => {
    const out = join(dir, "merged.parquet");
    const report = await mergeCaptureIndexes(names.map((n) => join(dir, `${n}.parquet`)), out, { blockRows: 7 });
    expect(report.rows).toBe(written.length);
    const rows = await readCaptureIndex(out);
    expect(rows.length).toBe(written.length);
    for (let i = 1; i < rows.length; i++) {
      const a = rows[i - 1]!;
      const b = rows[i]!;
      expect(a.domain < b.domain || (a.domain === b.domain && a.surtKey <= b.surtKey)).toBe(true);
    }
    expect(new Set(rows.map((r) => `${r.file}@${r.offset}`)).size).toBe(written.length);
  });
});

describe("a derivative that cannot be written", () => {
  it("is dropped for its WARC file (counted, reported); the others and the next WARC file go on", async () => {
    const dir = await tempDir("derivative-fail");
    try {
      // Something already holds the WET file's .open name: opening it fails.
      await mkdir(join(dir, "a.warc.wet.gz.open"));
      const errors: string[] = [];
      const d = new WarcDerivatives({ dir, wet: true, wat: true, index: true, warcinfo: { software: "test" }, onError: (m) => errors.push(m) });
      const p = page({ url: "http://example.com/a" });
      const res = makeParseTask(setup)({ meta: { ...p, body: undefined } as never, body: p.body }) as WorkerResult;
      const capture = { url: p.url, fetchTime: p.fetchedAt, status: 200, mime: "text/html", charset: null, language: null, digest: res.payloadDigest, truncated: false, error: null, depth: 0, node: "n1" };
      const item = { derivatives: { wet: res.wet!, wat: res.wat!, capture }, location: { file: "a.warc.gz", offset: 100, length: 200 } };
      await d.opened("a.warc.gz");
      await d.written("a.warc.gz", [item]);
      await d.finished("a.warc.gz");
      expect(errors.length).toBe(1);
      expect(errors[0]).toMatch(/a\.warc\.wet\.gz.*dropped for the rest of this WARC file/);
      expect(d.stats).toMatchObject({ errors: 1, wetRecords: 0, watRecords: 1, indexRows: 1, indexFiles: 1 });
      expect((await readWithWarcio(join(dir, "a.warc.wat.gz"))).map((r) => r.type)).toEqual(["warcinfo", "metadata"]);
      expect(await readCaptureIndex(join(dir, "a.parquet"))).toHaveLength(1);
      // The next WARC file gets all three again.
      await d.opened("b.warc.gz");
      await d.written("b.warc.gz", [{ ...item, location: { ...item.location, file: "b.warc.gz" } }]);
      await d.finished("b.warc.gz");
      expect(d.stats).toMatchObject({ errors: 1, wetRecords: 1, watRecords: 2, indexFiles: 2 });
      expect((await readWithWarcio(join(dir, "b.warc.wet.gz"))).map((r) => r.type)).toEqual(["warcinfo", "conversion"]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
