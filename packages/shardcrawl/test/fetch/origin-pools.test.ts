// An origin's undici Pool outlives its connections: with a server that closes every connection, each
// request opens a new one (counted by the server) on the same Pool; past the bound, the origin used
// longest ago loses its Pool, and its next request gets a new one.
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { Dispatcher } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { OriginPools } from "../../src/fetch/origin-pools.js";
import { buildConnector } from "../../src/fetch/undici-parts.js";

/** One GET through `pools`; resolves with the status (0 on error). */
function get(pools: OriginPools, origin: string): Promise<number> {
  return new Promise((resolve) => {
    let status = 0;
    const handler: Dispatcher.DispatchHandler = {
      onRequestStart: () => {},
      onResponseStart: (_c, code) => { status = code; },
      onResponseData: () => {},
      onResponseEnd: () => resolve(status),
      onResponseError: () => resolve(0),
    };
    pools.dispatch({ origin, path: "/", method: "GET" }, handler);
  });
}

describe("OriginPools", () => {
  let server: Server;
  let connections = 0;
  let port = 0;
  beforeAll(async () => {
    server = createServer((_req, res) => res.writeHead(200, { connection: "close" }).end("ok"));
    server.on("connection", () => connections++);
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  it.each([1, 2])("keeps an origin's dispatcher across connections the server closed (%i per origin: a Client at 1, a Pool above)", async (perOrigin) => {
    const pools = new OriginPools({ connect: buildConnector({ timeout: 5_000 }), pipelining: 1, connections: perOrigin });
    const before = connections;
    for (let i = 0; i < 3; i++) expect(await get(pools, `http://127.0.0.1:${port}`)).toBe(200);
    expect(connections - before).toBe(3);
    expect(pools.created).toBe(1);
    expect(pools.size).toBe(1);
    await pools.close();
    expect(pools.size).toBe(0);
  });

  it("closes the Pool of the origin used longest ago past maxOrigins", async () => {
    const pools = new OriginPools({ connect: buildConnector({ timeout: 5_000 }), pipelining: 1, connections: 2 }, 2);
    // Three names for one server: three origins.
    const origins = [`http://127.0.0.1:${port}`, `http://localhost:${port}`, `http://[::ffff:127.0.0.1]:${port}`];
    for (const o of origins) expect(await get(pools, o)).toBe(200);
    expect(pools.size).toBe(2);
    expect(pools.created).toBe(3);
    // The newest two keep theirs; the first needs a new one.
    expect(await get(pools, origins[2]!)).toBe(200);
    expect(pools.created).toBe(3);
    expect(await get(pools, origins[0]!)).toBe(200);
    expect(pools.created).toBe(4);
    await pools.close();
  });
});
