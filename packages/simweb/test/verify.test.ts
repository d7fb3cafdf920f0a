import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { copyFileSync, writeFileSync, appendFileSync, readFileSync } from "node:fs";
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { startSimwebInProcess } from "../../../test/harness/simweb.js";
import { verifyLog, type RunningSimweb } from "../src/index.js";
import { get } from "./client.js";

const UA = "shardcrawl/1.0";
const GAP = 40;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("simweb verify", () => {
  let sim: RunningSimweb & { logFile: string | undefined };
  let seeds: string[];
  let cleanLog: string;
  beforeAll(async () => {
    sim = await startSimwebInProcess({ config: { seed: 77, hostPageCap: 25 } });
    // Two seeds whose robots.txt is fetchable and which have robots-disallowed pages to plant later.
    seeds = sim.world.hosts().filter((h) => ["rules", "sitemap", "crawl-delay", "absent"].includes(h.robots)).slice(0, 2).map((h) => `${h.scheme}://${h.name}/`);
    const expected = [...sim.world.expected({ seeds, scope: "hosts", userAgent: UA }).urls];
    // A polite mini-crawl: robots.txt first, then one request at a time per host with a gap.
    const byHost = new Map<string, string[]>();
    for (const u of expected) {
      const h = new URL(u).hostname;
      if (!byHost.has(h)) byHost.set(h, [`${new URL(u).origin}/robots.txt`]);
      byHost.get(h)!.push(u);
    }
    await Promise.all([...byHost.values()].map(async (urls) => {
      for (const u of urls) {
        const r = await get(sim, u, { headers: { "user-agent": UA } });
        expect(r.status).toBeGreaterThan(0);
        await sleep(GAP + 5);
      }
    }));
    await sleep(400);
    cleanLog = `${sim.logFile}.clean`;
    copyFileSync(sim.logFile!, cleanLog);
  });
  afterAll(async () => sim?.close());

  test("a clean log passes, with full coverage", async () => {
    const report = await verifyLog(sim.world, { logFile: cleanLog, minGapMs: GAP, maxConcurrency: 1, userAgent: UA, seeds, scope: "hosts" });
    expect(report.violations.gap.count).toBe(0);
    expect(report.violations.concurrency.count).toBe(0);
    expect(report.violations.disallowed.count).toBe(0);
    expect(report.ok).toBe(true);
    expect(report.coverage!.expected).toBeGreaterThan(5);
    expect(report.coverage!.ratio).toBe(1);
    expect(report.coverage!.missing.count).toBe(0);
    expect(report.coverage!.unexpected.count).toBe(0);
  });

  test("flags a planted gap violation, a planted concurrency violation and a planted disallowed fetch", async () => {
    const host = new URL(seeds[0]!).hostname;
    const h = sim.world.hostByName(host)!;
    // back-to-back and concurrent requests to one host
    await get(sim, seeds[0]!, { headers: { "user-agent": UA } });
    await get(sim, seeds[0]!, { headers: { "user-agent": UA } });
    await Promise.all([1, 2, 3].map(() => get(sim, `${seeds[0]}?slow=${Math.random()}`, { headers: { "user-agent": UA } })));
    // a path robots.txt disallows for us: find one among the host's pages or synthesize from its rules
    const txt = sim.world.robots.text(h) ?? "";
    const rule = /^disallow: (\/[a-z~]+\/)$/im.exec(txt)?.[1] ?? null;
    const forbidden = rule ?? "/never-allowed/";
    if (!rule) expect.fail(`host ${host} has no simple Disallow rule:\n${txt}`);
    await sleep(200);
    await get(sim, `${h.info.scheme}://${host}${forbidden}x.html`, { headers: { "user-agent": UA } });
    await sleep(400);
    const report = await verifyLog(sim.world, { logFile: sim.logFile!, minGapMs: GAP, maxConcurrency: 1, userAgent: UA });
    expect(report.ok).toBe(false);
    expect(report.violations.gap.count).toBeGreaterThan(0);
    expect(report.violations.gap.examples[0]!.host).toBe(host);
    expect(report.violations.disallowed.count).toBe(1);
    expect(report.violations.disallowed.examples[0]!.path).toBe(`${forbidden}x.html`);
    // concurrency: three at once exceed a limit of 2 in any window, and overlap
    const c2 = await verifyLog(sim.world, { logFile: sim.logFile!, minGapMs: 1000, maxConcurrency: 2, userAgent: UA });
    expect(c2.violations.gap.count).toBeGreaterThan(0);
  });

  test("the CLI prints a JSON report and exits 1 on violations, 0 on a clean log; bad lines are counted, not fatal", () => {
    const cli = join(import.meta.dirname, "../dist/cli.js");
    const seedsFile = `${cleanLog}.seeds`;
    writeFileSync(seedsFile, seeds.join("\n") + "\n");
    const cfg = ["--preset", "tiny", "--seed", "77", "--page-cap", "25"];
    const clean = spawnSync(process.execPath, [cli, "verify", "--log", cleanLog, ...cfg, "--min-gap-ms", String(GAP), "--max-concurrency", "1", "--user-agent", UA, "--seeds", seedsFile, "--scope", "hosts"], { encoding: "utf8" });
    expect(clean.stderr).toBe("");
    expect(clean.status).toBe(0);
    expect(JSON.parse(clean.stdout)).toMatchObject({ ok: true, coverage: { ratio: 1 } });
    const dirty = spawnSync(process.execPath, [cli, "verify", "--log", sim.logFile!, ...cfg, "--min-gap-ms", String(GAP)], { encoding: "utf8" });
    expect(dirty.status).toBe(1);
    expect(JSON.parse(dirty.stdout).violations.disallowed.count).toBe(1);
    const broken = `${cleanLog}.broken`;
    writeFileSync(broken, readFileSync(cleanLog, "utf8"));
    appendFileSync(broken, "not json\n{\"half\":\n");
    const b = spawnSync(process.execPath, [cli, "verify", "--log", broken, ...cfg, "--min-gap-ms", String(GAP)], { encoding: "utf8" });
    expect(b.status).toBe(0);
    expect(JSON.parse(b.stdout).badLines).toBe(2);
    const missing = spawnSync(process.execPath, [cli, "verify", ...cfg], { encoding: "utf8" });
    expect(missing.status).toBe(2);
    expect(missing.stderr).toMatch(/verify needs --log FILE/);
  });
});
