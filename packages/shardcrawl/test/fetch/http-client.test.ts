// The HTTP client against real node:http / node:net servers on 127.0.0.1.
import http from "node:http";
import net from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpClient, toFetchedPage, type FetchOutcome, type FetchSuccess, type HttpClient } from "../../src/fetch/http-client.js";
import { listen, shutdown, trackConnections } from "./helpers/servers.js";

const UA = "shardcrawl/0.1 (+https://example.invalid/bot)";

function ok(outcome: FetchOutcome): FetchSuccess {
  if (!outcome.ok) throw new Error(`expected success, got ${outcome.errorClass}: ${outcome.detail}`);
  return outcome;
}

function failed(outcome: FetchOutcome) {
  if (outcome.ok) throw new Error(`expected failure, got status ${outcome.status}`);
  return outcome;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("http client over node:http", () => {
  let server: http.Server;
  let port: number;
  let connections: { count: () => number };
  const seen: Array<{ url: string; headers: string[] }> = [];
  const liveResponses = new Set<http.ServerResponse>();
  let client: HttpClient;
  const gzipped = gzipSync(Buffer.from("<html>compressed</html>"));

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      seen.push({ url: req.url ?? "", headers: req.rawHeaders });
      liveResponses.add(res);
      res.on("close", () => liveResponses.delete(res));
      const path = req.url ?? "/";
      if (path === "/page") {
        res.writeHead(200, [["Content-Type", "text/html"], ["X-First", "1"], ["set-cookie", "a=1"], ["Set-Cookie", "b=2"]]);
        res.end("<html>hello</html>");
      } else if (path === "/gzip") {
        res.writeHead(200, { "Content-Type": "text/html", "Content-Encoding": "gzip" });
        res.end(gzipped);
      } else if (path === "/redirect") {
        res.writeHead(301, { Location: "../target?x=1" });
        res.end();
      } else if (path.startsWith("/big")) {
        // Streams up to 64 MiB unless the client goes away first.
        res.writeHead(200, { "Content-Type": "application/octet-stream" });
        let sent = 0;
        const chunk = Buffer.alloc(64 * 1024, 97);
        const pump = () => {
          while (sent < 64 * 1024 * 1024 && !res.destroyed) {
            sent += chunk.length;
            if (!res.write(chunk)) return void res.once("drain", pump);
          }
          res.end();
        };
        pump();
      } else if (path.startsWith("/sized/") || path.startsWith("/chunked/")) {
        // n bytes of 'c', with Content-Length (/sized/n) or chunked without it (/chunked/n).
        const n = Number(path.split("/")[2]);
        res.writeHead(200, path.startsWith("/sized/") ? { "Content-Length": String(n) } : {});
        for (let sent = 0; sent < n; sent += 700) res.write(Buffer.alloc(Math.min(700, n - sent), 99));
        res.end();
      } else if (path === "/exact") {
        res.end(Buffer.alloc(1000, 98));
      } else if (path === "/stall") {
        res.writeHead(200, { "Content-Length": "1000" });
        res.write(Buffer.alloc(100, 99));
      } else if (path === "/drip") {
        res.writeHead(200, { "Content-Type": "text/plain" });
        const timer = setInterval(() => res.write("x"), 40);
        res.on("close", () => clearInterval(timer));
        setTimeout(() => res.destroy(), 20_000).unref();
      } else if (path === "/reset") {
        res.writeHead(200, { "Content-Length": "1000" });
        res.write(Buffer.alloc(500, 100), () => setTimeout(() => req.socket.resetAndDestroy(), 30));
      } else if (path === "/huge-headers") {
        res.writeHead(200, { "X-Filler": "f".repeat(64 * 1024) });
        res.end("x");
      } else {
        res.writeHead(404);
        res.end("nope");
      }
    });
    connections = trackConnections(server);
    port = await listen(server);
    client = createHttpClient({
      userAgent: UA,
      allowPrivate: true,
      maxBodyBytes: 1000,
      maxHeaderBytes: 16 * 1024,
      timeouts: { bodyMs: 300, headersMs: 2_000, totalMs: 5_000 },
    });
  });

  afterAll(async () => {
    for (const res of liveResponses) res.destroy();
    await client.close();
    await shutdown(server);
  });

  const url = (path: string) => `http://127.0.0.1:${port}${path}`;

  it("returns status, ordered raw headers, the request headers sent, version, ip and timings", async () => {
    const res = ok(await client.fetch(url("/page#frag")));
    expect(res.status).toBe(200);
    expect(res.statusText).toBe("OK");
    expect(res.httpVersion).toBe("1.1");
    expect(res.body.toString()).toBe("<html>hello</html>");
    expect(res.headers.slice(0, 4)).toEqual([
      ["Content-Type", "text/html"],
      ["X-First", "1"],
      ["set-cookie", "a=1"],
      ["Set-Cookie", "b=2"],
    ]);
    expect(res.requestLine).toBe("GET /page HTTP/1.1");
    expect(res.requestHeaders).toContainEqual(["user-agent", UA]);
    expect(res.requestHeaders).toContainEqual(["accept-encoding", "gzip, deflate, br"]);
    expect(res.requestHeaders).toContainEqual(["host", `127.0.0.1:${port}`]);
    // what the server got is what we say we sent
    const got = seen.at(-1)!;
    expect(got.headers[got.headers.indexOf("user-agent") + 1]).toBe(UA);
    expect(res.ip).toBe("127.0.0.1");
    expect(res.timings.total).toBeGreaterThan(0);
    expect(res.timings.ttfb).toBeDefined();
    expect(res.truncated).toBeUndefined();

    const page = toFetchedPage(res, { host: "127.0.0.1", depth: 2, hops: 0 });
    expect(page).toMatchObject({ status: 200, httpVersion: "1.1", ip: "127.0.0.1", depth: 2, url: res.url });
  });

  it("keeps the body as received (content-encoding not removed)", async () => {
    const res = ok(await client.fetch(url("/gzip")));
    expect(res.body.equals(gzipped)).toBe(true);
  });

  it("does not follow redirects and resolves Location against the request URL", async () => {
    const before = seen.length;
    const res = ok(await client.fetch(url("/redirect")));
    expect(res.status).toBe(301);
    expect(res.location).toBe(`http://127.0.0.1:${port}/target?x=1`);
    await sleep(50);
    expect(seen.slice(before).map((s) => s.url)).toEqual(["/redirect"]);
  });

  it("reuses a kept-alive connection for the next request", async () => {
    const first = ok(await client.fetch(url("/page")));
    const before = connections.count();
    const second = ok(await client.fetch(url("/page")));
    const third = ok(await client.fetch(url("/page")));
    expect(connections.count()).toBe(before);
    expect([second.reusedConnection, third.reusedConnection]).toEqual([true, true]);
    expect(second.timings.connect).toBeUndefined();
    expect(first.ok).toBe(true);
  });

  it("stops reading at maxBodyBytes and closes the connection", async () => {
    const res = ok(await client.fetch(url("/big")));
    expect(res.truncated).toBe("length");
    expect(res.body.length).toBe(1000);
    expect(res.body.every((b) => b === 97)).toBe(true);
    // The pieces as received add up to the same cut body (the spool writes them unjoined).
    expect(Buffer.concat(res.bodyPieces ?? []).equals(res.body)).toBe(true);
    // the server sees the connection go away long before its 64 MiB are written
    const deadline = Date.now() + 5_000;
    while (liveResponses.size > 0 && Date.now() < deadline) await sleep(20);
    expect(liveResponses.size).toBe(0);
  });

  describe("draining the rest of a cut body to keep the connection (drainBytes)", () => {
    // Each case: a cut page, then a small one; did the second go over the first one's connection?
    async function cutThenNext(path: string, drainBytes: number): Promise<{ cut: FetchSuccess; reused: boolean; opened: number }> {
      ok(await client.fetch(url("/page"))); // a warm connection to start from
      const before = connections.count();
      const cut = ok(await client.fetch(url(path), { drainBytes }));
      const next = ok(await client.fetch(url("/page")));
      return { cut, reused: next.reusedConnection, opened: connections.count() - before };
    }

    it("a rest within drainBytes (known length) is read and dropped: same body, same connection", async () => {
      const r = await cutThenNext("/sized/4000", 5000);
      expect(r.cut.truncated).toBe("length");
      expect(r.cut.body.length).toBe(1000);
      expect(r.cut.body.every((b) => b === 99)).toBe(true);
      expect([r.reused, r.opened]).toEqual([true, 0]);
    });

    it("a rest over drainBytes (known length) is not read: the connection closes at the cut", async () => {
      const r = await cutThenNext("/sized/40000", 5000);
      expect(r.cut.truncated).toBe("length");
      expect(r.cut.body.length).toBe(1000);
      expect(r.reused).toBe(false);
      expect(r.opened).toBeGreaterThan(0);
    });

    it("unknown length: drains up to drainBytes, keeps the connection if the body ended by then", async () => {
      const short = await cutThenNext("/chunked/4000", 5000);
      expect(short.cut.body.length).toBe(1000);
      expect(short.cut.truncated).toBe("length");
      expect([short.reused, short.opened]).toEqual([true, 0]);
      const long = await cutThenNext("/chunked/40000", 5000);
      expect(long.cut.body.length).toBe(1000);
      expect(long.cut.truncated).toBe("length");
      expect(long.reused).toBe(false);
      expect(long.opened).toBeGreaterThan(0);
    });

    it("drainBytes 0 (the default) closes at the cut", async () => {
      const r = await cutThenNext("/sized/4000", 0);
      expect(r.cut.body.length).toBe(1000);
      expect(r.reused).toBe(false);
      expect(r.opened).toBeGreaterThan(0);
    });
  });

  it("a per-request cap overrides the client's", async () => {
    const res = ok(await client.fetch(url("/big2"), { maxBodyBytes: 10 }));
    expect(res.body.length).toBe(10);
    expect(res.truncated).toBe("length");
  });

  it("a body of exactly maxBodyBytes is not truncated", async () => {
    const res = ok(await client.fetch(url("/exact")));
    expect(res.body.length).toBe(1000);
    expect(res.truncated).toBeUndefined();
  });

  it("keeps what arrived when the body stalls (truncated: time, body-timeout)", async () => {
    const res = ok(await client.fetch(url("/stall")));
    expect(res.truncated).toBe("time");
    expect(res.errorClass).toBe("body-timeout");
    expect(res.body.length).toBe(100);
  });

  it("stops a body that drips forever at the total timeout", async () => {
    const res = ok(await client.fetch(url("/drip"), { totalMs: 600 }));
    expect(res.truncated).toBe("time");
    expect(res.errorClass).toBe("total-timeout");
    expect(res.body.length).toBeGreaterThan(0);
  });

  it("classifies a connection reset mid-body", async () => {
    const res = failed(await client.fetch(url("/reset")));
    expect(res.errorClass).toBe("reset");
    expect(res.detail).toMatch(/500 body bytes/);
  });

  it("refuses oversized response headers", async () => {
    const res = failed(await client.fetch(url("/huge-headers")));
    expect(res.errorClass).toBe("too-large-headers");
  });

  it("sends HEAD when asked and lets extra headers replace defaults", async () => {
    const res = ok(await client.fetch(url("/page"), { method: "HEAD", headers: { "User-Agent": "other/1", "If-None-Match": '"x"' } }));
    expect(res.requestLine).toBe("HEAD /page HTTP/1.1");
    expect(res.requestHeaders.filter(([k]) => k.toLowerCase() === "user-agent")).toEqual([["User-Agent", "other/1"]]);
    expect(res.requestHeaders).toContainEqual(["If-None-Match", '"x"']);
    expect(res.body.length).toBe(0);
  });

  it("refuses a Host override and non-http schemes without sending anything", async () => {
    expect(failed(await client.fetch(url("/page"), { headers: { host: "evil.test" } })).errorClass).toBe("other");
    expect(failed(await client.fetch("ftp://127.0.0.1/x")).errorClass).toBe("url-invalid");
    expect(failed(await client.fetch("not a url")).errorClass).toBe("url-invalid");
  });

  it("honours the caller's AbortSignal", async () => {
    const ac = new AbortController();
    const pending = client.fetch(url("/drip"), { totalMs: 10_000, signal: ac.signal });
    setTimeout(() => ac.abort(), 100);
    // headers had arrived, so the part of the body read so far is kept
    const res = ok(await pending);
    expect(res.truncated).toBe("time");
    expect(res.errorClass).toBe("other");
    expect(res.detail).toMatch(/aborted by caller/);
  });
});

describe("http client over raw sockets", () => {
  const servers: net.Server[] = [];
  let client: HttpClient;

  beforeAll(() => {
    client = createHttpClient({ userAgent: UA, allowPrivate: true, timeouts: { headersMs: 300, connectMs: 2_000, totalMs: 5_000 } });
  });
  afterAll(async () => {
    await client.close();
    await Promise.all(servers.map((s) => shutdown(s)));
  });

  async function rawServer(onRequest: (socket: net.Socket) => void): Promise<number> {
    const server = net.createServer((socket) => socket.once("data", () => onRequest(socket)));
    trackConnections(server);
    servers.push(server);
    return listen(server);
  }

  it("reports the HTTP version of the status line (HTTP/1.0)", async () => {
    const port = await rawServer((s) => s.end("HTTP/1.0 200 Fine\r\nContent-Type: text/plain\r\n\r\nold"));
    const res = ok(await client.fetch(`http://127.0.0.1:${port}/`));
    expect(res.httpVersion).toBe("1.0");
    expect(res.statusText).toBe("Fine");
    expect(res.body.toString()).toBe("old");
  });

  it("times out headers that never end", async () => {
    const port = await rawServer((s) => s.write("HTTP/1.1 200 OK\r\nX-Slow: 1\r\n"));
    const res = failed(await client.fetch(`http://127.0.0.1:${port}/`));
    expect(res.errorClass).toBe("headers-timeout");
  });

  it("classifies a malformed response as http-protocol", async () => {
    const port = await rawServer((s) => s.end("HELLO THERE\r\n\r\n"));
    const res = failed(await client.fetch(`http://127.0.0.1:${port}/`));
    expect(res.errorClass).toBe("http-protocol");
  });

  it.each([
    ["RST", (s: net.Socket) => s.resetAndDestroy()],
    ["FIN", (s: net.Socket) => s.end()],
  ])("classifies a connection ended mid-body (%s, Connection: close) as reset", async (_how, endIt) => {
    const port = await rawServer((s) => {
      s.write("HTTP/1.1 200 OK\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n" + "a".repeat(5000));
      setTimeout(() => endIt(s), 50);
    });
    const res = failed(await client.fetch(`http://127.0.0.1:${port}/`));
    expect(res.errorClass).toBe("reset");
    expect(res.detail).toMatch(/before the promised body|ECONNRESET/);
  });

  it("classifies a refused connection as connect", async () => {
    const probe = net.createServer();
    const port = await listen(probe);
    await shutdown(probe);
    const res = failed(await client.fetch(`http://127.0.0.1:${port}/`));
    expect(res.errorClass).toBe("connect");
    expect(res.detail).toMatch(/ECONNREFUSED/);
  });

  it("fails a .invalid name as dns without asking any resolver", async () => {
    const calls: string[] = [];
    const c = createHttpClient({
      userAgent: UA,
      dnsLookup: (name) => {
        calls.push(name);
        return Promise.reject(new Error("resolver must not be asked"));
      },
    });
    const res = failed(await c.fetch("http://no-such-host.invalid/"));
    await c.close();
    expect(res.errorClass).toBe("dns");
    expect(res.detail).toMatch(/ENOTFOUND/);
    expect(calls).toEqual([]);
  });

  it("uses one connection per origin when connectionsPerOrigin is 1", async () => {
    const server = http.createServer((_req, res) => setTimeout(() => res.end("ok"), 20));
    const conns = trackConnections(server);
    const port = await listen(server);
    const c = createHttpClient({ userAgent: UA, allowPrivate: true, connectionsPerOrigin: 1 });
    const results = await Promise.all([1, 2, 3, 4].map((i) => c.fetch(`http://127.0.0.1:${port}/${i}`)));
    await c.close();
    await shutdown(server);
    expect(results.every((r) => r.ok && r.status === 200)).toBe(true);
    expect(conns.count()).toBe(1);
  });

  it("resolves names through the DNS cache once, and reports the lookup time on the first request", async () => {
    const server = http.createServer((_req, res) => res.writeHead(200, { Connection: "close" }).end("ok"));
    trackConnections(server);
    const port = await listen(server);
    const calls: string[] = [];
    const c = createHttpClient({
      userAgent: UA,
      allowPrivate: true,
      dnsLookup: (name) => {
        calls.push(name);
        return Promise.resolve(name === "cached.test" ? [{ address: "127.0.0.1", family: 4 }] : []);
      },
    });
    const first = ok(await c.fetch(`http://cached.test:${port}/1`));
    const second = ok(await c.fetch(`http://cached.test:${port}/2`));
    await c.close();
    await shutdown(server);
    expect(calls).toEqual(["cached.test"]);
    expect(first.timings.dns).toBeDefined();
    // a new connection (the server closed the first), served from the cache
    expect(second.reusedConnection).toBe(false);
    expect(second.ip).toBe("127.0.0.1");
  });

  it("connects to an IPv6 literal when private addresses are allowed", async () => {
    const server = http.createServer((req, res) => res.end(req.headers.host));
    trackConnections(server);
    const port = await listen(server, "::1");
    const c = createHttpClient({ userAgent: UA, allowPrivate: true });
    const res = ok(await c.fetch(`http://[::1]:${port}/`));
    await c.close();
    await shutdown(server);
    expect(res.body.toString()).toBe(`[::1]:${port}`);
    expect(res.ip).toBe("::1");
  });
});
