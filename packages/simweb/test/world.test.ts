import { describe, expect, test } from "vitest";
import { makeConfig, World, presets, canonicalUrl } from "../src/index.js";
import { Renderer } from "../src/html.js";

describe("world", () => {
  test("a 100,000-host world builds lazily, with heavy-tailed page counts and several hosts per domain", () => {
    const w = new World(makeConfig({ hosts: 100_000 }));
    const hosts = w.hosts();
    expect(hosts).toHaveLength(100_000);
    expect(new Set(hosts.map((h) => h.name)).size).toBe(100_000);
    for (const h of hosts.slice(0, 50)) expect(h.name).toMatch(/^(www|blog|shop|news|docs|forum|wiki|m)\.d\d+\.test$/);
    const counts = hosts.map((h) => h.pageCount).sort((a, b) => a - b);
    expect(counts[50_000]).toBeLessThan(100); // most hosts small
    expect(counts.filter((c) => c >= 1_000_000).length).toBeGreaterThan(10); // a few with millions
    const domains = new Map<string, number>();
    for (const h of hosts) domains.set(h.domain, (domains.get(h.domain) ?? 0) + 1);
    expect([...domains.values()].some((n) => n >= 2)).toBe(true);
    const https = hosts.filter((h) => h.scheme === "https").length / hosts.length;
    expect(https).toBeGreaterThan(0.45);
    expect(https).toBeLessThan(0.55);
    // A page deep inside the biggest host resolves without materializing the host.
    const big = hosts.find((h) => h.pageCount >= 1_000_000)!;
    const m = w.model(big.index);
    const p = w.page(m, 987_654);
    expect(w.route(m, p.path)).toMatchObject({ kind: "page" });
    expect(w.resolve(p.url)?.resource.kind).toBe("page");
  });

  test("every generated URL is in canonical form (a fixed point of canonicalUrl) and routes back to itself", () => {
    const w = new World(makeConfig({ preset: "hostile", hosts: 200, seed: 3 }));
    let checked = 0;
    for (const h of w.hosts().slice(0, 100)) {
      const m = w.model(h.index);
      for (let id = 0; id < Math.min(h.pageCount, 20); id++) {
        const p = w.page(m, id);
        expect(canonicalUrl(p.url)).toBe(p.url);
        expect(w.resolve(p.url)?.resource).toMatchObject({ kind: "page", page: { id } });
        for (const l of w.links(p)) {
          expect(canonicalUrl(l.url)).toBe(l.url);
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(10_000);
  });

  test("same seed gives the same bytes; another seed gives other bytes", () => {
    const a = new Renderer(new World(makeConfig({ seed: 7, hosts: 50 })));
    const b = new Renderer(new World(makeConfig({ seed: 7, hosts: 50 })));
    const c = new Renderer(new World(makeConfig({ seed: 8, hosts: 50 })));
    const t = Date.UTC(2025, 3, 1);
    for (let id = 0; id < 5; id++) {
      const wa = (a as unknown as { world: World }).world;
      const wb = (b as unknown as { world: World }).world;
      const wc = (c as unknown as { world: World }).world;
      const ba = a.render(wa.page(wa.model(0), id), t).buffer!;
      const bb = b.render(wb.page(wb.model(0), id), t).buffer!;
      expect(ba.equals(bb)).toBe(true);
      if (id < wc.model(0).info.pageCount) expect(ba.equals(c.render(wc.page(wc.model(0), id), t).buffer!)).toBe(false);
    }
  });

  test("over 10,000 pages the size median and mean are within 10% of the configuration", () => {
    const config = makeConfig({ hosts: 2000, seed: 11 });
    const w = new World(config);
    const r = new Renderer(w);
    const sizes: number[] = [];
    const t = Date.UTC(2025, 5, 1);
    outer: for (const h of w.hosts()) {
      if (h.behaviours.includes("huge") || h.behaviours.includes("non-html")) continue;
      const m = w.model(h.index);
      for (let id = 0; id < Math.min(h.pageCount, 25); id++) {
        sizes.push(r.render(w.page(m, id), t).length);
        if (sizes.length === 10_000) break outer;
      }
    }
    expect(sizes).toHaveLength(10_000);
    sizes.sort((a, b) => a - b);
    const median = sizes[5_000]!;
    const mean = sizes.reduce((s, x) => s + x, 0) / sizes.length;
    expect(Math.abs(median / config.pageSize.median - 1)).toBeLessThan(0.1);
    expect(Math.abs(mean / config.pageSize.mean - 1)).toBeLessThan(0.1);
    expect(sizes[sizes.length - 1]!).toBeGreaterThan(2_000_000); // a tail to several MB
  });

  test("page-size distribution is overridable (CI-sized crawls)", () => {
    const config = makeConfig({ preset: "polite", pageSize: { median: 20_000, mean: 30_000, min: 5_000, max: 400_000 } });
    const w = new World(config);
    const r = new Renderer(w);
    const sizes: number[] = [];
    for (const h of w.hosts().slice(0, 400)) for (let id = 0; id < Math.min(h.pageCount, 5); id++) sizes.push(r.render(w.page(w.model(h.index), id), 0).length);
    sizes.sort((a, b) => a - b);
    expect(sizes[sizes.length >> 1]!).toBeGreaterThan(16_000);
    expect(sizes[sizes.length >> 1]!).toBeLessThan(25_000);
  });

  test("presets and makeConfig: JSON round trip, validation errors are specific", () => {
    expect(Object.keys(presets).sort()).toEqual(["default", "hostile", "polite", "tiny"]);
    const c = makeConfig({ preset: "tiny" });
    expect(c.hosts).toBe(20);
    expect(makeConfig(JSON.parse(JSON.stringify(c)))).toEqual(c);
    expect(() => makeConfig({ preset: "nope" })).toThrow(/unknown preset "nope"/);
    expect(() => makeConfig({ hosts: 0 })).toThrow(/hosts must be/);
    expect(() => makeConfig({ pageSize: { median: 10, mean: 5, min: 1, max: 100 } })).toThrow(/pageSize/);
    expect(makeConfig({ preset: "polite" }).hosts).toBe(1000);
    expect(new World(makeConfig({ preset: "polite" })).hosts().every((h) => h.scheme === "http")).toBe(true);
    const tiny = new World(c);
    expect(tiny.hosts().every((h) => h.behaviours.every((b) => b === "compress" || b === "validators"))).toBe(true);
    expect(new World(makeConfig({ hostPageCap: 7 })).hosts().every((h) => h.pageCount <= 7)).toBe(true);
  });
});
