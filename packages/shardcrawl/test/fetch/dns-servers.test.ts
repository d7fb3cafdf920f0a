// --dns-server against a real DNS server on loopback UDP: answers become connections, NXDOMAIN,
// SERVFAIL and silence become classified `dns` failures with the resolver's code, and no
// connection is attempted for them.
import { createServer } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsServer, type TestDnsServer } from "../../../../test/harness/dns-server.js";
import { checkDnsServers, dnsServerLookup } from "../../src/fetch/dns-servers.js";
import { createHttpClient, type HttpClient } from "../../src/fetch/http-client.js";
import { listen, shutdown, trackConnections } from "./helpers/servers.js";

let dns: TestDnsServer;
let client: HttpClient;
let httpPort: number;
const http = createServer((_req, res) => res.end("hello"));
let connections: { count: () => number };

beforeAll(async () => {
  dns = await startDnsServer((name) => {
    if (name.startsWith("nx.")) return "nxdomain";
    if (name.startsWith("servfail.")) return "servfail";
    if (name.startsWith("silent.")) return "silent";
    if (name.startsWith("v6only.")) return { addresses: ["::1"] };
    return { addresses: ["127.0.0.1"] };
  });
  connections = trackConnections(http);
  httpPort = await listen(http);
  client = createHttpClient({
    userAgent: "t", allowPrivate: true, connectTo: [`:80::${httpPort}`],
    dnsLookup: dnsServerLookup([dns.address], 500), timeouts: { connectMs: 800, totalMs: 3000 },
  });
});
afterAll(async () => {
  await client.close();
  await shutdown(http);
  await dns.close();
});

describe("dns-server settings", () => {
  it("accepts ip, ip:port and [ipv6]:port, and names what is wrong otherwise", () => {
    expect(checkDnsServers(["127.0.0.1", "127.0.0.1:5353", "::1", "[::1]:53"])).toEqual([]);
    expect(checkDnsServers(["localhost:53"])).toHaveLength(1);
    expect(checkDnsServers(["127.0.0.1:0"])).toHaveLength(1);
    expect(checkDnsServers(["1.2.3.4:99999"])[0]).toMatch(/dns-server: expected/);
  });
});

describe("lookups through a DNS server", () => {
  it("resolves A and AAAA answers", async () => {
    const lookup = dnsServerLookup([dns.address], 500);
    expect(await lookup("ok.test")).toEqual([{ address: "127.0.0.1", family: 4, ttl: 60 }]);
    expect(await lookup("v6only.test")).toEqual([{ address: "::1", family: 6, ttl: 60 }]);
    expect(dns.questions).toEqual(expect.arrayContaining(["ok.test A", "ok.test AAAA"]));
  });

  it("fetches from a name the server answers (connect-to changes only the port)", async () => {
    const res = await client.fetch("http://ok.test/");
    expect(res.ok && res.status).toBe(200);
  });

  // NXDOMAIN is final ("dns"); SERVFAIL and a silent server are the resolver path, retried later ("dns-transient").
  it.each([
    ["nx.test", /ENOTFOUND/, "dns"],
    ["servfail.test", /ESERVFAIL/, "dns-transient"],
    ["silent.test", /ETIMEOUT/, "dns-transient"],
  ])("%s fails as a classified dns error without any connection", async (host, code, errorClass) => {
    const before = connections.count();
    const res = await client.fetch(`http://${host}/`);
    expect(res.ok).toBe(false);
    if (res.ok) return;
    expect(res.errorClass).toBe(errorClass);
    expect(res.detail).toMatch(code);
    expect(connections.count()).toBe(before);
  });
});
