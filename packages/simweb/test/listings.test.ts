// Listing pages, feeds and sitemap indexes over HTTP against the change model's ground truth.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { startSimwebInProcess } from "../../../test/harness/simweb.js";
import { Listings, SimClock, type HostModel, type RunningSimweb } from "../src/index.js";
import { get } from "./client.js";

const DAY = 86_400_000;

describe("listing hosts", () => {
  let sim: RunningSimweb;
  let listings: Listings;
  let host: HostModel;
  const clock = new SimClock(Date.UTC(2025, 0, 10));
  beforeAll(async () => {
    sim = await startSimwebInProcess({
      config: {
        seed: 5, hosts: 12, hostPageCap: 120, behaviours: { compress: 0 } as never,
        change: { staticShare: 0.2, minIntervalMs: DAY / 4, maxIntervalMs: 5 * DAY, churnShare: 0 },
        listings: { hostShare: 0.5, itemsPerListing: 10, visibleShare: 0.6, lagMs: 0, feedEntries: 5, feedScan: 2000 },
      },
      clock,
      log: false,
    });
    listings = new Listings(sim.world);
    const hosts = sim.world.hosts().map((h) => sim.world.model(h.index)).filter((h) => listings.has(h) && listings.count(h) >= 3);
    expect(hosts.length).toBeGreaterThan(0);
    host = hosts[0] as HostModel;
  });
  afterAll(async () => sim?.close());

  test("an item's summary on its listing changes exactly when the ground truth says, on a share of its content changes", async () => {
    const origin = sim.world.origin(host);
    const before = new Map<string, string>();
    let visibleChanges = 0;
    let contentChanges = 0;
    for (let step = 0; step < 10; step++) {
      const t = clock.now();
      for (let k = 0; k < 3; k++) {
        const r = await get(sim, `${origin}/list/${k}`);
        expect(r.status).toBe(200);
        const html = r.body.toString("utf8");
        expect(html).toContain('rel="alternate" type="application/rss+xml"');
        for (const m of html.matchAll(/<a href="([^"]+)">[^<]*<\/a> <span class="summary">([^<]*)<\/span>/g)) {
          const [url, summary] = [m[1] as string, m[2] as string];
          const prev = before.get(url);
          if (prev !== undefined) {
            const p = listings.items(host, k).find((x) => x.url === url.replace(/&amp;/g, "&"))!;
            const shown = listings.summaryVersionAt(p, t) !== listings.summaryVersionAt(p, t - DAY / 2);
            expect(summary !== prev, url).toBe(shown);
            if (shown) visibleChanges++;
            if (sim.world.pageVersionAt(p.url, t) !== sim.world.pageVersionAt(p.url, t - DAY / 2)) contentChanges++;
          }
          before.set(url, summary);
        }
      }
      clock.advance(DAY / 2);
    }
    expect(visibleChanges).toBeGreaterThan(0);
    // Some content changes do not show on the listing (visibleShare 0.6).
    expect(visibleChanges).toBeLessThan(contentChanges);
  });

  test("robots.txt names the sitemap index; the index and the feed list real URLs with the pages' version stamps", async () => {
    const origin = sim.world.origin(host);
    // Every listing host whose robots.txt is a file served at /robots.txt names its index.
    const withFile = sim.world.hosts().map((h) => sim.world.model(h.index)).filter((h) => listings.has(h) && sim.world.robots.text(h) !== null && h.info.robots !== "redirect");
    expect(withFile.length).toBeGreaterThan(0);
    for (const h of withFile) {
      const robots = (await get(sim, `${sim.world.origin(h)}/robots.txt`)).body.toString("utf8");
      expect(robots).toContain(`Sitemap: ${sim.world.origin(h)}/sitemap-index.xml`);
    }
    const index = (await get(sim, `${origin}/sitemap-index.xml`)).body.toString("utf8");
    expect(index).toContain("<sitemapindex");
    expect(index).toContain(`${origin}/sitemap-lists.xml`);
    const lists = (await get(sim, `${origin}/sitemap-lists.xml`)).body.toString("utf8");
    expect([...lists.matchAll(/<loc>/g)].length).toBe(listings.count(host));
    const feed = (await get(sim, `${origin}/feed.xml`)).body.toString("utf8");
    const entries = [...feed.matchAll(/<link>([^<]+)<\/link><guid>[^<]*<\/guid><pubDate>([^<]+)<\/pubDate>/g)];
    expect(entries.length).toBe(5);
    for (const e of entries) {
      const url = (e[1] as string).replace(/&amp;/g, "&");
      expect(Date.parse(e[2] as string)).toBe(Math.floor(sim.world.pageVersionAt(url, clock.now()) / 1000) * 1000);
    }
  });

  test("hosts without listings serve none", async () => {
    const other = sim.world.hosts().map((h) => sim.world.model(h.index)).find((h) => !listings.has(h))!;
    expect((await get(sim, `${sim.world.origin(other)}/list/0`)).status).toBe(404);
  });
});
