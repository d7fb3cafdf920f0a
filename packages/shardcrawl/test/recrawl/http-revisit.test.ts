// Re-crawl visits over real HTTP against simweb in SIMULATED content time (SimClock): conditional
// requests get 304s where a host honours validators, a host that ignores them is detected and no
// longer sent them, and change detection on the extracted text (content rules) ignores
// timestamp/ad churn yet sees every real content change (ground truth: simweb's version stamps).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SimClock, type HostModel } from "../../../simweb/src/index.js";
import { startSimwebInProcess } from "../../../../test/harness/simweb.js";
import { createHttpClient, type HttpClient } from "../../src/fetch/http-client.js";
import { extractPage } from "../../src/parse/extract.js";
import { ContentDigester, HostValidators, revisit, type StoredCopy } from "../../src/schedule/recrawl/index.js";

const HOUR = 3_600_000;
let sim: Awaited<ReturnType<typeof startSimwebInProcess>>;
let client: HttpClient;
let clock: SimClock;

beforeAll(async () => {
  clock = new SimClock(Date.UTC(2025, 0, 1));
  sim = await startSimwebInProcess({
    config: { preset: "tiny", seed: 11, hosts: 24, change: { staticShare: 0.2, minIntervalMs: 2 * HOUR, maxIntervalMs: 4 * 24 * HOUR, churnShare: 0.5 } },
    clock,
  });
  const names = sim.world.hosts().map((h) => h.name);
  client = createHttpClient({
    userAgent: "shardcrawl-recrawl-test/1",
    allowPrivate: true,
    acceptEncoding: "identity",
    caFile: sim.caFile,
    connectTo: names.flatMap((n) => [`${n}:80:127.0.0.1:${sim.httpPort}`, `${n}:443:127.0.0.1:${sim.httpsPort}`]),
    timeouts: { connectMs: 5_000, headersMs: 10_000, bodyMs: 10_000, totalMs: 20_000 },
  });
});
afterAll(async () => {
  await client?.close();
  await sim?.close();
});

/** Up to `n` pages per host, visited round-robin so one host never gets back-to-back requests. */
function pagesOf(hosts: HostModel[], n: number): Array<{ url: string; host: string }> {
  const out: Array<{ url: string; host: string }> = [];
  for (let id = 0; id < n; id++) {
    for (const h of hosts) if (id < h.info.pageCount) out.push({ url: sim.world.page(h, id).url, host: h.info.name });
  }
  return out;
}

describe("re-crawl over HTTP in simulated time", () => {
  it("uses 304s where validators are honoured, detects hosts that ignore them, and ignores churn", async () => {
    const models = Array.from({ length: sim.world.hostCount() }, (_, i) => sim.world.model(i));
    const withValidators = models.filter((h) => h.has.has("validators"));
    const without = models.filter((h) => !h.has.has("validators"));
    expect(withValidators.length).toBeGreaterThan(3);
    expect(without.length).toBeGreaterThan(3);
    const pages = pagesOf(models, 3);
    const digester = new ContentDigester();
    const validators = new HostValidators();
    const copies = new Map<string, StoredCopy>();
    const versions = new Map<string, number>();
    const tally = { observations: 0, mismatches: 0, churnUnchanged: 0, notModified: 0, validatorUnchanged: 0, conditionalAfterIgnored: 0 };

    for (let round = 0; round < 10; round++) {
      for (const p of pages) {
        const now = clock.now();
        const copy = copies.get(p.url);
        const ignoredBefore = validators.verdict(p.host) === "ignored";
        const r = await revisit(client, p.url, p.host, copy, now, digester, validators);
        if ("error" in r) throw new Error(`${p.url}: ${r.error} ${r.detail}`);
        expect([200, 304]).toContain(r.status);
        const version = sim.world.pageVersionAt(p.url, now);
        if (copy) {
          const truthChanged = version !== versions.get(p.url);
          tally.observations++;
          if (r.changed !== truthChanged) tally.mismatches++;
          if (!truthChanged && sim.world.changeRate(p.url).churn !== "none") tally.churnUnchanged++;
          if (!truthChanged && sim.world.hostByName(p.host)?.has.has("validators")) {
            tally.validatorUnchanged++;
            if (r.status === 304) tally.notModified++;
          }
          if (ignoredBefore && r.conditional) tally.conditionalAfterIgnored++;
        }
        copies.set(p.url, r.copy);
        versions.set(p.url, version);
      }
      clock.advance(6 * HOUR);
    }
    // Change detection agrees with the ground truth on every visit, churn pages included.
    expect(tally.observations).toBeGreaterThan(400);
    expect(tally.churnUnchanged).toBeGreaterThan(50);
    expect(tally.mismatches).toBe(0);
    // Validators honoured -> unchanged pages come back as 304 (churning ETags cost a few 200s
    // until the page's ETag is recognised as churning and If-Modified-Since is sent alone).
    expect(tally.validatorUnchanged).toBeGreaterThan(100);
    expect(tally.notModified / tally.validatorUnchanged).toBeGreaterThan(0.85);
    for (const h of withValidators) expect(validators.verdict(h.info.name)).not.toBe("ignored");
    // Hosts that ignore conditional requests are detected and not sent them any more.
    const ignoring = without.filter((h) => validators.verdict(h.info.name) === "ignored");
    expect(ignoring.length).toBe(without.filter((h) => validators.stats(h.info.name).ignored >= 5).length);
    expect(ignoring.length).toBeGreaterThan(2);
    expect(tally.conditionalAfterIgnored).toBe(0);
  });

  it("a digest without content rules would count timestamp/ad churn as change (the rules matter)", async () => {
    const models = Array.from({ length: sim.world.hostCount() }, (_, i) => sim.world.model(i));
    const churny = pagesOf(models, 6).find((p) => sim.world.changeRate(p.url).churn === "timestamp" && !sim.world.hostByName(p.host)?.has.has("validators"));
    expect(churny).toBeDefined();
    const url = churny!.url;
    // Two moments with the same content version but different churn slots.
    const t1 = clock.now();
    const stamp = sim.world.pageVersionAt(url, t1);
    const texts: string[] = [];
    for (const t of [t1, t1 + 2 * 60_000]) {
      clock.set(t);
      if (sim.world.pageVersionAt(url, t) !== stamp) return; // a real change in between: nothing to show
      const res = await client.fetch(url);
      if (!res.ok) throw new Error(res.detail);
      texts.push(extractPage(res.body.toString("utf8"), { pageUrl: url }).text);
    }
    const raw = new ContentDigester({ strip: [] });
    expect(raw.digest(texts[0]!)).not.toBe(raw.digest(texts[1]!));
    expect(new ContentDigester().digest(texts[0]!)).toBe(new ContentDigester().digest(texts[1]!));
  });
});
