import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSimwebInProcess } from "../../../test/harness/simweb.js";
import { makeConfig, World, SimClock, ScaledClock, RealClock, type RunningSimweb, type PageSpec } from "../src/index.js";
import { changeTimesBetween, lastChangeAt } from "../src/change.js";
import { get } from "./client.js";

const DAY = 86_400_000;

describe("change model (ground truth)", () => {
  const w = new World(makeConfig({ hosts: 300, seed: 31, hostPageCap: 200 }));
  const pages: PageSpec[] = [];
  for (const h of w.hosts()) for (let id = 0; id < Math.min(h.pageCount, 10); id++) pages.push(w.page(w.model(h.index), id));
  const changing = pages.filter((p) => Number.isFinite(p.change.intervalMs));

  test("the empirical change frequency matches each page's configured rate", () => {
    expect(changing.length).toBeGreaterThan(500);
    let observed = 0;
    let expectedCount = 0;
    for (const p of changing.slice(0, 1000)) {
      const span = 200 * p.change.intervalMs;
      observed += changeTimesBetween(p.change, w.config.timeOriginMs, w.config.timeOriginMs + span).length;
      expectedCount += 200;
    }
    expect(Math.abs(observed / expectedCount - 1)).toBeLessThan(0.03);
    // P(changed within dt) = 1 - exp(-rate * dt), sampled at random instants
    let changed = 0;
    let predicted = 0;
    for (const [i, p] of changing.slice(0, 1000).entries()) {
      const t = w.config.timeOriginMs + ((i * 7919) % 1000) * DAY;
      const dt = p.change.intervalMs * 0.5;
      if (lastChangeAt(p.change, t) !== lastChangeAt(p.change, t + dt)) changed++;
      predicted += 1 - Math.exp(-0.5);
    }
    expect(Math.abs(changed / predicted - 1)).toBeLessThan(0.1);
  });

  test("versions agree with change times; static pages never change", () => {
    for (const p of changing.slice(0, 200)) {
      const t = w.config.timeOriginMs + 30 * DAY;
      const times = w.changeTimes(p.url, t - 50 * p.change.intervalMs, t);
      expect(w.pageVersionAt(p.url, t)).toBe(times.length ? times[times.length - 1] : p.change.baseMs);
      const rate = w.changeRate(p.url);
      expect(rate.perDay).toBeCloseTo(DAY / p.change.intervalMs, 9);
    }
    const stat = pages.find((p) => !Number.isFinite(p.change.intervalMs))!;
    expect(w.changeRate(stat.url).perDay).toBe(0);
    expect(w.pageVersionAt(stat.url, 0)).toBe(w.pageVersionAt(stat.url, 1e13));
    expect(w.changeTimes(stat.url, 0, 1e13)).toEqual([]);
    expect(() => w.pageVersionAt("http://www.nothere.invalid/", 0)).toThrow(/not a simweb page/);
  });

  test("clocks: simulated, scaled and real", () => {
    const c = new SimClock(1000);
    c.advance(500);
    expect(c.now()).toBe(1500);
    c.set(42);
    expect(c.now()).toBe(42);
    const s = new ScaledClock(1000, 5_000, Date.now() - 10);
    expect(s.now()).toBeGreaterThanOrEqual(5_000 + 10_000);
    expect(() => new ScaledClock(0, 0)).toThrow(/time scale/);
    expect(Math.abs(new RealClock().now() - Date.now())).toBeLessThan(1000);
  });
});

describe("changing pages over HTTP with a simulated clock; validators and 304", () => {
  let sim: RunningSimweb;
  const clock = new SimClock(Date.UTC(2025, 0, 10));
  beforeAll(async () => {
    sim = await startSimwebInProcess({
      config: { seed: 9, hosts: 40, behaviours: { validators: 1, compress: 0 } as never, change: { staticShare: 0, minIntervalMs: DAY, maxIntervalMs: 10 * DAY, churnShare: 0.3 } },
      clock,
      log: false,
    });
  });
  afterAll(async () => sim?.close());

  function samplePages(churn: boolean, n: number): PageSpec[] {
    const out: PageSpec[] = [];
    for (const h of sim.world.hosts()) {
      const m = sim.world.model(h.index);
      for (let id = 0; id < h.pageCount && out.length < n; id++) {
        const p = sim.world.page(m, id);
        if (p.kind === "html" && (p.change.churn !== "none") === churn) out.push(p);
      }
    }
    return out;
  }

  test("bodies change exactly when the ground truth says; the observed change frequency matches the rate", async () => {
    const pages = samplePages(false, 40);
    const step = DAY / 2;
    const last = new Map<string, Buffer>();
    let changed = 0;
    let predicted = 0;
    for (let i = 0; i < 12; i++) {
      for (const p of pages) {
        const r = await get(sim, p.url);
        expect(r.status).toBe(200);
        const prev = last.get(p.url);
        if (prev) {
          const t = clock.now();
          const truth = sim.world.pageVersionAt(p.url, t) !== sim.world.pageVersionAt(p.url, t - step);
          expect(!prev.equals(r.body), p.url).toBe(truth);
          if (truth) changed++;
          predicted += 1 - Math.exp(-step / p.change.intervalMs);
        }
        last.set(p.url, r.body);
      }
      clock.advance(step);
    }
    expect(changed).toBeGreaterThan(20);
    expect(Math.abs(changed / predicted - 1)).toBeLessThan(0.3);
  });

  test("ETag / Last-Modified: conditional requests get 304 until the page changes", async () => {
    const p = samplePages(false, 1)[0]!;
    const r1 = await get(sim, p.url);
    const etag = r1.headers.etag!;
    const lm = r1.headers["last-modified"]!;
    expect(etag).toMatch(/^"[0-9a-z]+-[0-9a-z]+"$/);
    expect(Date.parse(lm)).toBe(Math.floor(sim.world.pageVersionAt(p.url, clock.now()) / 1000) * 1000);
    expect((await get(sim, p.url, { headers: { "if-none-match": etag } })).status).toBe(304);
    expect((await get(sim, p.url, { headers: { "if-none-match": `"other", W/${etag}` } })).status).toBe(304);
    const ims = await get(sim, p.url, { headers: { "if-modified-since": lm } });
    expect(ims.status).toBe(304);
    expect(ims.body.length).toBe(0);
    expect((await get(sim, p.url, { headers: { "if-modified-since": new Date(Date.parse(lm) - 1000).toUTCString() } })).status).toBe(200);
    // move past the next change
    const next = sim.world.changeTimes(p.url, clock.now(), clock.now() + 100 * DAY)[0]!;
    clock.set(next + 1);
    const r2 = await get(sim, p.url, { headers: { "if-none-match": etag } });
    expect(r2.status).toBe(200);
    expect(r2.headers.etag).not.toBe(etag);
    expect((await get(sim, p.url, { headers: { "if-modified-since": lm } })).status).toBe(200);
  });

  test("churning pages change bytes without a content change (same Last-Modified)", async () => {
    const p = samplePages(true, 1)[0]!;
    const a = await get(sim, p.url);
    clock.advance(11 * 60_000);
    const b = await get(sim, p.url);
    expect(b.body.equals(a.body)).toBe(false);
    if (sim.world.pageVersionAt(p.url, clock.now()) === sim.world.pageVersionAt(p.url, clock.now() - 11 * 60_000)) {
      expect(b.headers["last-modified"]).toBe(a.headers["last-modified"]);
      expect(b.body.length).toBe(a.body.length);
    }
    expect(sim.world.changeRate(p.url).churn).not.toBe("none");
  });
});

describe("sitemap lastmod follows the change model", () => {
  const clock = new SimClock(Date.UTC(2025, 0, 10));
  let sim: RunningSimweb;
  const robotsSitemapOnly = { absent: 0, empty: 0, rules: 0, "agent-specific": 0, "crawl-delay": 0, sitemap: 1, large: 0, redirect: 0, "disallow-all": 0, "server-error": 0, unreachable: 0 };
  beforeAll(async () => {
    sim = await startSimwebInProcess({
      config: { preset: "tiny", hosts: 6, seed: 12, robots: robotsSitemapOnly, change: { staticShare: 0, minIntervalMs: DAY / 2, maxIntervalMs: 4 * DAY, churnShare: 0 } },
      clock, log: false,
    });
  });
  afterAll(async () => {
    await sim.close();
  });

  test("hosts with validators give each page's version as <lastmod> (= Last-Modified); others give none", async () => {
    const withV = sim.world.hosts().filter((h) => sim.world.model(h.index).has.has("validators"));
    const without = sim.world.hosts().filter((h) => !sim.world.model(h.index).has.has("validators"));
    expect(withV.length).toBeGreaterThan(0);
    expect(without.length).toBeGreaterThan(0);
    for (const t of [0, 1, 3]) {
      clock.set(Date.UTC(2025, 0, 10) + t * DAY);
      for (const h of withV) {
        const xml = (await get(sim, `${h.scheme}://${h.name}/sitemap.xml`)).body.toString();
        const entries = [...xml.matchAll(/<loc>([^<]+)<\/loc><lastmod>([^<]+)<\/lastmod>/g)];
        expect(entries.length).toBeGreaterThan(0);
        for (const [, loc, lastmod] of entries.slice(0, 5)) {
          const url = loc!.replace(/&amp;/g, "&");
          const version = sim.world.pageVersionAt(url, clock.now());
          expect(Date.parse(lastmod!)).toBe(Math.floor(version / 1000) * 1000);
          const page = await get(sim, url);
          expect(Date.parse(String(page.headers["last-modified"]))).toBe(Date.parse(lastmod!));
        }
      }
      for (const h of without) expect((await get(sim, `${h.scheme}://${h.name}/sitemap.xml`)).body.toString()).not.toContain("<lastmod>");
    }
  });
});
