// The SSRF guard inside the HTTP client: a refused destination never gets a connection. A real
// server on 127.0.0.1 counts connections, and a process-wide tripwire records (and refuses) any
// connect() to a non-loopback address, so a guard bug cannot send traffic off this machine.
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpClient, type FetchOutcome } from "../../src/fetch/http-client.js";
import { isBlockedAddress } from "../../src/fetch/ssrf.js";
import { installLoopbackTripwire, type Tripwire } from "./helpers/loopback-tripwire.js";
import { listen, shutdown, trackConnections } from "./helpers/servers.js";

const UA = "shardcrawl/0.1";

function expectBlocked(outcome: FetchOutcome): void {
  if (outcome.ok) throw new Error(`expected ssrf-blocked, got status ${outcome.status}`);
  expect(outcome.errorClass, outcome.detail).toBe("ssrf-blocked");
}

describe("SSRF guard in the HTTP client", () => {
  let server: http.Server;
  let port: number;
  let connections: { count: () => number };
  let tripwire: Tripwire;
  const hosts: string[] = [];

  beforeAll(async () => {
    // The guard itself must agree before we let the client near these addresses.
    for (const ip of ["127.0.0.1", "169.254.169.254", "::ffff:127.0.0.1", "::1"]) expect(isBlockedAddress(ip)).toBe(true);
    tripwire = installLoopbackTripwire();
    server = http.createServer((req, res) => {
      hosts.push(req.headers.host ?? "");
      res.end("reached");
    });
    connections = trackConnections(server);
    port = await listen(server);
  });

  afterAll(async () => {
    tripwire.uninstall();
    await shutdown(server);
  });

  const guarded = () =>
    createHttpClient({
      userAgent: UA,
      resolve: [
        `loop.test:${port}:127.0.0.1`,
        `metadata.test:80:169.254.169.254`,
        `mapped.test:${port}:::ffff:127.0.0.1`,
        `nat64.test:${port}:[64:ff9b::7f00:1]`,
        `private.test:${port}:10.0.0.1,192.168.0.1`,
      ],
      connectTo: [`public.test:80:127.0.0.1:${port}`],
    });

  it.each([
    ["a name resolved (--resolve) to 127.0.0.1", () => `http://loop.test:${port}/`],
    ["a name resolved to 169.254.169.254 (cloud metadata)", () => "http://metadata.test/latest/meta-data/"],
    ["a name resolved to ::ffff:127.0.0.1", () => `http://mapped.test:${port}/`],
    ["a name resolved to NAT64 64:ff9b::7f00:1", () => `http://nat64.test:${port}/`],
    ["a name resolved to private addresses only", () => `http://private.test:${port}/`],
    ["an IPv4 literal", () => `http://127.0.0.1:${port}/`],
    ["an IPv6 literal", () => `http://[::1]:${port}/`],
    ["an IPv4-mapped IPv6 literal", () => `http://[::ffff:127.0.0.1]:${port}/`],
    ["a decimal IPv4 spelling", () => `http://2130706433:${port}/`],
    ["an octal IPv4 spelling", () => `http://0177.0.0.1:${port}/`],
    ["a hex IPv4 spelling", () => `http://0x7f.1:${port}/`],
    ["localhost", () => `http://localhost:${port}/`],
    ["a connect-to mapping onto 127.0.0.1", () => "http://public.test/"],
  ])("refuses %s without opening a connection", async (_what, target) => {
    const client = guarded();
    const before = connections.count();
    const attempts = tripwire.attempts.length;
    const outcome = await client.fetch(target());
    await client.close();
    expectBlocked(outcome);
    expect(connections.count()).toBe(before);
    expect(tripwire.attempts.slice(attempts)).toEqual([]);
  });

  it("says which address was refused and why", async () => {
    const client = guarded();
    const outcome = await client.fetch("http://metadata.test/");
    await client.close();
    expect(outcome.ok ? "" : outcome.detail).toMatch(/169\.254\.169\.254 \(link-local\)/);
  });

  it("connects when allowPrivate is set, keeping the URL's Host header through connect-to", async () => {
    const client = createHttpClient({ userAgent: UA, allowPrivate: true, connectTo: [`public.test:80:127.0.0.1:${port}`] });
    const before = connections.count();
    const outcome = await client.fetch("http://public.test/hello");
    await client.close();
    expect(outcome.ok && outcome.body.toString()).toBe("reached");
    expect(outcome.ok && outcome.ip).toBe("127.0.0.1");
    expect(connections.count()).toBe(before + 1);
    expect(hosts.at(-1)).toBe("public.test");
  });
});
