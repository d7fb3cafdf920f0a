// Disk lifecycle on a real small file system: the node's output lives on an 8 MB tmpfs, the crawl
// writes about three times that, and closed WARC, CDXJ and page-log files are shipped by
// scripts/ship.sh to a folder elsewhere and deleted (--on-file-closed, --delete-shipped). Shipping
// is held back at the start (the command fails while a gate file exists), so the disk fills: leasing
// must pause at --min-free-disk (4 MB of 8), before any write fails with ENOSPC; once the gate opens, the failed
// shipments are retried, space returns, the pause ends (hysteresis) and the crawl completes. Then
// every page-log line's record reads back from the shipped WARC files: 0 lost, 0 duplicates.
// Redis's data folder is elsewhere (--redis-dir). Needs root to mount; skipped with the reason otherwise.
import { execFileSync } from "node:child_process";
import { createReadStream, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { WARCParser } from "warcio";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { ROOT, simwebFlags, startCrawl, verifyLog, writeSeeds, type CrawlRun, type PageLine, type VerifyReport } from "./harness/crawl.js";
import { setTimeout as sleep } from "node:timers/promises";

const DISK_BYTES = 8 * 1024 * 1024;
const dir = mkdtempSync(join(tmpdir(), "sc-disk-ship-"));
const disk = join(dir, "disk");
mkdirSync(disk);
let mountError = "";
// Free space is read before every lease batch (not only on the supervisor's 1 s timer), so a fast
// crawl cannot write past the threshold between two checks.
try {
  execFileSync("mount", ["-t", "tmpfs", "-o", `size=${DISK_BYTES}`, "tmpfs", disk], { stdio: ["ignore", "ignore", "pipe"] });
} catch (err) {
  mountError = `cannot mount a tmpfs (needs root): ${(err as Error).message.split("\n")[0]}`;
  console.warn(`crawl-disk-ship: SKIPPED: ${mountError}`);
}

function filesUnder(d: string): string[] {
  if (!existsSync(d)) return [];
  return readdirSync(d, { recursive: true, encoding: "utf8" }).map((f) => join(d, f)).filter((p) => statSync(p).isFile());
}

describe.skipIf(mountError !== "")("a crawl three times the size of its disk, shipping as it goes", () => {
  let sim: SimwebProcess;
  let out: string;
  let shipped: string;
  let run: CrawlRun;
  let report: VerifyReport;
  let sawPause = false;
  let counters: Record<string, number> = {};
  let logText = "";

  beforeAll(async () => {
    const cfg = join(dir, "simweb.json");
    writeFileSync(cfg, JSON.stringify({ pageSize: { median: 60000, mean: 70000, min: 30000, max: 150000 }, pagesPerHost: { min: 20, alpha: 1.2, max: 40 }, hostPageCap: 40 }));
    const configArgs = ["--preset", "polite", "--seed", "7", "--hosts", "60", "--config", cfg];
    sim = await startSimwebProcess({ extraArgs: configArgs });
    const seeds = join(dir, "seeds.txt");
    writeSeeds(configArgs, seeds);
    out = join(disk, "out");
    shipped = join(dir, "shipped");
    const gate = join(dir, "gate");
    writeFileSync(gate, "closed");
    const crawl = startCrawl([
      "--seeds", seeds, "--out", out, "--scope", "domains", "--delay", "10", "--max-crawl-delay", "1000",
      "--fetchers", "1", "--parsers", "1", "--parser-threads", "1", "--fetcher-concurrency", "4",
      // What is fetched when the pause starts is still written: the threshold must hold the parse
      // stage (its bodies wait in out/spool/ on this disk too) plus what is in flight.
      "--parse-queue-max-bytes", "600000",
      "--redis-dir", join(dir, "redis-data"),
      "--warc-max-file-bytes", String(256 * 1024),
      "--min-free-disk", "4M",
      "--on-file-closed", `test ! -e ${gate} && ${join(ROOT, "scripts/ship.sh")}`, "--delete-shipped",
      ...simwebFlags(sim),
    ], { env: { SHIP_DEST: shipped, SHIP_NODE: "n1" } });
    // Wait for the pause (shipping is held back, so the disk fills), then open the gate.
    const until = Date.now() + 300_000;
    let exited = false;
    void crawl.done.then(() => (exited = true));
    while (!exited && Date.now() < until) {
      const s = await fetchStatus(out);
      if (s?.stats?.pressure?.diskFull?.includes("low disk space")) {
        sawPause = true;
        break;
      }
      await sleep(200);
    }
    rmSync(gate, { force: true });
    run = await crawl.done;
    await sim.stop();
    report = verifyLog(configArgs, sim.logFile, { minGapMs: 10, maxConcurrency: 1, seedsFile: seeds, scope: "domains", maxCrawlDelayMs: 1000 });
    counters = (JSON.parse(readFileSync(join(out, "summary.json"), "utf8")) as { stats: { counters: Record<string, number> } }).stats.counters;
    logText = run.stderr + filesUnder(join(out, "logs")).map((f) => readFileSync(f, "utf8")).join("\n");
  }, 900_000);

  afterAll(async () => {
    await sim?.stop();
    try {
      execFileSync("umount", [disk]);
    } catch {
      // already unmounted
    }
    rmSync(dir, { recursive: true, force: true });
  });

  test("the crawl completes; leasing paused on low space before any write failed", () => {
    expect(run.stderr).not.toMatch(/fatal/);
    expect(run.code).toBe(0);
    expect(sawPause).toBe(true);
    expect(counters.lowDiskPauses ?? 0).toBeGreaterThanOrEqual(1);
    expect(logText).not.toMatch(/ENOSPC|no space left/i);
    expect(counters.diskPauses ?? 0).toBeGreaterThanOrEqual(1); // and it resumed
    expect(counters["ship:failures"] ?? 0).toBeGreaterThan(0); // held-back shipments were retried
  });

  test("it wrote three times the disk's size, all of it shipped and deleted locally", () => {
    const shippedBytes = filesUnder(shipped).reduce((n, f) => n + statSync(f).size, 0);
    console.log(`disk ${DISK_BYTES} bytes; shipped ${shippedBytes} bytes in ${filesUnder(shipped).length} files; ship counters ${JSON.stringify({ files: counters["ship:files"], failures: counters["ship:failures"], lowDiskPauses: counters.lowDiskPauses })}`);
    expect(shippedBytes).toBeGreaterThanOrEqual(3 * DISK_BYTES);
    const left = [...filesUnder(join(out, "warc")), ...filesUnder(join(out, "pages"))];
    expect(left).toEqual([]);
    expect(readFileSync(join(out, "shipped.log"), "utf8").trim().split("\n").length).toBe(filesUnder(shipped).length);
  });

  test("every page-log record reads back from the shipped files: 0 lost, 0 duplicates", async () => {
    const pages: PageLine[] = [];
    for (const f of filesUnder(join(shipped, "n1", "pages")).sort()) {
      for (const l of readFileSync(f, "utf8").split("\n")) if (l.trim()) pages.push(JSON.parse(l) as PageLine);
    }
    const withWarc = pages.filter((p) => p.warc);
    expect(withWarc.length).toBeGreaterThan(500);
    const records = new Map<string, string>();
    let dup = 0;
    for (const f of filesUnder(join(shipped, "n1", "warc")).filter((x) => x.endsWith(".warc.gz"))) {
      for await (const r of new WARCParser(createReadStream(f))) {
        await r.readFully(false);
        if (r.warcType !== "response") continue;
        if (records.has(r.warcTargetURI!)) dup++;
        records.set(r.warcTargetURI!, r.warcHeader("WARC-Payload-Digest") ?? "");
      }
    }
    expect(dup).toBe(0);
    for (const p of withWarc) expect(records.get(p.url), p.url).toBe(p.digest);
    expect(records.size).toBe(withWarc.length);
    // CDXJ shipped for every WARC file.
    const warcs = filesUnder(join(shipped, "n1", "warc")).filter((x) => x.endsWith(".warc.gz")).length;
    expect(filesUnder(join(shipped, "n1", "warc")).filter((x) => x.endsWith(".cdxj")).length).toBe(warcs);
    // And the server's log agrees: every expected page fetched once.
    const c = report.coverage!;
    expect(c.missing.count).toBe(0);
    expect(c.duplicates.extraFetches).toBe(0);
  });
});

type Status = { stats?: { pressure?: { diskFull?: string } } };
async function fetchStatus(out: string): Promise<Status | null> {
  try {
    const { statusPort } = JSON.parse(readFileSync(join(out, "status.json"), "utf8")) as { statusPort: number };
    const res = await fetch(`http://127.0.0.1:${statusPort}/status`, { signal: AbortSignal.timeout(2000) });
    return (await res.json()) as Status;
  } catch {
    return null;
  }
}
