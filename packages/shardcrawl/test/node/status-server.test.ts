import { afterEach, describe, expect, it } from "vitest";
import { defaultConfig } from "../../src/node/config.js";
import { startStatusServer, statusTokenFor } from "../../src/node/status-server.js";

describe("status endpoint exposure", () => {
  const saved = process.env.SHARDCRAWL_STATUS_TOKEN;
  afterEach(() => {
    if (saved === undefined) delete process.env.SHARDCRAWL_STATUS_TOKEN;
    else process.env.SHARDCRAWL_STATUS_TOKEN = saved;
  });

  it("needs no token on loopback", () => {
    expect(statusTokenFor({ ...defaultConfig(), statusBind: "127.0.0.1" })).toBeNull();
  });

  it("refuses to bind elsewhere without a token", () => {
    delete process.env.SHARDCRAWL_STATUS_TOKEN;
    expect(() => statusTokenFor({ ...defaultConfig(), statusBind: "0.0.0.0" })).toThrow(/SHARDCRAWL_STATUS_TOKEN/);
  });

  it("with a token, answers 401 without it and 200 with it (served on loopback here)", async () => {
    process.env.SHARDCRAWL_STATUS_TOKEN = "t0ken-t0ken-t0ken-t0ken";
    // statusBind "::ffff:127.0.0.1" is not in the loopback name list, so the token applies,
    // while the socket stays on loopback for the test.
    const server = await startStatusServer({ ...defaultConfig(), statusBind: "::ffff:127.0.0.1", statusPort: 0 }, () => ({ ok: true }));
    try {
      const url = `http://127.0.0.1:${server.port}/status`;
      expect((await fetch(url)).status).toBe(401);
      expect((await fetch(url, { headers: { authorization: "Bearer wrong" } })).status).toBe(401);
      const res = await fetch(url, { headers: { authorization: "Bearer t0ken-t0ken-t0ken-t0ken" } });
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual({ ok: true });
      // A browser: HTTP Basic with any user and the token as the password, for the page and its data.
      const basic = (pw: string) => ({ authorization: `Basic ${Buffer.from(`operator:${pw}`).toString("base64")}` });
      const page = await fetch(`http://127.0.0.1:${server.port}/`, { headers: basic("t0ken-t0ken-t0ken-t0ken") });
      expect(page.status).toBe(200);
      expect(await page.text()).toMatch(/<title>shardcrawl node<\/title>/);
      expect((await fetch(`http://127.0.0.1:${server.port}/`, { headers: basic("wrong") })).status).toBe(401);
      const challenge = await fetch(`http://127.0.0.1:${server.port}/`);
      expect(challenge.headers.get("www-authenticate")).toMatch(/Basic/);
    } finally {
      await server.close();
    }
  });

  it("serves the status page, its script, /history and /metrics on loopback", async () => {
    const server = await startStatusServer({ ...defaultConfig(), statusPort: 0 }, () => ({ node: "n9" }), () => [{ t: 1, fetched: 2 }]);
    try {
      const get = (p: string) => fetch(`http://127.0.0.1:${server.port}${p}`);
      const page = await get("/");
      expect(page.headers.get("content-type")).toMatch(/text\/html/);
      expect(await page.text()).toContain('<script src="/ui/charts.js">');
      expect(await (await get("/ui/charts.js")).text()).toContain("window.scCharts");
      expect(await (await get("/history")).json()).toEqual({ samples: [{ t: 1, fetched: 2 }] });
      expect(await (await get("/metrics")).text()).toContain('shardcrawl_pages_fetched_total{node="n9"} 0');
      const missing = await get("/nope");
      expect(missing.status).toBe(404);
      expect(await missing.text()).toMatch(/try \/, \/ui, \/status, \/history, \/metrics/);
    } finally {
      await server.close();
    }
  });
});
