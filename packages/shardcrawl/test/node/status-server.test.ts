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
    } finally {
      await server.close();
    }
  });
});
