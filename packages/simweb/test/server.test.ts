import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { readFileSync } from "node:fs";
import { startSimwebInProcess } from "../../../test/harness/simweb.js";
import { SimClock, type RunningSimweb, type LogEntry } from "../src/index.js";
import { get } from "./client.js";

const T0 = Date.UTC(2025, 2, 1);

describe("HTTP server", () => {
  let a: RunningSimweb & { logFile: string | undefined };
  let b: RunningSimweb & { logFile: string | undefined };
  beforeAll(async () => {
    a = await startSimwebInProcess({ config: { seed: 42 }, clock: new SimClock(T0) });
    b = await startSimwebInProcess({ config: { seed: 42 }, clock: new SimClock(T0), log: false });
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
  });

  test("many hosts behind one port, chosen by the Host header; the same seed serves the same bytes", async () => {
    const seeds = a.world.seeds(6);
    const bodies = new Set<string>();
    for (const url of seeds) {
      const ra = await get(a, url, { headers: { "accept-encoding": "identity" } });
      const rb = await get(b, url, { headers: { "accept-encoding": "identity" } });
      expect(ra.status).toBe(200);
      expect(ra.body.equals(rb.body)).toBe(true);
      expect(ra.body.toString("latin1")).toContain(new URL(url).hostname);
      bodies.add(ra.body.toString("base64"));
    }
    expect(bodies.size).toBe(seeds.length);
  });

  test("an unserved Host gets its connection destroyed; unknown paths get 404; wrong scheme gets 301", async () => {
    const r = await get(a, "http://www.nothere.invalid/");
    expect(r.status).toBe(0);
    expect(r.error).toBeDefined();
    const h = a.world.hosts()[0]!;
    expect((await get(a, `${h.scheme}://${h.name}/no/such/page.html`)).status).toBe(404);
    const other = h.scheme === "http" ? "https" : "http";
    const moved = await get(a, `${other}://${h.name}/x?y=1`);
    expect(moved.status).toBe(301);
    expect(moved.headers.location).toBe(`${h.scheme}://${h.name}/x?y=1`);
  });

  test("pages linked from the home page are served, in every spelling's canonical form, including %7E and raw spellings", async () => {
    const w = a.world;
    const h = w.model(0);
    let ok = 0;
    for (const l of w.links(w.page(h, 0))) {
      if (l.kind !== "same" && l.kind !== "nav" && l.kind !== "tree") continue;
      const r = await get(a, l.url);
      expect(r.status, l.url).toBe(200);
      ok++;
    }
    expect(ok).toBeGreaterThan(3);
    const tilde = [...Array(h.info.pageCount).keys()].map((id) => w.page(h, id)).find((p) => p.path.startsWith("/~"));
    if (tilde) expect((await get(a, tilde.url.replace("/~", "/%7E"))).status).toBe(200);
  });

  test("the request log has one line per request with the contract's fields", async () => {
    const h = a.world.hosts()[1]!;
    await get(a, `${h.scheme}://${h.name}/`);
    await new Promise((r) => setTimeout(r, 400)); // flushed at least every 200 ms
    const lines = readFileSync(a.logFile!, "utf8").trim().split("\n").map((l) => JSON.parse(l) as LogEntry);
    const mine = lines.filter((l) => l.host === h.name && l.path === "/");
    expect(mine.length).toBeGreaterThan(0);
    const e = mine[mine.length - 1]!;
    expect(e).toMatchObject({ host: h.name, scheme: h.scheme, method: "GET", path: "/", status: 200, inflight: 1, ua: "shardcrawl-test/1.0", sim: T0 });
    expect(e.bytes).toBeGreaterThan(1000);
    expect(e.end).toBeGreaterThanOrEqual(e.ts);
    expect(Math.abs(e.ts - Date.now())).toBeLessThan(60_000); // real wall-clock time
    const dead = lines.find((l) => l.host === "www.nothere.invalid");
    expect(dead?.status).toBe(0);
  });

  test("HEAD answers headers only; other methods get 405", async () => {
    const h = a.world.hosts()[0]!;
    const r = await get(a, `${h.scheme}://${h.name}/`, { method: "HEAD" });
    expect(r.status).toBe(200);
    expect(r.body.length).toBe(0);
    expect(Number(r.headers["content-length"])).toBeGreaterThan(1000);
    expect((await get(a, `${h.scheme}://${h.name}/`, { method: "POST" })).status).toBe(405);
    const full = await get(a, `${h.scheme}://${h.name}/`, { headers: { "accept-encoding": "identity" } });
    expect(full.body.length).toBe(Number(r.headers["content-length"]));
  });
});
