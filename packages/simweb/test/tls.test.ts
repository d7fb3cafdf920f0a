import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { X509Certificate } from "node:crypto";
import { readFileSync, mkdtempSync } from "node:fs";
import { connect } from "node:tls";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSimweb, makeConfig, type RunningSimweb, type HostInfo } from "../src/index.js";
import { get } from "./client.js";

function peerCert(port: number, servername: string, ca?: string): Promise<{ cert?: X509Certificate; error?: string }> {
  return new Promise((resolve) => {
    const s = connect({ host: "127.0.0.1", port, servername, ca, timeout: 5000 }, () => {
      const raw = s.getPeerX509Certificate();
      s.end();
      resolve({ cert: raw });
    });
    s.on("error", (e: NodeJS.ErrnoException) => resolve({ error: e.code ?? e.message }));
    s.on("timeout", () => {
      s.destroy();
      resolve({ error: "timeout" });
    });
  });
}

describe("HTTPS with SNI and a generated CA", () => {
  let sim: RunningSimweb;
  let caDir: string;
  let httpsHosts: HostInfo[];
  beforeAll(async () => {
    caDir = mkdtempSync(join(tmpdir(), "simweb-ca-test-"));
    sim = await startSimweb({ config: makeConfig({ preset: "tiny", hosts: 40, seed: 3 }), caDir });
    httpsHosts = sim.world.hosts().filter((h) => h.scheme === "https");
  });
  afterAll(async () => sim?.close());

  test("the CA is a CA certificate written to a PEM file in caDir", () => {
    expect(sim.caFile).toBe(join(caDir, "ca.pem"));
    const ca = new X509Certificate(readFileSync(sim.caFile));
    expect(ca.ca).toBe(true);
    expect(ca.subject).toContain("simweb test CA");
  });

  test("https hosts serve pages over TLS verified against the CA, the certificate chosen by SNI", async () => {
    expect(httpsHosts.length).toBeGreaterThan(5);
    const ca = readFileSync(sim.caFile, "utf8");
    const caCert = new X509Certificate(ca);
    const byDomain = new Map<string, string>();
    for (const h of httpsHosts.slice(0, 8)) {
      const r = await get(sim, `https://${h.name}/`);
      expect(r.status, h.name).toBe(200);
      expect(r.body.toString("latin1")).toContain(h.name);
      const { cert } = await peerCert(sim.httpsPort, h.name, ca);
      expect(cert!.checkHost(h.name)).toBe(`*.${h.domain}`); // the name that matched
      expect(cert!.checkIssued(caCert)).toBe(true);
      expect(cert!.subjectAltName).toContain(`DNS:*.${h.domain}`);
      const prev = byDomain.get(h.domain);
      if (prev) expect(cert!.fingerprint256).toBe(prev); // hosts of one domain share a certificate
      byDomain.set(h.domain, cert!.fingerprint256);
    }
    expect(new Set(byDomain.values()).size).toBe(byDomain.size); // one certificate per domain
  });

  test("without the CA the chain does not verify; an unserved SNI name fails the handshake", async () => {
    const h = httpsHosts[0]!;
    const untrusted = await peerCert(sim.httpsPort, h.name);
    expect(untrusted.error).toMatch(/SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER_CERT/);
    const unknown = await peerCert(sim.httpsPort, "www.nothere.invalid", readFileSync(sim.caFile, "utf8"));
    expect(unknown.error).toBeDefined();
  });

  test("an http host asked over https is redirected to its http URL", async () => {
    const h = sim.world.hosts().find((x) => x.scheme === "http")!;
    const r = await get(sim, `https://${h.name}/a?b=1`);
    expect(r.status).toBe(301);
    expect(r.headers.location).toBe(`http://${h.name}/a?b=1`);
  });

  test("a second server given the same caDir reuses the CA", async () => {
    const again = await startSimweb({ config: makeConfig({ preset: "tiny", hosts: 40, seed: 3 }), caDir });
    try {
      expect(readFileSync(again.caFile, "utf8")).toBe(readFileSync(sim.caFile, "utf8"));
      const h = httpsHosts[1]!;
      expect((await get(again, `https://${h.name}/`)).status).toBe(200);
    } finally {
      await again.close();
    }
  });
});
