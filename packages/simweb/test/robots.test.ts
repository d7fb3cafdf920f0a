import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { createRequire } from "node:module";
import { startSimwebInProcess } from "../../../test/harness/simweb.js";
import { ROBOTS_KINDS, type RobotsKind, type RunningSimweb, type HostInfo } from "../src/index.js";
import { get } from "./client.js";

const robotsParser = createRequire(import.meta.url)("robots-parser") as (url: string, txt: string) => { isAllowed(u: string, ua: string): boolean | undefined };
const UA = "shardcrawl/1.0 (+http://example.invalid/bot)";

describe("robots.txt variety, over HTTP", () => {
  let sim: RunningSimweb;
  const byKind = new Map<RobotsKind, HostInfo>();
  beforeAll(async () => {
    // Equal weights so every kind appears among a few dozen hosts.
    const robots = Object.fromEntries(ROBOTS_KINDS.map((k) => [k, 1])) as Record<RobotsKind, number>;
    sim = await startSimwebInProcess({ config: { hosts: 120, seed: 4, robots }, log: false });
    for (const h of sim.world.hosts()) if (!byKind.has(h.robots)) byKind.set(h.robots, h);
  });
  afterAll(async () => sim?.close());
  const robotsUrl = (h: HostInfo): string => `${h.scheme}://${h.name}/robots.txt`;
  const model = (h: HostInfo) => sim.world.model(h.index);

  test("every kind is present", () => {
    expect([...byKind.keys()].sort()).toEqual([...ROBOTS_KINDS].sort());
  });

  test("absent is 404 (allow all); empty is 200 and allows all", async () => {
    const absent = byKind.get("absent")!;
    expect((await get(sim, robotsUrl(absent))).status).toBe(404);
    expect(sim.world.robots.allows(model(absent), "/private/x.html", UA)).toBe(true);
    const empty = byKind.get("empty")!;
    const r = await get(sim, robotsUrl(empty));
    expect(r.status).toBe(200);
    expect(r.body.length).toBe(0);
  });

  test("5xx and unreachable make the whole host off-limits", async () => {
    const err = byKind.get("server-error")!;
    expect((await get(sim, robotsUrl(err))).status).toBeGreaterThanOrEqual(500);
    expect(sim.world.robots.allows(model(err), "/", UA)).toBe(false);
    const unr = byKind.get("unreachable")!;
    const r = await get(sim, robotsUrl(unr));
    expect(r.status).toBe(0);
    expect(r.error).toBeDefined();
    expect(sim.world.robots.allows(model(unr), "/", UA)).toBe(false);
    // Pages on the unreachable host still answer (only robots.txt is unreachable).
    expect((await get(sim, `${unr.scheme}://${unr.name}/`)).status).toBe(200);
  });

  test("rules use * and $; verdicts match an independent parse of the served file", async () => {
    let checkedStar = false;
    let checkedDollar = false;
    for (const h of sim.world.hosts()) {
      if (!["rules", "crawl-delay", "sitemap", "agent-specific"].includes(h.robots)) continue;
      const r = await get(sim, robotsUrl(h));
      expect(r.status).toBe(200);
      const txt = r.body.toString("utf8");
      const parsed = robotsParser(robotsUrl(h), txt);
      const m = model(h);
      for (let id = 0; id < Math.min(h.pageCount, 40); id++) {
        const p = sim.world.page(m, id);
        expect(sim.world.robots.allows(m, p.path, UA)).toBe(parsed.isAllowed(p.url, UA) !== false);
      }
      if (/^disallow: \/\*sort=top$/im.test(txt) && !/^user-agent: shardcrawl/im.test(txt)) {
        expect(sim.world.robots.allows(m, "/news.php?id=1&sort=top", UA)).toBe(false);
        expect(sim.world.robots.allows(m, "/news.php?id=1&sort=new", UA)).toBe(true);
        checkedStar = true;
      }
      if (/^disallow: \/\*\.php\$$/im.test(txt) && !/^user-agent: shardcrawl/im.test(txt)) {
        expect(sim.world.robots.allows(m, "/x.php", UA)).toBe(false);
        expect(sim.world.robots.allows(m, "/x.php?id=1", UA)).toBe(true); // $ anchors path+query
        checkedDollar = true;
      }
    }
    expect(checkedStar || checkedDollar).toBe(true);
  });

  test("agent-specific groups: our group applies to us, otherbot's to otherbot", async () => {
    const h = byKind.get("agent-specific")!;
    const txt = (await get(sim, robotsUrl(h))).body.toString("utf8");
    expect(txt).toMatch(/^user-agent: shardcrawl/im);
    expect(txt).toMatch(/^user-agent: otherbot/im);
    expect(sim.world.robots.allows(model(h), "/", "otherbot")).toBe(false);
    expect(sim.world.robots.allows(model(h), "/", UA)).toBe(true);
  });

  test("crawl-delay and sitemap lines; the sitemap lists the home page", async () => {
    expect((await get(sim, robotsUrl(byKind.get("crawl-delay")!))).body.toString()).toMatch(/^Crawl-delay: [\d.]+$/m);
    const h = byKind.get("sitemap")!;
    const txt = (await get(sim, robotsUrl(h))).body.toString();
    const sm = /^Sitemap: (\S+)$/m.exec(txt)?.[1];
    expect(sm).toBe(`${h.scheme}://${h.name}/sitemap.xml`);
    const xml = await get(sim, sm!);
    expect(xml.status).toBe(200);
    expect(xml.body.toString()).toContain(`<loc>${h.scheme}://${h.name}/</loc>`);
  });

  test("a very large robots.txt (> 500 KiB) gives the same verdicts when truncated at 500 KiB", async () => {
    const h = byKind.get("large")!;
    const r = await get(sim, robotsUrl(h));
    expect(r.body.length).toBeGreaterThan(500 * 1024);
    const full = robotsParser(robotsUrl(h), r.body.toString());
    const cut = robotsParser(robotsUrl(h), r.body.subarray(0, 500 * 1024).toString());
    const m = model(h);
    for (let id = 0; id < Math.min(h.pageCount, 40); id++) {
      const p = sim.world.page(m, id);
      expect(cut.isAllowed(p.url, UA)).toBe(full.isAllowed(p.url, UA));
    }
  });

  test("redirect: 301 to /meta/robots.txt, which holds the rules; disallow-all disallows everything", async () => {
    const h = byKind.get("redirect")!;
    const r = await get(sim, robotsUrl(h));
    expect(r.status).toBe(301);
    expect(r.headers.location).toBe(`${h.scheme}://${h.name}/meta/robots.txt`);
    const moved = await get(sim, r.headers.location!);
    expect(moved.status).toBe(200);
    expect(moved.body.toString()).toMatch(/^user-agent: \*/im);
    const all = byKind.get("disallow-all")!;
    expect((await get(sim, robotsUrl(all))).body.toString()).toMatch(/User-agent: \*\r?\nDisallow: \/\r?\n/);
    expect(sim.world.robots.allows(model(all), "/", UA)).toBe(false);
  });
});
