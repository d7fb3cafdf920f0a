// The outputs data teams read, from a real crawl: one node (real redis-server, fetcher and parser
// processes) crawls a small simweb with --derivatives all, and DuckDB (its Node package) queries
// the Parquet capture index: its row count equals the page log's fetched pages, every
// (warc_filename, warc_record_offset, warc_record_length) read from the WARC file as a byte range
// yields that URL's response record, and a per-domain GROUP BY matches simweb's own truth (the
// expected set of its World). The WET and WAT files beside the WARC files read back with warcio,
// and `shardcrawl index merge` merges the node's index files into one sorted file.
import { spawnSync } from "node:child_process";
import { createReadStream, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DuckDBInstance, type DuckDBConnection } from "@duckdb/node-api";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { WARCParser } from "warcio";
import { makeConfig, World, type SimwebConfig } from "../packages/simweb/src/index.js";
import { registrableDomain } from "../packages/shardcrawl/src/url/scope.js";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { readPageLog, runCrawl, SHARDCRAWL, simwebFlags, type CrawlRun, type PageLine } from "./harness/crawl.js";

const SIM: Partial<SimwebConfig> & { preset: string } = {
  preset: "tiny", seed: 21, hosts: 12, httpsShare: 0.3,
  pagesPerHost: { min: 10, alpha: 1.0, max: 60 }, hostPageCap: 60,
  robots: { absent: 0.3, empty: 0.2, rules: 0.5, "agent-specific": 0, "crawl-delay": 0, sitemap: 0, large: 0, redirect: 0, "disallow-all": 0, "server-error": 0, unreachable: 0 },
};

/** Records of one WARC-format file, read to its end with warcio. */
async function readAll(path: string, range?: { start: number; end: number }): Promise<Array<{ type: string; uri: string | undefined; refersTo: string | undefined; id: string | undefined; payload: Buffer }>> {
  const out = [];
  for await (const rec of new WARCParser(createReadStream(path, range))) {
    const payload = Buffer.from(await rec.readFully(false));
    out.push({ type: rec.warcType ?? "", uri: rec.warcTargetURI ?? undefined, refersTo: rec.warcHeader("WARC-Refers-To") ?? undefined, id: rec.warcHeader("WARC-Record-ID") ?? undefined, payload });
  }
  return out;
}

describe("outputs of a real crawl: WET, WAT and a Parquet index DuckDB queries", () => {
  let sim: SimwebProcess;
  let dir: string;
  let out: string;
  let warcDir: string;
  let run: CrawlRun;
  let pages: PageLine[];
  let world: World;
  let db: DuckDBInstance;
  let conn: DuckDBConnection;

  async function query(sql: string): Promise<Array<Record<string, unknown>>> {
    return (await conn.runAndReadAll(sql)).getRowObjectsJS() as Array<Record<string, unknown>>;
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sc-outputs-"));
    const { preset, ...overrides } = SIM;
    const cfgFile = join(dir, "simweb.json");
    writeFileSync(cfgFile, JSON.stringify(overrides));
    world = new World(makeConfig(SIM));
    sim = await startSimwebProcess({ extraArgs: ["--preset", preset, "--config", cfgFile] });
    const seedsFile = join(dir, "seeds.txt");
    writeFileSync(seedsFile, `${world.seeds().join("\n")}\n`);
    out = join(dir, "out");
    warcDir = join(out, "warc");
    run = await runCrawl([
      "--seeds", seedsFile, "--out", out, "--scope", "domains", "--delay", "20", "--max-crawl-delay", "200",
      // One parse thread: the WET and WAT records cross from the worker thread (the component test parses inline).
      "--fetchers", "1", "--parsers", "1", "--parser-threads", "1", "--derivatives", "all",
      ...simwebFlags(sim),
    ]);
    await sim.stop();
    pages = readPageLog(out);
    db = await DuckDBInstance.create(":memory:");
    conn = await db.connect();
  }, 300_000);

  afterAll(async () => {
    conn?.closeSync();
    db?.closeSync();
    await sim?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  test("the crawl exits 0 and leaves WET, WAT and an index beside every WARC file", () => {
    expect(run.stderr).not.toMatch(/fatal|dropped for the rest/);
    expect(run.code).toBe(0);
    const files = readdirSync(warcDir);
    const warcs = files.filter((f) => f.endsWith(".warc.gz"));
    expect(warcs.length).toBeGreaterThan(0);
    expect(files.filter((f) => f.endsWith(".open") || f.endsWith(".tmp"))).toEqual([]);
    for (const w of warcs) {
      const base = w.replace(/\.warc\.gz$/, "");
      expect(files).toEqual(expect.arrayContaining([`${base}.warc.wet.gz`, `${base}.warc.wat.gz`, `${base}.parquet`]));
    }
  });

  test("DuckDB: one index row per fetched page of the page log", async () => {
    const fetched = pages.filter((p) => p.warc !== undefined);
    expect(fetched.length).toBeGreaterThan(200);
    const [row] = await query(`SELECT count(*) AS n FROM read_parquet('${warcDir}/*.parquet')`);
    expect(Number(row!["n"])).toBe(fetched.length);
    // Row for row: the same URL, WARC file, offset and length as the page log says.
    const rows = await query(`SELECT url, warc_filename AS file, warc_record_offset AS off, warc_record_length AS len, fetch_status AS status FROM read_parquet('${warcDir}/*.parquet')`);
    const fromIndex = new Set(rows.map((r) => `${String(r["url"])} ${String(r["file"])} ${String(r["off"])} ${String(r["len"])} ${String(r["status"])}`));
    const fromLog = new Set(fetched.map((p) => `${p.url} ${p.warc!.file} ${p.warc!.offset} ${p.warc!.length} ${p.status}`));
    expect(fromIndex).toEqual(fromLog);
  });

  test("DuckDB: every (file, offset, length) read from its WARC file as a byte range is that URL's response record", async () => {
    const rows = await query(`SELECT url, warc_filename AS file, warc_record_offset AS off, warc_record_length AS len FROM read_parquet('${warcDir}/*.parquet')`);
    for (const r of rows) {
      const start = Number(r["off"]);
      const recs = await readAll(join(warcDir, String(r["file"])), { start, end: start + Number(r["len"]) - 1 });
      expect(recs.length).toBe(1);
      expect(recs[0]!.type).toBe("response");
      expect(recs[0]!.uri).toBe(r["url"]);
    }
  });

  test("DuckDB: a per-domain GROUP BY matches simweb's truth", async () => {
    const expected = world.expected({ seeds: world.seeds(), scope: "domains", userAgent: "shardcrawl/0.1", maxCrawlDelayMs: 200 });
    const truth = new Map<string, number>();
    for (const u of expected.urls) {
      const d = registrableDomain(new URL(u).hostname);
      truth.set(d, (truth.get(d) ?? 0) + 1);
    }
    const rows = await query(`SELECT url_host_registered_domain AS domain, count(DISTINCT url) AS n FROM read_parquet('${warcDir}/*.parquet') GROUP BY 1 ORDER BY 1`);
    const got = new Map(rows.map((r) => [String(r["domain"]), Number(r["n"])]));
    expect(truth.size).toBeGreaterThan(3);
    expect(got).toEqual(truth);
  });

  test("each index file is sorted so that a registrable domain's rows sit together", async () => {
    for (const f of readdirSync(warcDir).filter((n) => n.endsWith(".parquet"))) {
      const rows = await query(`SELECT url_host_registered_domain AS d FROM read_parquet('${join(warcDir, f)}')`);
      const domains = rows.map((r) => String(r["d"]));
      expect(domains).toEqual([...domains].sort());
    }
  });

  test("WET and WAT read back with warcio: a record per response (WAT) and per HTML 200 page (WET), each naming its response", async () => {
    let wat = 0;
    let wet = 0;
    for (const w of readdirSync(warcDir).filter((f) => f.endsWith(".warc.gz"))) {
      const base = w.replace(/\.warc\.gz$/, "");
      const responses = new Map((await readAll(join(warcDir, w))).filter((r) => r.type === "response").map((r) => [r.id, r.uri]));
      const watRecs = await readAll(join(warcDir, `${base}.warc.wat.gz`));
      expect(watRecs[0]!.type).toBe("warcinfo");
      expect(watRecs.length - 1).toBe(responses.size);
      for (const r of watRecs.slice(1)) {
        expect(r.type).toBe("metadata");
        expect(responses.get(r.refersTo)).toBe(r.uri);
        const env = (JSON.parse(r.payload.toString("utf8")) as { Envelope: { "WARC-Header-Metadata": Record<string, string> } }).Envelope;
        expect(env["WARC-Header-Metadata"]["WARC-Target-URI"]).toBe(r.uri);
        wat++;
      }
      for (const r of (await readAll(join(warcDir, `${base}.warc.wet.gz`))).slice(1)) {
        expect(r.type).toBe("conversion");
        expect(responses.get(r.refersTo)).toBe(r.uri);
        expect(r.payload.length).toBeGreaterThan(0);
        wet++;
      }
    }
    expect(wat).toBe(pages.filter((p) => p.warc !== undefined).length);
    expect(wet).toBeGreaterThan(0);
    expect(wet).toBeLessThanOrEqual(pages.filter((p) => p.status === 200).length);
  });

  test("shardcrawl index merge: the node's index files into one sorted file", async () => {
    const merged = join(dir, "merged.parquet");
    const r = spawnSync(process.execPath, [SHARDCRAWL, "index", "merge", "--out", merged, out], { encoding: "utf8", timeout: 60_000 });
    expect(r.status, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout) as { rows: number };
    const [total] = await query(`SELECT count(*) AS n FROM read_parquet('${warcDir}/*.parquet')`);
    expect(report.rows).toBe(Number(total!["n"]));
    const rows = await query(`SELECT url_host_registered_domain AS d, url_surtkey AS k FROM read_parquet('${merged}')`);
    expect(rows.length).toBe(report.rows);
    const keys = rows.map((x) => [String(x["d"]), String(x["k"])] as const);
    for (let i = 1; i < keys.length; i++) {
      const [a, b] = [keys[i - 1]!, keys[i]!];
      expect(a[0] < b[0] || (a[0] === b[0] && a[1] <= b[1])).toBe(true);
    }
    const usage = spawnSync(process.execPath, [SHARDCRAWL, "index", "merge", "--out", merged], { encoding: "utf8" });
    expect(usage.status).toBe(2);
  });
});
