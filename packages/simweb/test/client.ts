// A minimal loopback HTTP(S) client for tests: connects to 127.0.0.1 on simweb's ports and carries
// the host name in the Host header and SNI, as a crawler with connect-to mapping does.
import { request as httpRequest, type IncomingHttpHeaders } from "node:http";
import { request as httpsRequest } from "node:https";
import { readFileSync } from "node:fs";
import { gunzipSync, brotliDecompressSync, inflateSync } from "node:zlib";

export interface Target {
  httpPort: number;
  httpsPort: number;
  caFile: string;
}

export interface Reply {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Set when the connection failed (reset, destroyed, timeout). */
  error?: string;
  ms: number;
}

const caCache = new Map<string, string>();

export function get(t: Target, url: string, opts: { headers?: Record<string, string>; timeoutMs?: number; method?: string } = {}): Promise<Reply> {
  const u = new URL(url);
  const https = u.protocol === "https:";
  let ca = caCache.get(t.caFile);
  if (https && !ca) caCache.set(t.caFile, (ca = readFileSync(t.caFile, "utf8")));
  const started = Date.now();
  return new Promise((resolve) => {
    const req = (https ? httpsRequest : httpRequest)({
      host: "127.0.0.1",
      port: https ? t.httpsPort : t.httpPort,
      method: opts.method ?? "GET",
      path: u.pathname + u.search,
      servername: https ? u.hostname : undefined,
      ca: https ? ca : undefined,
      agent: false,
      headers: { host: u.hostname, "user-agent": "shardcrawl-test/1.0", ...opts.headers },
      timeout: opts.timeoutMs ?? 10_000,
    }, (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on("data", (c: Buffer) => {
        size += c.length;
        if (size <= 64 * 1024 * 1024) chunks.push(c);
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), ms: Date.now() - started }));
      res.on("error", (err) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks), error: err.message, ms: Date.now() - started }));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", (err: NodeJS.ErrnoException) => resolve({ status: 0, headers: {}, body: Buffer.alloc(0), error: err.code ?? err.message, ms: Date.now() - started }));
    req.end();
  });
}

/** Body with Content-Encoding removed. */
export function decoded(r: Reply): Buffer {
  const enc = r.headers["content-encoding"];
  if (enc === "gzip") return gunzipSync(r.body);
  if (enc === "br") return brotliDecompressSync(r.body);
  if (enc === "deflate") return inflateSync(r.body);
  return r.body;
}
