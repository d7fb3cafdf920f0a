// Observing a real crawl: one node (its own Redis, real fetcher and parser processes) crawls a
// small simweb world with throttling hosts, so hosts push back. While it runs, headless Chromium
// (Debian's, driven by playwright-core) opens the node's status page and the cluster page and
// checks that the charts have data and the bottleneck and hosts sections are filled, with
// screenshots in tmp/. Once the crawl has drained, /metrics passes `promtool check metrics`, its
// page counters match the page log, and every metric the Grafana dashboard uses is exported.
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { chromium, type Browser, type Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { ROOT, SHARDCRAWL, TEST_UA, readPageLog, writeSeeds } from "./harness/crawl.js";
import { flowSimConfig, writeSimConfig } from "./flow-support.js";
import { EXIT_CODES } from "../packages/shardcrawl/src/node/exit-codes.js";
import { CHROMIUM, dashboardExprs, exportedFamilies, missingTool, promtool } from "./harness/tools.js";
import { setTimeout as sleep } from "node:timers/promises";

const noChromium = missingTool(CHROMIUM);
const noPromtool = missingTool("promtool");
const SHOTS = join(ROOT, "tmp");

/** Sample value of the series with exactly these labels (after node), or undefined. */
function sample(text: string, name: string, labels = ""): number | undefined {
  const re = new RegExp(`^${name}\\{node="node0"${labels ? `,${labels}` : ""}\\} (\\S+)$`, "m");
  const m = re.exec(text);
  return m ? Number(m[1]) : undefined;
}

function samples(text: string, name: string): Array<{ labels: string; value: number }> {
  const out: Array<{ labels: string; value: number }> = [];
  for (const m of text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, "gm"))) out.push({ labels: m[1]!, value: Number(m[2]) });
  return out;
}

describe("observing a crawl: metrics, status page, cluster page", () => {
  let sim: SimwebProcess;
  let node: ChildProcess;
  let nodeExit: Promise<number | null>;
  let nodeStderr = "";
  let out: string;
  let dir: string;
  let base: string;
  let browser: Browser | undefined;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sc-observe-"));
    // Throttling hosts (hidden capacity 1, 429/503 beyond) next to slow healthy ones.
    const cfg = flowSimConfig({ throttle: 0.5, slow: 1 }, {
      hostPageCap: 50, pagesPerHost: { min: 50, alpha: 1, max: 50 },
      slow: { medianMs: 150, sigma: 0.2, maxMs: 400 },
      throttle: { maxConcurrency: [1], ratePerSec: [1000], retryAfterSec: [1] },
    });
    const { args } = writeSimConfig(join(dir, "sim.json"), cfg, 5, 6);
    sim = await startSimwebProcess({ extraArgs: args });
    writeSeeds(args, join(dir, "seeds.txt"));
    out = join(dir, "out");
    // `node` with exitWhenDone false: the node keeps serving after the frontier drains, so the
    // final numbers can be scraped; the test stops it.
    writeFileSync(join(dir, "node.json"), JSON.stringify({
      seeds: join(dir, "seeds.txt"), out, scope: "hosts", delayMs: 50, hostConcurrency: 4, fetchers: 1, parsers: 1, parserThreads: 1,
      fetcherConcurrency: 16, retryBaseMs: 200, allowPrivate: true, caFile: sim.ca, userAgent: TEST_UA, progress: "off", exitWhenDone: false,
      connectTo: [`:80:127.0.0.1:${sim.http}`, `:443:127.0.0.1:${sim.https}`],
    }));
    node = spawn(process.execPath, [SHARDCRAWL, "node", "--config", join(dir, "node.json")], { stdio: ["ignore", "ignore", "pipe"], detached: true });
    node.stderr?.on("data", (b: Buffer) => {
      if (nodeStderr.length < 64 * 1024) nodeStderr += b.toString();
    });
    nodeExit = new Promise((r) => node.once("exit", (code) => r(code)));
    const deadline = Date.now() + 60_000;
    while (!existsSync(join(out, "status.json")) && Date.now() < deadline) await sleep(100);
    const { statusPort } = JSON.parse(readFileSync(join(out, "status.json"), "utf8")) as { statusPort: number };
    base = `http://127.0.0.1:${statusPort}`;
    mkdirSync(SHOTS, { recursive: true });
    if (!noChromium) browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ["--no-sandbox", "--disable-gpu"] });
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    if (node && node.exitCode === null) {
      try {
        process.kill(-node.pid!, "SIGTERM");
      } catch {
        // already gone
      }
      const t = setTimeout(() => {
        try {
          process.kill(-node.pid!, "SIGKILL");
        } catch {
          // gone
        }
      }, 30_000);
      await nodeExit;
      clearTimeout(t);
    }
    await sim?.stop();
  }, 60_000);

  /** Waits until the page's charts have data and its bottleneck and hosts sections are filled. */
  async function waitForFilledPage(page: Page, rowsSelector: string): Promise<void> {
    // Runs in the page (a string: the tests' TypeScript has no DOM types).
    await page.waitForFunction(`(() => {
      const points = (sel) => Math.max(0, ...[...document.querySelectorAll(sel + " path.series")].map((p) => Number(p.getAttribute("data-points"))));
      const filledRows = [...document.querySelectorAll(${JSON.stringify(rowsSelector)} + " tr")].filter((tr) => !tr.querySelector("td.empty")).length;
      return points("#throughput") > 1 && points("#queues") > 1 && filledRows > 0;
    })()`, undefined, { timeout: 45_000, polling: 500 });
  }

  test.skipIf(noChromium)("the node's status page shows live charts, the bottleneck and the hosts under pressure", async () => {
    const page = await browser!.newPage({ viewport: { width: 1300, height: 1000 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${base}/`);
    await waitForFilledPage(page, "#hosts");
    // Charts: each series is a path through its points; the throughput one has real rates.
    const d = await page.locator('#throughput path[data-series="fetched/s"]').getAttribute("d");
    expect(d!.split("L").length).toBeGreaterThan(1);
    const queued = Number(await page.locator('#queues path[data-series="frontier"]').getAttribute("data-points"));
    expect(queued).toBeGreaterThan(1);
    // Bottleneck: one of the stages, with a reason.
    expect(await page.locator("#stage").textContent()).toMatch(/^(idle|draining|upstream|parse|memory|fetch|politeness)$/);
    expect((await page.locator("#reason").textContent())!.length).toBeGreaterThan(5);
    // Hosts: the throttling hosts, with their lowered limits.
    const hostRows = await page.locator("#hosts tr").allTextContents();
    expect(hostRows.some((r) => /\.test/.test(r))).toBe(true);
    expect(await page.locator("#procs tr").count()).toBeGreaterThanOrEqual(4);
    const shot = join(SHOTS, "status-page.png");
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`status page screenshot: ${shot}`);
    expect(errors).toEqual([]);
    await page.close();
  }, 60_000);

  test.skipIf(noChromium)("the cluster page reads the node from the cluster file", async () => {
    // The node's statusPort is 0 (any free port): the cluster page finds it via out/status.json.
    const file = join(dir, "cluster.yaml");
    writeFileSync(file, JSON.stringify({ name: "observe", nodes: [{ name: "node0", host: "127.0.0.1", statusPort: 0, out }, { name: "ghost", host: "127.0.0.1", statusPort: 1 }] }));
    const serve = spawn(process.execPath, [SHARDCRAWL, "status", "--cluster", file, "--serve", "--poll", "500", "--timeout", "2000"], { stdio: ["ignore", "pipe", "pipe"] });
    try {
      const url = await new Promise<string>((resolve, reject) => {
        const t = setTimeout(() => reject(new Error("the cluster page did not print its URL")), 30_000);
        createInterface({ input: serve.stdout! }).once("line", (l) => {
          clearTimeout(t);
          resolve(l.replace(/^cluster page: /, ""));
        });
      });
      expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
      const page = await browser!.newPage({ viewport: { width: 1300, height: 900 } });
      await page.goto(url);
      await waitForFilledPage(page, "#nodes");
      const rows = await page.locator("#nodes tr").allTextContents();
      expect(rows.find((r) => r.startsWith("node0"))).toMatch(/^node0up/);
      expect(rows.find((r) => r.startsWith("ghost"))).toMatch(/down/);
      const shot = join(SHOTS, "cluster-page.png");
      await page.screenshot({ path: shot, fullPage: true });
      console.log(`cluster page screenshot: ${shot}`);
      await page.close();
    } finally {
      serve.kill("SIGTERM");
    }
  }, 60_000);

  test("once drained, /metrics passes promtool and its page counters match the page log", async () => {
    // Drained (nothing queued, leased or parsing) and the counters flushed (two equal scrapes).
    let text = "";
    let prev = "";
    const deadline = Date.now() + 90_000;
    for (;;) {
      text = await (await fetch(`${base}/metrics`)).text();
      const drained = ["shardcrawl_frontier_urls", "shardcrawl_fetch_leases", "shardcrawl_parse_queue_pages", "shardcrawl_parse_in_flight_pages"].every((n) => sample(text, n) === 0);
      const pages = samples(text, "shardcrawl_pages_total").map((s) => `${s.labels}=${s.value}`).join();
      if (drained && pages === prev && pages !== "") break;
      prev = drained ? pages : "";
      if (Date.now() > deadline) throw new Error(`the crawl did not drain in time; stderr: ${nodeStderr}`);
      await sleep(1500);
    }
    writeFileSync(join(SHOTS, "observe-metrics.txt"), text);

    if (!noPromtool) {
      const check = promtool(["check", "metrics"], text);
      expect(check.output, "promtool lint findings").toBe("");
      expect(check.code).toBe(0);
    }

    const lines = readPageLog(out);
    const pages = samples(text, "shardcrawl_pages_total");
    const total = pages.reduce((a, s) => a + s.value, 0);
    console.log(`page log lines ${lines.length}; shardcrawl_pages_total ${pages.map((s) => `${s.labels.replace(/^node="node0",/, "")} ${s.value}`).join(", ")}`);
    expect(total).toBeGreaterThan(0);
    expect(total).toBe(lines.length);
    const ok = lines.filter((l) => l.error === null && l.status !== null && l.status >= 200 && l.status < 300);
    expect(sample(text, "shardcrawl_pages_total", 'outcome="2xx"')).toBe(ok.length);
    expect(sample(text, "shardcrawl_page_bytes_total", 'outcome="2xx"')).toBe(ok.reduce((a, l) => a + l.bytes, 0));
    expect(sample(text, "shardcrawl_pages_fetched_total")).toBeGreaterThanOrEqual(ok.length);

    // Retries and back-off from the throttling hosts.
    // Every retry has a page-log line (an attempt that will be tried again).
    const retries = samples(text, "shardcrawl_fetch_retries_total").reduce((a, s) => a + s.value, 0);
    expect(retries).toBeGreaterThan(0);
    expect(retries).toBe(lines.filter((l) => /attempt \d+ of \d+: retry in/.test(l.error_detail ?? "")).length);
    const ratio = sample(text, "shardcrawl_fetch_retry_ratio")!;
    expect(ratio).toBeGreaterThan(0);
    expect(ratio).toBeLessThan(1);
    expect(sample(text, "shardcrawl_host_limit_decreases_total")).toBeGreaterThan(0);
    expect(samples(text, "shardcrawl_host_concurrency_limit").length).toBeGreaterThan(0);
    // TLS: every https host needs at least one full handshake (sessions are cached per host); every
    // TLS connection, full or resumed, is a connection opened.
    const httpsHosts = new Set(lines.filter((l) => l.url.startsWith("https:")).map((l) => new URL(l.url).host));
    const fullTls = sample(text, "shardcrawl_tls_handshakes_total")!;
    const resumedTls = sample(text, "shardcrawl_tls_session_reuses_total")!;
    expect(fullTls).toBeGreaterThanOrEqual(httpsHosts.size);
    expect(sample(text, "shardcrawl_connections_opened_total")).toBeGreaterThanOrEqual(fullTls + resumedTls);

    // Processes: CPU and memory of every process, loop lag of every Node process.
    for (const p of ["supervisor", "fetcher-0", "parser-0", "redis"]) {
      expect(sample(text, "shardcrawl_process_cpu_seconds_total", `process="${p}"`), p).toBeGreaterThan(0);
      expect(sample(text, "shardcrawl_process_resident_memory_bytes", `process="${p}"`), p).toBeGreaterThan(1e6);
    }
    for (const p of ["supervisor", "fetcher-0", "parser-0"]) {
      const lag = sample(text, "shardcrawl_event_loop_lag_max_seconds", `process="${p}"`);
      expect(lag, p).toBeGreaterThanOrEqual(0);
      expect(lag, p).toBeLessThan(10);
    }
    expect(sample(text, "shardcrawl_redis_memory_used_bytes")).toBeGreaterThan(1e5);
    expect(samples(text, "shardcrawl_bottleneck_stage")).toHaveLength(1);

    // The Grafana dashboard uses only metrics this node exports.
    const exported = exportedFamilies(text);
    const used = new Set(dashboardExprs().flatMap(({ expr }) => [...expr.matchAll(/\bshardcrawl_[a-z0-9_]+/g)].map((m) => m[0])));
    expect(used.size).toBeGreaterThan(20);
    expect([...used].filter((n) => !exported.has(n)), "dashboard metrics the node does not export").toEqual([]);

    // A node stopped by a signal exits gracefully with the documented code (docs/crawling.md "Exit codes").
    process.kill(-node.pid!, "SIGTERM");
    expect(await nodeExit).toBe(EXIT_CODES.signal);
  }, 120_000);
});
