// A throwaway PKI for TLS tests, made with the openssl command line: a CA, leaf certificates it
// signs (valid or expired), and a self-signed certificate. EC P-256 keys keep it fast.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

export interface KeyPair {
  key: string;
  cert: string;
}

export interface TestPki {
  caFile: string;
  ca: KeyPair;
  /** A leaf for the DNS names, signed by the CA; expired when asked. */
  leaf(names: string[], opts?: { expired?: boolean }): KeyPair;
  /** A self-signed certificate for the names (no CA). */
  selfSigned(names: string[]): KeyPair;
  cleanup(): void;
}

function openssl(args: string[], cwd: string): void {
  execFileSync("openssl", args, { cwd, stdio: ["ignore", "ignore", "pipe"] });
}

const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];

export function createTestPki(): TestPki {
  const dir = mkdtempSync(join(tmpdir(), "shardcrawl-pki-"));
  openssl(
    ["req", "-x509", ...EC, "-keyout", "ca.key", "-out", "ca.crt", "-days", "2", "-subj", "/CN=shardcrawl test CA",
      "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign"],
    dir,
  );
  let serial = 0;
  const read = (name: string) => readFileSync(join(dir, name), "utf8");
  return {
    caFile: join(dir, "ca.crt"),
    ca: { key: read("ca.key"), cert: read("ca.crt") },
    leaf(names, opts = {}) {
      const id = `leaf${++serial}`;
      writeFileSync(join(dir, `${id}.ext`), `subjectAltName=${names.map((n) => `DNS:${n}`).join(",")}\nextendedKeyUsage=serverAuth\n`);
      openssl(["req", ...EC, "-keyout", `${id}.key`, "-out", `${id}.csr`, "-subj", `/CN=${names[0]}`], dir);
      openssl(
        ["x509", "-req", "-in", `${id}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-set_serial", String(1000 + serial),
          "-days", opts.expired ? "-1" : "2", "-out", `${id}.crt`, "-extfile", `${id}.ext`],
        dir,
      );
      return { key: read(`${id}.key`), cert: read(`${id}.crt`) };
    },
    selfSigned(names) {
      const id = `self${++serial}`;
      openssl(
        ["req", "-x509", ...EC, "-keyout", `${id}.key`, "-out", `${id}.crt`, "-days", "2", "-subj", `/CN=${names[0]}`,
          "-addext", `subjectAltName=${names.map((n) => `DNS:${n}`).join(",")}`],
        dir,
      );
      return { key: read(`${id}.key`), cert: read(`${id}.crt`) };
    },
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}
