// A hostile web on raw TCP (and TLS) sockets for node-level tests: one net.Server and one
// tls.Server on loopback serve many host names (chosen by the Host header / SNI), each with one
// misbehaviour written byte by byte -- things an HTTP server library would refuse to do: headers
// that never end, oversized headers, a body dripping one byte a second, a reset mid-body, a 10 MB
// line, bombs, a 100 MB robots.txt, garbage instead of HTTP, bad certificates. The crawler reaches
// it with --connect-to (port only) and --dns-server (see dns-server.ts), so names really resolve.
import { createServer, type Server, type Socket } from "node:net";
import { createSecureContext, createServer as createTlsServer, type SecureContext, type Server as TlsServer } from "node:tls";
import { constants as zc, createBrotliCompress } from "node:zlib";
import { gzipBomb } from "../../packages/simweb/src/bomb.js";
import { createTestPki, type TestPki } from "../../packages/shardcrawl/test/fetch/helpers/test-pki.js";

/** Host name -> what it does. Plain-HTTP hosts are under hostile.test, HTTPS ones under tls.test. */
export const HOSTILE_CASES = {
  "ok.hostile.test": "a normal page linking to /a",
  "headers-forever.hostile.test": "a status line, then one header line every 250 ms, never the blank line",
  "headers-huge.hostile.test": "200 KB of response headers",
  "drip.hostile.test": "Content-Length 10000, then one body byte per second",
  "reset-mid-body.hostile.test": "20 KB of a 100 KB body, then a TCP RST",
  "long-line.hostile.test": "a 10 MB HTML page on one line",
  "deep-nesting.hostile.test": "200,000 nested unclosed <div>s, then a link to /deep-ok",
  "invalid-utf8.hostile.test": "text/html; charset=utf-8 with invalid byte sequences, then a link to /after-bad-bytes",
  "binary-as-html.hostile.test": "1 MB of random bytes served as text/html",
  "gzip-bomb.hostile.test": "Content-Encoding: gzip, 512 MB inflated (~500 KB on the wire)",
  "brotli-bomb.hostile.test": "Content-Encoding: br, 1 GB inflated (~2 KB on the wire)",
  "redirect-loop.hostile.test": "/ -> /loop/a -> /loop/b -> /loop/a ...",
  "redirect-chain.hostile.test": "/ -> /chain/1 -> /chain/2 -> ... /chain/30",
  "odd-hrefs.hostile.test": "every odd form of href (javascript:, data:, mailto:, whitespace, backslashes, brackets, 10,000-character URLs)",
  "robots-huge.hostile.test": "a 100 MB robots.txt (rules first, then comments), streamed without Content-Length",
  "garbage.hostile.test": "not HTTP at all: an SSH banner, then close",
  "nx.dnsfail.test": "DNS: NXDOMAIN",
  "servfail.dnsfail.test": "DNS: SERVFAIL",
  "timeout.dnsfail.test": "DNS: no answer",
  "good.tls.test": "HTTPS with a valid certificate",
  "expired.tls.test": "HTTPS with an expired certificate",
  "wronghost.tls.test": "HTTPS with a certificate for another name",
  "selfsigned.tls.test": "HTTPS with a self-signed certificate",
} as const;

export type HostileHost = keyof typeof HOSTILE_CASES;

export const ROBOTS_HUGE_BYTES = 100 * 1024 * 1024;
const LONG_LINE_BYTES = 10 * 1024 * 1024;
const CHAIN_LENGTH = 30;

export interface HostileServer {
  httpPort: number;
  tlsPort: number;
  caFile: string;
  /** Seed URLs, one per host (https for tls.test). */
  seeds: string[];
  /** Requests seen, "<host> <path>", in arrival order. */
  requests: string[];
  /** Bytes of robots.txt the huge-robots host managed to hand to the kernel before the client went away. */
  robotsHugeBytesSent(): number;
  close(): Promise<void>;
}

interface Request {
  host: string;
  path: string;
}

const CRLF = "\r\n";

function head(status: string, headers: Record<string, string | number>): string {
  return `HTTP/1.1 ${status}${CRLF}${Object.entries(headers).map(([k, v]) => `${k}: ${v}${CRLF}`).join("")}Connection: close${CRLF}${CRLF}`;
}

function send(sock: Socket, status: string, headers: Record<string, string | number>, body: Buffer | string = ""): void {
  const b = typeof body === "string" ? Buffer.from(body) : body;
  sock.end(Buffer.concat([Buffer.from(head(status, { "Content-Length": b.length, ...headers })), b]));
}

const page = (inner: string) => `<!DOCTYPE html><html><head><title>t</title></head><body>${inner}</body></html>`;
const leaf = (sock: Socket) => send(sock, "200 OK", { "Content-Type": "text/html; charset=utf-8" }, page("<p>leaf</p>"));
const notFound = (sock: Socket) => send(sock, "404 Not Found", { "Content-Type": "text/plain" }, "not found\n");

/** Writes `total` bytes from `chunk()` with back-pressure; stops when the peer goes away. Returns bytes accepted. */
async function stream(sock: Socket, total: number, chunk: (offset: number) => Buffer): Promise<number> {
  let sent = 0;
  while (sent < total && !sock.destroyed && sock.writable) {
    const c = chunk(sent).subarray(0, total - sent);
    sent += c.length;
    if (!sock.write(c)) {
      await new Promise<void>((r) => {
        const done = () => {
          sock.off("drain", done);
          sock.off("close", done);
          r();
        };
        sock.on("drain", done);
        sock.on("close", done);
      });
    }
  }
  return sent;
}

/** Deterministic pseudo-random bytes (xorshift), so a failing run can be replayed. */
function randomBytes(n: number, seed: number): Buffer {
  const b = Buffer.alloc(n);
  let x = seed >>> 0 || 1;
  for (let i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    b[i] = x & 0xff;
  }
  return b;
}

async function brotliBomb(total: number): Promise<Buffer> {
  const br = createBrotliCompress({ params: { [zc.BROTLI_PARAM_QUALITY]: 5 } });
  const out: Buffer[] = [];
  br.on("data", (b: Buffer) => out.push(b));
  const done = new Promise<void>((resolve, reject) => {
    br.on("end", resolve);
    br.on("error", reject);
  });
  br.write("<!DOCTYPE html><html><body><p>");
  const blank = Buffer.alloc(1 << 20, 0x20);
  for (let left = total; left > 0; left -= blank.length) {
    if (!br.write(left >= blank.length ? blank : blank.subarray(0, left))) await new Promise((r) => br.once("drain", r));
  }
  br.end();
  await done;
  return Buffer.concat(out);
}

export const ODD_HREFS = [
  "javascript:alert(1)", "JaVaScRiPt:void(0)", " javascript:x", "data:text/html,<a href=/x>x</a>", "mailto:someone@example.com",
  "tel:+12345", "   /ws-ok \n\t ", "\\backslash-ok", "/unbalanced[(", "http://[::1/x", "http://odd-hrefs.hostile.test:99999/",
  `/${"a".repeat(10_000)}`, `?${"q".repeat(10_000)}`, "", "#frag", "//", "http://", "/%zz%", "/<script>", "ftp://odd-hrefs.hostile.test/f",
];

export async function startHostileServer(): Promise<HostileServer> {
  const pki: TestPki = createTestPki();
  const contexts = new Map<string, SecureContext>([
    ["good.tls.test", createSecureContext(pki.leaf(["good.tls.test"]))],
    ["expired.tls.test", createSecureContext(pki.leaf(["expired.tls.test"], { expired: true }))],
    ["wronghost.tls.test", createSecureContext(pki.leaf(["other.tls.test"]))],
    ["selfsigned.tls.test", createSecureContext(pki.selfSigned(["selfsigned.tls.test"]))],
  ]);
  const [gzipped, brotlied] = await Promise.all([gzipBomb(512 * 1024 * 1024), brotliBomb(1024 * 1024 * 1024)]);
  const binary = randomBytes(1024 * 1024, 7);
  const requests: string[] = [];
  const sockets = new Set<Socket>();
  const timers = new Set<NodeJS.Timeout>();
  let robotsHugeSent = 0;

  function every(sock: Socket, ms: number, fn: () => void): void {
    const t = setInterval(() => {
      if (sock.destroyed) clearInterval(t);
      else fn();
    }, ms);
    timers.add(t);
    sock.once("close", () => {
      clearInterval(t);
      timers.delete(t);
    });
  }

  function serve(sock: Socket, { host, path }: Request): void {
    requests.push(`${host} ${path}`);
    if (path === "/robots.txt" && host !== "robots-huge.hostile.test") return notFound(sock);
    switch (host) {
      case "ok.hostile.test":
      case "good.tls.test":
        return path === "/" ? send(sock, "200 OK", { "Content-Type": "text/html" }, page('<a href="/a">a</a>')) : leaf(sock);
      case "headers-forever.hostile.test": {
        sock.write(`HTTP/1.1 200 OK${CRLF}`);
        let n = 0;
        return every(sock, 250, () => sock.write(`X-Drip-${n++}: still going${CRLF}`));
      }
      case "headers-huge.hostile.test": {
        const lines = Array.from({ length: 200 }, (_, i) => `X-Big-${i}: ${"h".repeat(1000)}${CRLF}`).join("");
        return void sock.end(`HTTP/1.1 200 OK${CRLF}${lines}Content-Length: 2${CRLF}${CRLF}ok`);
      }
      case "drip.hostile.test":
        sock.write(head("200 OK", { "Content-Type": "text/html", "Content-Length": 10_000 }));
        return every(sock, 1000, () => sock.write("<"));
      case "reset-mid-body.hostile.test":
        sock.write(head("200 OK", { "Content-Type": "text/html", "Content-Length": 100_000 }));
        sock.write(Buffer.alloc(20_000, 0x61));
        return void setTimeout(() => sock.resetAndDestroy(), 100);
      case "long-line.hostile.test": {
        sock.write(head("200 OK", { "Content-Type": "text/html", "Content-Length": LONG_LINE_BYTES }));
        const start = Buffer.from("<!DOCTYPE html><html><body><p>");
        const filler = Buffer.alloc(64 * 1024, "abcdefghij");
        void stream(sock, LONG_LINE_BYTES, (off) => (off === 0 ? start : filler)).then(() => sock.end());
        return;
      }
      case "deep-nesting.hostile.test":
        if (path !== "/") return leaf(sock);
        return send(sock, "200 OK", { "Content-Type": "text/html" }, `<html><body>${"<div>".repeat(200_000)}<a href="/deep-ok">deep</a>`);
      case "invalid-utf8.hostile.test": {
        if (path !== "/") return leaf(sock);
        const bad = Buffer.from([0xc3, 0x28, 0xff, 0xfe, 0xc0, 0xaf, 0xed, 0xa0, 0x80, 0xf4, 0x90, 0x80, 0x80, 0xe2, 0x82]);
        const body = Buffer.concat([Buffer.from("<html><head><title>"), bad, Buffer.from("</title></head><body><p>"), bad, bad, Buffer.from('</p><a href="/after-bad-bytes">x</a></body></html>')]);
        return send(sock, "200 OK", { "Content-Type": "text/html; charset=utf-8" }, body);
      }
      case "binary-as-html.hostile.test":
        return send(sock, "200 OK", { "Content-Type": "text/html" }, binary);
      case "gzip-bomb.hostile.test":
        return send(sock, "200 OK", { "Content-Type": "text/html", "Content-Encoding": "gzip" }, gzipped);
      case "brotli-bomb.hostile.test":
        return send(sock, "200 OK", { "Content-Type": "text/html", "Content-Encoding": "br" }, brotlied);
      case "redirect-loop.hostile.test":
        return send(sock, "302 Found", { Location: path === "/loop/a" ? "/loop/b" : "/loop/a" });
      case "redirect-chain.hostile.test": {
        const n = path === "/" ? 0 : Number(/^\/chain\/(\d+)$/.exec(path)?.[1] ?? CHAIN_LENGTH);
        return n < CHAIN_LENGTH ? send(sock, "301 Moved Permanently", { Location: `/chain/${n + 1}` }) : leaf(sock);
      }
      case "odd-hrefs.hostile.test":
        if (path !== "/") return leaf(sock);
        return send(sock, "200 OK", { "Content-Type": "text/html" }, page(ODD_HREFS.map((h, i) => `<a href="${h.replace(/"/g, "&quot;")}">${i}</a>`).join("\n")));
      case "robots-huge.hostile.test": {
        if (path === "/") return send(sock, "200 OK", { "Content-Type": "text/html" }, page('<a href="/public">p</a><a href="/private/x">x</a>'));
        if (path !== "/robots.txt") return leaf(sock);
        // No Content-Length: the body ends when we close, so only the client's size cap stops it.
        sock.write(`HTTP/1.1 200 OK${CRLF}Content-Type: text/plain${CRLF}Connection: close${CRLF}${CRLF}`);
        const rules = Buffer.from("User-agent: *\nDisallow: /private\n");
        const pad = Buffer.from(`# ${"padding ".repeat(8000)}\n`);
        void stream(sock, ROBOTS_HUGE_BYTES, (off) => {
          robotsHugeSent = off;
          return off === 0 ? rules : pad;
        }).then((n) => {
          robotsHugeSent = n;
          sock.end();
        });
        return;
      }
      case "garbage.hostile.test":
        return void sock.end("SSH-2.0-OpenSSH_9.6\r\nProtocol mismatch.\r\n");
      default:
        return notFound(sock);
    }
  }

  /** Reads one request head (at most 64 KB), then hands the socket to serve(). */
  function accept(sock: Socket): void {
    sockets.add(sock);
    sock.on("close", () => sockets.delete(sock));
    sock.on("error", () => undefined);
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf("\r\n\r\n");
      if (end < 0) {
        if (buf.length > 65_536) sock.destroy();
        return;
      }
      sock.off("data", onData);
      const lines = buf.subarray(0, end).toString("latin1").split("\r\n");
      const path = lines[0]?.split(" ")[1] ?? "/";
      const hostLine = lines.find((l) => /^host:/i.test(l)) ?? "";
      const host = hostLine.slice(5).trim().toLowerCase().replace(/:\d+$/, "");
      serve(sock, { host, path });
    };
    sock.on("data", onData);
  }

  const http: Server = createServer(accept);
  const tls: TlsServer = createTlsServer({ SNICallback: (name, cb) => cb(null, contexts.get(name.toLowerCase())) }, accept);
  tls.on("tlsClientError", () => undefined);
  tls.on("connection", (s: Socket) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  const listen = (s: Server) => new Promise<number>((resolve, reject) => {
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => resolve((s.address() as { port: number }).port));
  });
  const httpPort = await listen(http);
  const tlsPort = await listen(tls);

  return {
    httpPort,
    tlsPort,
    caFile: pki.caFile,
    seeds: Object.keys(HOSTILE_CASES).map((h) => `${h.endsWith(".tls.test") ? "https" : "http"}://${h}/`),
    requests,
    robotsHugeBytesSent: () => robotsHugeSent,
    close: async () => {
      for (const t of timers) clearInterval(t);
      for (const s of sockets) s.destroy();
      await Promise.all([new Promise((r) => http.close(r)), new Promise((r) => tls.close(r))]);
      pki.cleanup();
    },
  };
}
