import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { readFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { startSimwebInProcess } from "../../../test/harness/simweb.js";
import { BEHAVIOURS, canonicalUrl, type Behaviour, type HostInfo, type LogEntry, type RunningSimweb } from "../src/index.js";
import { get, decoded } from "./client.js";

const DISRUPTIVE: Behaviour[] = ["slow", "throttle", "flapping", "reset", "hang"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("host behaviours, over real HTTP", () => {
  let sim: RunningSimweb & { logFile: string | undefined };
  beforeAll(async () => {
    sim = await startSimwebInProcess({
      config: {
        preset: "hostile", hosts: 400, seed: 12, hostPageCap: 400,
        behaviours: Object.fromEntries(BEHAVIOURS.map((b) => [b, 0.25])) as Record<Behaviour, number>,
        slow: { medianMs: 150, sigma: 0.01, maxMs: 1000 },
        throttle: { maxConcurrency: [1], ratePerSec: [2], retryAfterSec: [3] },
        flapping: { windowMs: 100, downShare: 0.5 },
        resetShare: 0.5, hangShare: 1, hangMs: 30_000,
        huge: { share: 0.5, minBytes: 3_000_000, maxBytes: 4_000_000 },
        nonHtmlShare: 0.5, bombBytes: 16 * 1024 * 1024,
        pageSize: { median: 8_000, mean: 10_000, min: 3_000, max: 50_000 },
      },
    });
  });
  afterAll(async () => sim?.close());

  /** A host with behaviour b and no disruptive behaviour besides (maybe) b. */
  function hostWith(b: Behaviour, extra: (h: HostInfo) => boolean = () => true): HostInfo {
    const h = sim.world.hosts().find((x) => x.behaviours.includes(b) && DISRUPTIVE.every((d) => d === b || !x.behaviours.includes(d)) && extra(x));
    if (!h) throw new Error(`no host with ${b}`);
    return h;
  }
  const home = (h: HostInfo) => `${h.scheme}://${h.name}/`;
  const pageUrl = (h: HostInfo, id: number) => sim.world.page(sim.world.model(h.index), id).url;

  test("slow: the response starts after the host's latency (a lower bound, not a speed check)", async () => {
    const h = hostWith("slow");
    const r = await get(sim, home(h));
    expect(r.status).toBe(200);
    expect(r.ms).toBeGreaterThanOrEqual(140);
  });

  test("throttle: beyond the hidden concurrency/rate capacity, 429 or 503 with Retry-After", async () => {
    const h = hostWith("throttle");
    const rs = await Promise.all([0, 1, 2, 3, 4].map(() => get(sim, home(h))));
    const ok = rs.filter((r) => r.status === 200);
    const limited = rs.filter((r) => r.status === 429 || r.status === 503);
    expect(ok.length).toBeGreaterThanOrEqual(1);
    expect(limited.length).toBeGreaterThanOrEqual(1);
    for (const r of limited) expect(r.headers["retry-after"]).toMatch(/^(3|\w{3}, \d\d \w{3} \d{4} .* GMT)$/);
  });

  test("flapping: 5xx in some time windows, 200 in others", async () => {
    const h = hostWith("flapping");
    const statuses = new Set<number>();
    for (let i = 0; i < 30 && statuses.size < 2; i++) {
      statuses.add((await get(sim, home(h))).status);
      await sleep(60);
    }
    expect([...statuses].some((s) => s === 200)).toBe(true);
    expect([...statuses].some((s) => s >= 500)).toBe(true);
  });

  test("reset: some requests die with a connection reset, logged with status 0", async () => {
    const h = hostWith("reset");
    const rs = [];
    for (let i = 0; i < 16; i++) rs.push(await get(sim, home(h)));
    expect(rs.some((r) => r.status === 200)).toBe(true);
    const dead = rs.filter((r) => r.status === 0);
    expect(dead.length).toBeGreaterThan(0);
    expect(dead[0]!.error).toBe("ECONNRESET");
    await sleep(300);
    const log = readFileSync(sim.logFile!, "utf8").trim().split("\n").map((l) => JSON.parse(l) as LogEntry).filter((e) => e.host === h.name);
    expect(log.filter((e) => e.status === 0).length).toBe(dead.length);
  });

  test("hang: the request gets no answer until the client gives up", async () => {
    const h = hostWith("hang");
    const r = await get(sim, home(h), { timeoutMs: 400 });
    expect(r.status).toBe(0);
    expect(r.error).toMatch(/timeout|ECONNRESET/);
    // robots.txt is exempt, so a crawler can still learn the rules
    expect((await get(sim, `${h.scheme}://${h.name}/robots.txt`, { timeoutMs: 2000 })).status).toBeGreaterThan(0);
  });

  test("redirects: single hops, chains ending at a page, loops, and relative Location headers", async () => {
    const h = hostWith("redirects");
    const w = sim.world;
    const m = w.model(h.index);
    const o = `${h.scheme}://${h.name}`;
    let url = `${o}/r/3/${(5 % h.pageCount).toString(36)}`;
    const hops: number[] = [];
    for (let i = 0; i < 5; i++) {
      const r = await get(sim, url);
      hops.push(r.status);
      if (r.status < 300 || r.status >= 400) break;
      url = new URL(r.headers.location!, url).href;
    }
    expect(hops.slice(0, 3).every((s) => [301, 302, 303, 307, 308].includes(s))).toBe(true);
    expect(hops[3]).toBe(200);
    expect(url).toBe(w.page(m, 5 % h.pageCount).url);
    const a = await get(sim, `${o}/loop/7/a`);
    const b = await get(sim, new URL(a.headers.location!, o).href);
    expect(new URL(b.headers.location!, o).href).toBe(`${o}/loop/7/a`);
    const go = await Promise.all([...Array(24).keys()].map((id) => get(sim, `${o}/go/${(id % h.pageCount).toString(36)}`)));
    expect(go.every((r) => r.status >= 301 && r.status <= 308)).toBe(true);
    expect(go.some((r) => r.headers.location!.startsWith("/"))).toBe(true);
  });

  test("spider traps: an infinite calendar and session ids in URLs", async () => {
    const cal = hostWith("trap-calendar");
    let url = `${cal.scheme}://${cal.name}/calendar/2025/01/`;
    const seen = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const r = await get(sim, url);
      expect(r.status).toBe(200);
      seen.add(url);
      let found: string | null = null;
      for (const m of r.body.toString().matchAll(/href=(?:"([^"]*)"|'([^']*)'|([^\s>]+))/g)) {
        const u = canonicalUrl((m[1] ?? m[2] ?? m[3])!, url);
        if (u && /calendar\/\d{4}\/\d\d\/$/.test(u) && !seen.has(u) && u > url) found = u;
      }
      expect(found).not.toBeNull();
      url = found!;
    }
    expect(url).toMatch(/calendar\/2027\//);
    const ses = hostWith("trap-session");
    const entry = sim.world.links(sim.world.page(sim.world.model(ses.index), 0)).find((l) => l.kind === "trap" && l.url.includes("/shop/"))!;
    const r = await get(sim, entry.url);
    expect(r.status).toBe(200);
    const sids = [...r.body.toString().matchAll(/href=[^>]*?sid=([0-9a-f]{16})/g)].map((x) => x[1]);
    expect(new Set(sids).size, r.body.toString().slice(-600)).toBeGreaterThanOrEqual(4);
    expect(sids).not.toContain(new URL(entry.url).searchParams.get("sid"));
    expect(sim.world.isTrap(entry.url)).toBe(true);
  });

  test("non-HTML content types", async () => {
    const h = hostWith("non-html");
    const m = sim.world.model(h.index);
    const types = new Set<string>();
    for (let id = 1; id < Math.min(h.pageCount, 60); id++) {
      const p = sim.world.page(m, id);
      if (p.kind === "html") continue;
      const r = await get(sim, p.url);
      expect(r.status).toBe(200);
      types.add(String(r.headers["content-type"]));
    }
    expect([...types].some((t) => /application\/pdf|image\/jpeg|application\/json|text\/plain/.test(t))).toBe(true);
  });

  test("huge pages are streamed in full with a correct Content-Length", async () => {
    const h = hostWith("huge", (x) => !x.behaviours.includes("compress"));
    const m = sim.world.model(h.index);
    let id = 1;
    while (!sim.world.page(m, id).huge) id++;
    const r = await get(sim, pageUrl(h, id), { timeoutMs: 30_000 });
    expect(r.status).toBe(200);
    expect(r.body.length).toBeGreaterThanOrEqual(3_000_000);
    expect(r.body.length).toBe(Number(r.headers["content-length"]));
    expect(r.body.subarray(-8).toString()).toBe("</html>\n");
  });

  test("gzip, br and deflate when accepted; identity otherwise; same bytes once decoded", async () => {
    const encs = new Set<string>();
    for (const h of sim.world.hosts().filter((x) => x.behaviours.includes("compress") && DISRUPTIVE.every((d) => !x.behaviours.includes(d)))) {
      const enc = sim.world.model(h.index).encoding;
      if (encs.has(enc)) continue;
      const plain = await get(sim, home(h));
      expect(plain.headers["content-encoding"]).toBeUndefined();
      const z = await get(sim, home(h), { headers: { "accept-encoding": "gzip, deflate, br" } });
      expect(z.headers["content-encoding"]).toBe(enc);
      expect(z.headers.vary).toBe("Accept-Encoding");
      expect(decoded(z).equals(plain.body)).toBe(true);
      const refused = await get(sim, home(h), { headers: { "accept-encoding": `${enc};q=0` } });
      expect(refused.headers["content-encoding"]).toBeUndefined();
      encs.add(enc);
    }
    expect([...encs].sort()).toEqual(["br", "deflate", "gzip"]);
  });

  test("wrong charset declarations: the declared charset does not match the bytes", async () => {
    const hs = sim.world.hosts().filter((x) => x.behaviours.includes("wrong-charset") && DISRUPTIVE.every((d) => !x.behaviours.includes(d)) && !x.behaviours.includes("compress"));
    const headerLies = hs.find((x) => sim.world.model(x.index).charsetDecl === "header-lies")!;
    const r1 = await get(sim, home(headerLies));
    expect(r1.headers["content-type"]).toBe("text/html; charset=iso-8859-1");
    expect(new TextDecoder("utf-8", { fatal: true }).decode(r1.body)).toMatch(/[^\p{ASCII}]/u); // really UTF-8
    const metaLies = hs.find((x) => sim.world.model(x.index).charsetDecl === "meta-lies")!;
    const r2 = await get(sim, home(metaLies));
    expect(r2.body.toString("latin1")).toContain('<meta charset="utf-8">');
    expect(() => new TextDecoder("utf-8", { fatal: true }).decode(r2.body)).toThrow(); // really windows-1252
  });

  test("decompression bomb: small on the wire, huge inflated", async () => {
    const h = hostWith("bomb");
    const r = await get(sim, `${h.scheme}://${h.name}/download/archive-0.html`, { timeoutMs: 30_000 });
    expect(r.status).toBe(200);
    expect(r.headers["content-encoding"]).toBe("gzip");
    expect(r.body.length).toBeLessThan(200_000);
    const inflated = gunzipSync(r.body, { maxOutputLength: 64 * 1024 * 1024 });
    expect(inflated.length).toBe(16 * 1024 * 1024);
    expect(inflated.length / r.body.length).toBeGreaterThan(500);
  });
});
