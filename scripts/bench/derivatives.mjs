#!/usr/bin/env node
// Cost of the outputs beside the WARC files (--derivatives wet,wat,index), on real pages: the
// htmlparser-benchmark corpus the parse bench uses. Measured as process CPU time (user + system,
// so the thread pool's file writes count), median of rounds:
//   - the parse task (decode, links, digests, WARC records) without and with WET + WAT records:
//     the difference is what the derivatives cost the parser per page;
//   - each piece alone: WET record, WAT record (build + gzip), and the Parquet index (row + sort +
//     encode + write) per row;
//   - the write stage (WarcFileWriter appends, rotation, close) without and with derivatives;
// and bytes per page of each output (gzip level 1, the crawler's default).
// Usage: node scripts/bench/derivatives.mjs [--mode quick|full] [--out FILE]
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ROOT, args, benchRequire, median, writeResult, fmt } from "./common.mjs";

const dist = (p) => import(join(ROOT, "packages/shardcrawl/dist", p));
const { makeParseTask } = await dist("parse/worker.js");
const { parsePage } = await dist("parse/parse-page.js");
const { buildPageRecords } = await dist("store/warc-record.js");
const { buildWetRecord } = await dist("store/wet-record.js");
const { buildWatRecord } = await dist("store/wat-record.js");
const { captureRow, writeCaptureIndex } = await dist("store/capture-index.js");
const { WarcFileWriter } = await dist("store/warc-file.js");
const { WarcDerivatives } = await dist("store/warc-derivatives.js");

const opts = args();
const FULL = opts.mode === "full";
const ROUNDS = FULL ? 9 : 3;
/** Times the corpus is run per round (more pages per timing: less timer noise). */
const REPEAT = FULL ? 6 : 3;
const GZIP_LEVEL = 1;

function corpus() {
  const dir = join(benchRequire.resolve("htmlparser-benchmark/package.json"), "..", "files");
  return readdirSync(dir).filter((f) => f.endsWith(".html")).sort().map((f, i) => {
    const body = readFileSync(join(dir, f));
    return {
      url: `https://www.site${i % 50}.example/dir/page-${i}.html`, host: `www.site${i % 50}.example`, depth: 1, hops: 0,
      fetchedAt: new Date(Date.UTC(2026, 0, 1, 0, 0, i % 60)).toISOString(), ip: "192.0.2.1", status: 200, httpVersion: "1.1", statusText: "OK",
      headers: [["Content-Type", "text/html"], ["Content-Length", String(body.length)]],
      requestHeaders: [["User-Agent", "shardcrawl/0.1"], ["Accept", "*/*"]],
      body, timings: { total: 10 },
    };
  });
}

function cpuSeconds(fn) {
  const t0 = process.cpuUsage();
  const r = fn();
  const d = process.cpuUsage(t0);
  return { seconds: (d.user + d.system) / 1e6, result: r };
}

async function cpuSecondsAsync(fn) {
  const t0 = process.cpuUsage();
  const r = await fn();
  const d = process.cpuUsage(t0);
  return { seconds: (d.user + d.system) / 1e6, result: r };
}

const pages = corpus();
const n = pages.length;
const setup = (derivatives) => ({
  userAgent: "shardcrawl/0.1", maxLinksPerPage: 10_000, maxUrlLength: 2048, maxDecodedBytes: 10 * 1024 * 1024, honourNofollow: true,
  maxRedirects: 5, gzipLevel: GZIP_LEVEL, warcinfoId: "urn:uuid:00000000-0000-4000-8000-000000000000", scope: { mode: "any", keys: [] },
  bloom: { m: 1 << 24, k: 7, seed: 1 }, priorityRules: [], spoolDir: "/nonexistent", ...(derivatives ? { derivatives } : {}),
});
const task = (p) => ({ meta: { ...p, body: undefined }, body: p.body });
const plain = makeParseTask(setup(undefined));
const withDerivatives = makeParseTask(setup({ wet: true, wat: true }));

// Inputs of the pieces, computed once (not timed).
const prepared = pages.map((p) => {
  const parsed = parsePage({ url: p.url, status: p.status, headers: p.headers, body: p.body }, { userAgentToken: "shardcrawl" });
  const records = buildPageRecords(p, { gzipLevel: GZIP_LEVEL, payloadDigest: parsed.payloadDigest });
  return { p, parsed, records };
});
const watInput = ({ p, parsed, records }) => ({
  url: p.url, date: p.fetchedAt, responseRecordId: records.recordIds.response, responseFields: records.responseFields, responseHeadLength: records.responseHeadLength,
  status: p.status, statusText: p.statusText, httpVersion: p.httpVersion, headers: p.headers, bodyBytes: p.body.length, payloadDigest: records.payloadDigest,
  html: { title: parsed.title, metas: parsed.metas ?? [], links: parsed.links, canonical: parsed.canonical }, gzipLevel: GZIP_LEVEL,
});
const captureFields = ({ p, parsed }, k) => ({
  url: `${p.url}?r=${k}`, fetchTime: p.fetchedAt, status: p.status, mime: "text/html", charset: parsed.charset, language: parsed.lang ?? null,
  digest: parsed.payloadDigest, truncated: false, error: null, depth: p.depth, node: "n01",
});

const samples = { parsePlain: [], parseDerivatives: [], wet: [], wat: [], index: [], writePlain: [], writeDerivatives: [] };
let bytes;
const INDEX_ROWS = FULL ? 100_000 : 20_000;
const dir = mkdtempSync(join(tmpdir(), "bench-derivatives-"));
try {
  for (let round = 0; round < ROUNDS; round++) {
    // Alternate the order so drift on this shared machine does not favour one side.
    const order = round % 2 === 0 ? [[plain, "parsePlain"], [withDerivatives, "parseDerivatives"]] : [[withDerivatives, "parseDerivatives"], [plain, "parsePlain"]];
    for (const [fn, key] of order) {
      samples[key].push(cpuSeconds(() => { for (let r = 0; r < REPEAT; r++) for (const p of pages) fn(task(p)); }).seconds / (n * REPEAT));
    }
    let wetBytes = 0, watBytes = 0, wetPages = 0;
    samples.wet.push(cpuSeconds(() => {
      for (let r = 0; r < REPEAT; r++) for (const x of prepared) {
        if (!x.parsed.text) continue;
        const b = buildWetRecord({ url: x.p.url, date: x.p.fetchedAt, responseRecordId: x.records.recordIds.response, text: x.parsed.text, gzipLevel: GZIP_LEVEL });
        if (r === 0) { wetBytes += b.length; wetPages++; }
      }
    }).seconds / (n * REPEAT));
    samples.wat.push(cpuSeconds(() => {
      for (let r = 0; r < REPEAT; r++) for (const x of prepared) {
        const b = buildWatRecord(watInput(x));
        if (r === 0) watBytes += b.length;
      }
    }).seconds / (n * REPEAT));
    // The index of one WARC file of INDEX_ROWS captures: rows, sort, Parquet encode, fsync'd write.
    const indexPath = join(dir, `index-${round}.parquet`);
    samples.index.push((await cpuSecondsAsync(async () => {
      const rows = [];
      for (let k = 0; k < INDEX_ROWS; k++) rows.push(captureRow(captureFields(prepared[k % n], k), { file: "x.warc.gz", offset: k * 9000, length: 9000 }));
      await writeCaptureIndex(indexPath, rows);
    })).seconds / INDEX_ROWS);
    const indexBytesPerRow = statSync(indexPath).size / INDEX_ROWS;
    // The write stage as the parser runs it: batches of 8 appends, one WARC file per round.
    for (const withD of round % 2 === 0 ? [false, true] : [true, false]) {
      const results = prepared.map((x) => withDerivatives(task(x.p)));
      const sub = join(dir, `w-${round}-${withD}`);
      const derivatives = withD ? new WarcDerivatives({ dir: sub, wet: true, wat: true, index: true, warcinfo: { software: "bench" }, gzipLevel: GZIP_LEVEL }) : undefined;
      const writer = new WarcFileWriter({ dir: sub, prefix: "b", maxFileBytes: 1 << 30, warcinfo: { software: "bench" }, ...(derivatives ? { derivatives } : {}) });
      const t = await cpuSecondsAsync(async () => {
        for (let r = 0; r < REPEAT; r++) {
          for (let i = 0; i < results.length; i += 8) {
            await Promise.all(results.slice(i, i + 8).map((res, j) => writer.append({
              data: res.warc, responseOffset: res.responseOffset, responseLength: res.responseLength, cdx: res.cdx,
              ...(withD ? { derivatives: { ...(res.wet ? { wet: res.wet } : {}), ...(res.wat ? { wat: res.wat } : {}), capture: captureFields(prepared[i + j], r) } } : {}),
            })));
          }
        }
        await writer.close();
      });
      samples[withD ? "writeDerivatives" : "writePlain"].push(t.seconds / (n * REPEAT));
      rmSync(sub, { recursive: true, force: true });
    }
    bytes = {
      warcPerPage: prepared.reduce((s, x) => s + x.records.data.length, 0) / n,
      wetPerPage: wetBytes / n, wetPerWetRecord: wetBytes / Math.max(1, wetPages),
      watPerPage: watBytes / n,
      indexPerRow: indexBytesPerRow,
      htmlPerPage: pages.reduce((s, p) => s + p.body.length, 0) / n,
    };
    rmSync(indexPath, { force: true });
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

const us = (xs) => median(xs) * 1e6;
const result = {
  command: `pnpm bench (node scripts/bench/derivatives.mjs --mode ${opts.mode})`,
  mode: opts.mode, rounds: ROUNDS, pages: n, repeat: REPEAT, gzipLevel: GZIP_LEVEL, indexRows: INDEX_ROWS,
  cpuMicrosecondsPerPage: {
    parseTask: us(samples.parsePlain), parseTaskWithWetWat: us(samples.parseDerivatives),
    wetAndWatInParseTask: us(samples.parseDerivatives) - us(samples.parsePlain),
    wetRecord: us(samples.wet), watRecord: us(samples.wat), parquetIndexRow: us(samples.index),
    writeStage: us(samples.writePlain), writeStageWithDerivatives: us(samples.writeDerivatives),
    derivativesInWriteStage: us(samples.writeDerivatives) - us(samples.writePlain),
  },
  bytesPerPage: bytes,
  samples,
};
console.log(`derivatives: ${n} real pages x${REPEAT}, ${ROUNDS} rounds; CPU us/page: parse ${fmt(result.cpuMicrosecondsPerPage.parseTask)} -> ${fmt(result.cpuMicrosecondsPerPage.parseTaskWithWetWat)} with WET+WAT; WET ${fmt(result.cpuMicrosecondsPerPage.wetRecord)}, WAT ${fmt(result.cpuMicrosecondsPerPage.watRecord)}, Parquet row ${fmt(result.cpuMicrosecondsPerPage.parquetIndexRow)}; write stage ${fmt(result.cpuMicrosecondsPerPage.writeStage)} -> ${fmt(result.cpuMicrosecondsPerPage.writeStageWithDerivatives)}`);
console.log(`bytes/page: WARC ${fmt(bytes.warcPerPage, 0)}, WET ${fmt(bytes.wetPerPage, 0)}, WAT ${fmt(bytes.watPerPage, 0)}, Parquet ${fmt(bytes.indexPerRow, 0)} per row`);
if (opts.out) writeResult(opts.out, result);
