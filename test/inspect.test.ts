// `shardcrawl inspect` on a real test crawl: a small simweb world, one node with a tiny
// per-host queue cap (so links are shed), --scope hosts (so cross-host links are out of scope) and
// robots.txt rules on every host. Ground truth comes from simweb's World (the links of every
// fetched page, the expected set of in-scope robots-allowed URLs) and the page log, never from
// the inspect code: every in-scope, allowed link of a fetched page that was not fetched must be
// reported queued or shed, and the CLI must give the exact reason and exit code for a
// robots-disallowed, an out-of-scope, a shed and a fetched URL. Also checks the structured logs.
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { makeConfig, World, type SimwebConfig } from "../packages/simweb/src/index.js";
import { startSimwebProcess, type SimwebProcess } from "./harness/simweb.js";
import { readPageLog, runCrawl, simwebFlags, SHARDCRAWL, type CrawlRun, type PageLine } from "./harness/crawl.js";
import { openTarget, type NodeTarget } from "../packages/shardcrawl/src/cli/inspect/node-target.js";
import { inspectUrl } from "../packages/shardcrawl/src/cli/inspect/inspect-url.js";
import { startNodeRedis, type RedisHandle } from "../packages/shardcrawl/src/node/redis-server.js";
import { normalizeUrl } from "../packages/shardcrawl/src/url/normalize.js";

const SIM: Partial<SimwebConfig> & { preset: string } = {
  preset: "tiny", seed: 5, hosts: 6, hostsPerDomain: [1], httpsShare: 0,
  // Hosts far larger than the 40-page budget: with a 4-URL queue and shed=drop, a dropped link is
  // seen and never re-admitted, so a small host can run its queue dry before the budget (timing
  // decides which one), and the "inspect host" test needs URLs still queued on a seed host.
  pagesPerHost: { min: 200, alpha: 1.0, max: 300 }, hostPageCap: 300,
  crossHostShare: 0.2, unservedShare: 0, nofollowShare: 0, metaNofollowShare: 0,
  robots: { absent: 0, empty: 0, rules: 1, "agent-specific": 0, "crawl-delay": 0, sitemap: 0, large: 0, redirect: 0, "disallow-all": 0, "server-error": 0, unreachable: 0 },
};

interface CliRun { code: number | null; json: Record<string, unknown>; text: string }

describe("inspect on a test crawl", () => {
  let sim: SimwebProcess;
  let dir: string;
  let out: string;
  let run: CrawlRun;
  let pages: PageLine[];
  let world: World;
  let seedHosts: string[];
  let redis: RedisHandle;
  let target: NodeTarget;

  function cli(...args: string[]): CliRun {
    const r = spawnSync(process.execPath, [SHARDCRAWL, "inspect", ...args, "--out", out, "--json"], { encoding: "utf8", timeout: 60_000 });
    let json: Record<string, unknown> = {};
    try {
      json = JSON.parse(r.stdout) as Record<string, unknown>;
    } catch {
      // left empty: the assertions on fields fail and show the text
    }
    return { code: r.status, json, text: `${r.stdout}${r.stderr}` };
  }

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), "sc-inspect-"));
    const { preset, ...overrides } = SIM;
    const cfgFile = join(dir, "simweb.json");
    writeFileSync(cfgFile, JSON.stringify(overrides));
    world = new World(makeConfig(SIM));
    sim = await startSimwebProcess({ extraArgs: ["--preset", preset, "--config", cfgFile] });
    const seeds = world.seeds().slice(0, 2);
    seedHosts = seeds.map((s) => new URL(s).hostname);
    const seedsFile = join(dir, "seeds.txt");
    writeFileSync(seedsFile, `${seeds.join("\n")}\n`);
    out = join(dir, "out");
    run = await runCrawl([
      "--seeds", seedsFile, "--out", out, "--scope", "hosts", "--delay", "10", "--max-pages", "40",
      "--max-queued-per-host", "4", "--shed", "drop", "--fetchers", "1", "--parsers", "1", "--max-crawl-delay", "100",
      ...simwebFlags(sim),
    ]);
    await sim.stop();
    pages = readPageLog(out);
    // Keep the node's Redis up for the whole file, so each CLI run attaches instead of starting one.
    redis = await startNodeRedis(out);
    target = await openTarget({ out }, seedHosts[0]!);
  }, 180_000);

  afterAll(async () => {
    await target?.close();
    await redis?.stop();
    await sim?.stop();
  });

  test("the crawl ran to its page budget", () => {
    expect(run.stderr).not.toMatch(/fatal/);
    expect(run.code).toBe(0);
    expect(pages.filter((p) => p.status === 200).length).toBeGreaterThan(10);
  });

  test("a fetched URL: status, time and WARC location from the page log", () => {
    const p = pages.find((l) => l.status === 200 && l.error === null && l.warc)!;
    const r = cli("url", p.url);
    expect(r.code, r.text).toBe(0);
    expect(r.json).toMatchObject({ status: "fetched", reason: "200", url: p.url });
    expect((r.json.facts as { lastOutcome: PageLine }).lastOutcome.warc).toEqual(p.warc);
    expect((r.json.facts as { lastOutcome: PageLine }).lastOutcome.fetched_at).toBe(p.fetched_at);
  });

  test("a robots-disallowed URL: refused by robots, and the cached robots.txt agrees", () => {
    const p = pages.find((l) => l.error === "robots-disallowed");
    expect(p, "the world links to robots-disallowed paths").toBeDefined();
    // simweb's expected set holds every in-scope URL robots.txt allows: this one must not be in it.
    const expected = world.expected({ seeds: world.seeds().slice(0, 2), scope: "hosts", userAgent: "shardcrawl/0.1" });
    expect(expected.urls.has(p!.url)).toBe(false);
    const r = cli("url", p!.url);
    expect(r.code, r.text).toBe(4);
    expect(r.json).toMatchObject({ status: "refused", reason: "robots", facts: { robots: { verdict: "disallowed", kind: "rules" } } });
  });

  test("an out-of-scope URL: a link to a host that is not a seed host", () => {
    const fetched = pages.filter((l) => l.status === 200).map((l) => l.url);
    const cross = fetched.flatMap((u) => linksOf(world, u)).find((l) => !seedHosts.includes(new URL(l).hostname));
    expect(cross, "fetched pages link to other hosts").toBeDefined();
    const r = cli("url", cross!);
    expect(r.code, r.text).toBe(4);
    expect(r.json).toMatchObject({ status: "refused", reason: "out-of-scope", facts: { seen: false, scope: { mode: "hosts", inScope: false } } });
  });

  test("every in-scope, allowed link of a fetched page is fetched, queued or shed; shed ones say why", async () => {
    const expected = world.expected({ seeds: world.seeds().slice(0, 2), scope: "hosts", userAgent: "shardcrawl/0.1" });
    const done = new Set(pages.map((l) => l.url));
    const candidates = new Set<string>();
    for (const p of pages.filter((l) => l.status === 200)) {
      for (const l of linksOf(world, p.url)) if (expected.urls.has(l) && !done.has(l)) candidates.add(l);
    }
    expect(candidates.size).toBeGreaterThan(0);
    const byStatus: Record<string, string[]> = {};
    for (const u of candidates) {
      const r = await inspectUrl(target, u, { scanBytes: 64 * 1024 * 1024, maxScan: 100_000 });
      (byStatus[`${r.status}${r.reason ? `:${r.reason}` : ""}`] ??= []).push(u);
    }
    const allowed = new Set(["queued", "shed:shed:host-full", "shed:dropped:host-full"]);
    const unexplained = Object.entries(byStatus).filter(([k]) => !allowed.has(k));
    expect(unexplained, JSON.stringify(byStatus).slice(0, 2000)).toEqual([]);
    const shed = [...(byStatus["shed:shed:host-full"] ?? []), ...(byStatus["shed:dropped:host-full"] ?? [])];
    expect(shed.length).toBeGreaterThan(0);
    // The CLI says the same for one of them, with the documented exit code.
    const r = cli("url", shed[0]!);
    expect(r.code, r.text).toBe(5);
    expect(r.json.status).toBe("shed");
    expect(String(r.json.reason)).toMatch(/^(shed|dropped):host-full$/);
  });

  test("inspect host: tiers, robots rules for our agent, recent outcomes from the page log", () => {
    const host = seedHosts[0]!;
    const r = cli("host", host);
    expect(r.code, r.text).toBe(0);
    const j = r.json as unknown as {
      known: boolean; frontier: { queued: number; byTier: number[]; next: Array<{ tier: number; urls: string[] }> };
      robots: { cached: boolean; kind: string; group: { matched: string; rules: string[] } };
      recent: PageLine[]; budget: { fetched: number };
    };
    expect(j.known).toBe(true);
    // Tiers: the counts add up to the host's queued gauge, within the per-host cap, and the queue
    // heads are URLs of this host that were not fetched, each of which inspect url finds queued in that tier.
    expect(j.frontier.byTier.reduce((a, b) => a + b, 0)).toBe(j.frontier.queued);
    expect(j.frontier.queued).toBeLessThanOrEqual(4);
    expect(j.frontier.queued).toBeGreaterThan(0);
    const head = j.frontier.next[0]!;
    expect(new URL(head.urls[0]!).hostname).toBe(host);
    const q = cli("url", head.urls[0]!);
    expect(q.code, q.text).toBe(3);
    expect(q.json).toMatchObject({ status: "queued", facts: { queued: { tier: head.tier, position: 0 } } });
    // Robots: simweb's rules file for this host, group "*" (the "rules" kind has no agent group).
    expect(j.robots).toMatchObject({ cached: true, kind: "rules", group: { matched: "*" } });
    const served = world.robots.text(world.hostByName(host)!) ?? "";
    for (const rule of j.robots.group.rules) expect(served).toContain(rule.split(": ")[1]!);
    expect(j.robots.group.rules.some((x) => x.startsWith("Disallow:"))).toBe(true);
    // Recent outcomes: the newest page-log lines of this host, newest first.
    const mine = pages.filter((l) => new URL(l.url).hostname === host).sort((a, b) => Date.parse(b.fetched_at) - Date.parse(a.fetched_at));
    expect(j.recent.length).toBe(Math.min(10, mine.length));
    expect(new Set(j.recent.map((l) => l.url))).toEqual(new Set(mine.slice(0, j.recent.length).map((l) => l.url)));
    expect(j.budget.fetched).toBe(mine.filter((l) => l.error === null).length);
  });

  test("structured logs: JSON lines with level, time, msg, role, node and pid in out/logs", () => {
    const dirLogs = join(out, "logs");
    expect(existsSync(dirLogs)).toBe(true);
    const files = readdirSync(dirLogs);
    for (const role of ["supervisor", "fetcher-0", "parser-0"]) expect(files.some((f) => f.startsWith(`${role}.`) && f.endsWith(".log"))).toBe(true);
    const lines = files.flatMap((f) => readFileSync(join(dirLogs, f), "utf8").split("\n").filter(Boolean));
    expect(lines.length).toBeGreaterThan(3);
    for (const l of lines) {
      const j = JSON.parse(l) as Record<string, unknown>;
      expect(typeof j.msg).toBe("string");
      expect(["trace", "debug", "info", "warn", "error", "fatal"]).toContain(j.level);
      expect(Number.isNaN(Date.parse(String(j.time)))).toBe(false);
      expect(["supervisor", "fetcher", "parser"]).toContain(j.role);
      expect(j.node).toBe("node0");
      expect(typeof j.pid).toBe("number");
    }
    expect(lines.some((l) => l.includes("node stopped"))).toBe(true);
  });
});

/** Canonical targets of a fetched page's followable links, normalized as the crawler does. */
function linksOf(world: World, url: string): string[] {
  const r = world.resolve(url);
  if (!r || r.resource.kind !== "page" || r.resource.page.nofollowPage) return [];
  return world.links(r.resource.page).filter((l) => !l.nofollow).map((l) => normalizeUrl(l.url)).filter((u): u is string => u !== null);
}
