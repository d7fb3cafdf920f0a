// HTTPS through the guarded connector: certificates always verified against Node's roots plus the
// caFile; SNI and Host stay the URL's host across connect-to; TLS sessions are resumed.
import https from "node:https";
import net from "node:net";
import type { TLSSocket } from "node:tls";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpClient, type FetchOutcome } from "../../src/fetch/http-client.js";
import { listen, shutdown, trackConnections } from "./helpers/servers.js";
import { createTestPki, type KeyPair, type TestPki } from "./helpers/test-pki.js";

const UA = "shardcrawl/0.1";

interface TlsServer {
  port: number;
  server: https.Server;
  sni: string[];
  hosts: string[];
  resumed: boolean[];
}

async function tlsServer(pair: KeyPair, opts: { close?: boolean } = {}): Promise<TlsServer> {
  const sni: string[] = [];
  const hosts: string[] = [];
  const resumed: boolean[] = [];
  const server = https.createServer({
    key: pair.key,
    cert: pair.cert,
    // Records SNI as soon as the ClientHello arrives, even when the client later rejects the certificate.
    SNICallback: (name, cb) => {
      sni.push(name);
      cb(null, undefined);
    },
  }, (req, res) => {
    hosts.push(req.headers.host ?? "");
    res.writeHead(200, opts.close ? { Connection: "close" } : {});
    res.end("secure");
  });
  server.on("secureConnection", (s: TLSSocket) => resumed.push(s.isSessionReused()));
  trackConnections(server);
  const port = await listen(server);
  return { port, server, sni, hosts, resumed };
}

function failure(outcome: FetchOutcome) {
  if (outcome.ok) throw new Error(`expected a failure, got ${outcome.status}`);
  return outcome;
}

describe("TLS", () => {
  let pki: TestPki;
  let good: TlsServer;
  let selfSigned: TlsServer;
  let expired: TlsServer;
  let reuse: TlsServer;

  beforeAll(async () => {
    pki = createTestPki();
    good = await tlsServer(pki.leaf(["www.example.test"]));
    selfSigned = await tlsServer(pki.selfSigned(["self.example.test"]));
    expired = await tlsServer(pki.leaf(["old.example.test"], { expired: true }));
    reuse = await tlsServer(pki.leaf(["resume.example.test"]), { close: true });
  });

  afterAll(async () => {
    await Promise.all([good, selfSigned, expired, reuse].map((s) => shutdown(s.server)));
    pki.cleanup();
  });

  const client = (extra: { caFile?: string } = {}) =>
    createHttpClient({
      userAgent: UA,
      allowPrivate: true,
      connectTo: [
        `www.example.test:443:127.0.0.1:${good.port}`,
        `other.example.test:443:127.0.0.1:${good.port}`,
        `self.example.test:443:127.0.0.1:${selfSigned.port}`,
        `old.example.test:443:127.0.0.1:${expired.port}`,
        `resume.example.test:443:127.0.0.1:${reuse.port}`,
      ],
      ...extra,
    });

  it("connects through connect-to with the URL's host as SNI and Host header (test CA via caFile)", async () => {
    const c = client({ caFile: pki.caFile });
    const res = await c.fetch("https://www.example.test/secret");
    await c.close();
    if (!res.ok) throw new Error(`${res.errorClass}: ${res.detail}`);
    expect(res.status).toBe(200);
    expect(res.body.toString()).toBe("secure");
    expect(good.sni.at(-1)).toBe("www.example.test");
    expect(good.hosts.at(-1)).toBe("www.example.test");
    expect(res.ip).toBe("127.0.0.1");
    expect(res.timings.tls).toBeDefined();
    expect(res.timings.connect).toBeDefined();
  });

  it("rejects a certificate from an unknown CA when no caFile is given", async () => {
    const c = client();
    const res = failure(await c.fetch("https://www.example.test/"));
    await c.close();
    expect(res.errorClass).toBe("tls");
    expect(res.detail).toMatch(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT_LOCALLY/);
  });

  it("rejects a self-signed certificate", async () => {
    const c = client({ caFile: pki.caFile });
    const res = failure(await c.fetch("https://self.example.test/"));
    await c.close();
    expect(res.errorClass).toBe("tls");
    expect(res.detail).toMatch(/DEPTH_ZERO_SELF_SIGNED_CERT/);
  });

  it("rejects a certificate for another host name", async () => {
    const c = client({ caFile: pki.caFile });
    const res = failure(await c.fetch("https://other.example.test/"));
    await c.close();
    expect(res.errorClass).toBe("tls");
    expect(res.detail).toMatch(/ERR_TLS_CERT_ALTNAME_INVALID/);
    expect(good.sni.at(-1)).toBe("other.example.test");
  });

  it("rejects an expired certificate", async () => {
    const c = client({ caFile: pki.caFile });
    const res = failure(await c.fetch("https://old.example.test/"));
    await c.close();
    expect(res.errorClass).toBe("tls");
    expect(res.detail).toMatch(/CERT_HAS_EXPIRED/);
  });

  it("resumes the TLS session on a new connection to the same host", async () => {
    const c = client({ caFile: pki.caFile });
    const results: FetchOutcome[] = [];
    for (let i = 0; i < 3; i++) results.push(await c.fetch(`https://resume.example.test/${i}`));
    await c.close();
    expect(results.every((r) => r.ok && r.status === 200)).toBe(true);
    // every response said Connection: close, so each fetch needed a new TLS connection
    expect(reuse.resumed).toEqual([false, true, true]);
  });

  it("times out a TLS handshake the server never answers (connect-timeout)", async () => {
    const silent = net.createServer(() => {});
    trackConnections(silent);
    const port = await listen(silent);
    const c = createHttpClient({
      userAgent: UA,
      allowPrivate: true,
      caFile: pki.caFile,
      connectTo: [`silent.example.test:443:127.0.0.1:${port}`],
      timeouts: { connectMs: 300 },
    });
    const res = failure(await c.fetch("https://silent.example.test/"));
    await c.close();
    await shutdown(silent);
    expect(res.errorClass).toBe("connect-timeout");
    expect(res.detail).toMatch(/during TLS handshake/);
  });
});
