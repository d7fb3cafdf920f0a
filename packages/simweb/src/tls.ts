// TLS for the https hosts: simweb makes its own CA (written to ca.pem so a crawler can trust it) and
// issues, on first SNI for a registrable domain, a certificate for "dN.test" and "*.dN.test" signed by
// that CA. All leaf certificates share one key pair (key generation is the slow part); certificates
// and secure contexts are cached in a bounded LRU.
import { createSecureContext, type SecureContext } from "node:tls";
import { generateKeyPairSync } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** selfsigned pulls in a large X.509 stack: load it only when a certificate is needed (keeps the CLI quick). */
async function generate(...args: Parameters<typeof import("selfsigned").generate>): ReturnType<typeof import("selfsigned").generate> {
  const mod = await import("selfsigned");
  return mod.generate(...args);
}
import { Lru } from "./lru.js";

export interface CaFiles {
  caFile: string;
  keyFile: string;
  cert: string;
  key: string;
}

const DAY = 86_400_000;

/** Loads the CA from caDir, or creates one there. */
export async function loadOrCreateCa(caDir: string): Promise<CaFiles> {
  mkdirSync(caDir, { recursive: true });
  const caFile = join(caDir, "ca.pem");
  const keyFile = join(caDir, "ca-key.pem");
  if (existsSync(caFile) && existsSync(keyFile)) {
    return { caFile, keyFile, cert: readFileSync(caFile, "utf8"), key: readFileSync(keyFile, "utf8") };
  }
  const now = Date.now();
  const pems = await generate([{ name: "commonName", value: "simweb test CA" }, { name: "organizationName", value: "simweb" }], {
    keyType: "ec",
    curve: "P-256",
    algorithm: "sha256",
    notBeforeDate: new Date(now - DAY),
    notAfterDate: new Date(now + 3650 * DAY),
    extensions: [
      { name: "basicConstraints", cA: true, critical: true },
      { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  writeFileSync(keyFile, pems.private, { mode: 0o600 });
  writeFileSync(caFile, pems.cert);
  return { caFile, keyFile, cert: pems.cert, key: pems.private };
}

export class CertFactory {
  private readonly leafKey: { privateKey: string; publicKey: string };
  private readonly contexts = new Lru<string, Promise<SecureContext>>(10_000);

  constructor(private readonly ca: CaFiles) {
    const kp = generateKeyPairSync("ec", { namedCurve: "P-256" });
    this.leafKey = {
      privateKey: kp.privateKey.export({ type: "pkcs8", format: "pem" }).toString(),
      publicKey: kp.publicKey.export({ type: "spki", format: "pem" }).toString(),
    };
  }

  /** A secure context whose certificate covers `domain` and `*.domain`. */
  context(domain: string): Promise<SecureContext> {
    let p = this.contexts.get(domain);
    if (!p) {
      p = this.issue(domain);
      this.contexts.set(domain, p);
      p.catch(() => this.contexts.delete(domain)); // a failure is not cached: the next handshake retries
    }
    return p;
  }

  private async issue(domain: string): Promise<SecureContext> {
    return createSecureContext(await this.pems(domain));
  }

  /** Key and certificate chain (leaf + CA) for `domain` and `*.domain`. */
  async pems(domain: string): Promise<{ key: string; cert: string }> {
    const now = Date.now();
    const pems = await generate([{ name: "commonName", value: domain }], {
      keyType: "ec",
      algorithm: "sha256",
      keyPair: this.leafKey,
      ca: { key: this.ca.key, cert: this.ca.cert },
      notBeforeDate: new Date(now - DAY),
      notAfterDate: new Date(now + 365 * DAY),
      extensions: [
        { name: "basicConstraints", cA: false },
        { name: "keyUsage", digitalSignature: true, keyEncipherment: true },
        { name: "extKeyUsage", serverAuth: true },
        { name: "subjectAltName", altNames: [{ type: 2, value: domain }, { type: 2, value: `*.${domain}` }] },
      ],
    });
    return { key: this.leafKey.privateKey, cert: `${pems.cert}\n${this.ca.cert}` };
  }
}
