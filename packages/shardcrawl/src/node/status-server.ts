// The node's HTTP endpoints: /status (JSON) and /metrics (Prometheus text). Loopback by default.
import { createServer, type Server } from "node:http";
import type { NodeConfig } from "./config.js";
import { renderMetrics } from "./metrics.js";

export interface StatusServer {
  port: number;
  close(): Promise<void>;
}

export async function startStatusServer(config: NodeConfig, snapshot: () => object): Promise<StatusServer> {
  const server: Server = createServer((req, res) => {
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
