// The node's HTTP endpoints: /status (JSON) and /metrics (Prometheus text). Loopback by default.
import { timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { NodeConfig } from "./config.js";
import { renderMetrics } from "./metrics.js";

export interface StatusServer {
  port: number;
  close(): Promise<void>;
}

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/**
 * Status and metrics reveal the crawl (hosts, rates, paths). On loopback anyone on the machine may
 * read them; anywhere else a token is required (SHARDCRAWL_STATUS_TOKEN), sent as a bearer token.
 */
export function statusTokenFor(config: NodeConfig): string | null {
  if (LOOPBACK.has(config.statusBind)) return null;
  const token = process.env.SHARDCRAWL_STATUS_TOKEN ?? "";
  if (token.length < 16) {
    throw new Error(`the status endpoint binds ${config.statusBind}, not loopback: set SHARDCRAWL_STATUS_TOKEN (at least 16 characters) so only holders of the token can read it`);
  }
  return token;
}

function authorized(header: string | undefined, token: string): boolean {
  const want = Buffer.from(`Bearer ${token}`);
  const got = Buffer.from(header ?? "");
  return got.length === want.length && timingSafeEqual(got, want);
}

export async function startStatusServer(config: NodeConfig, snapshot: () => object): Promise<StatusServer> {
  const token = statusTokenFor(config);
  const server: Server = createServer((req, res) => {
    if (token && !authorized(req.headers.authorization, token)) {
      res.writeHead(401, { "content-type": "text/plain", "www-authenticate": "Bearer" });
      res.end("a bearer token is required\n");
      return;
    }
    const path = (req.url ?? "/").split("?")[0];
    if (path === "/status") {
      res.writeHead(200, { "content-type": "application/json" });
      res.end(JSON.stringify(snapshot()));
    } else if (path === "/metrics") {
      res.writeHead(200, { "content-type": "text/plain; version=0.0.4" });
      res.end(renderMetrics(snapshot()));
    } else {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end("not found: try /status or /metrics\n");
    }
  });
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(config.statusPort, config.statusBind, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    port,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}
