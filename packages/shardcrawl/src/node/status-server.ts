// The node's HTTP endpoints: the status page (/), /status (JSON), /history (JSON, recent samples
// for the page's charts) and /metrics (Prometheus text). Loopback by default. serveRoutes() is
// also what `shardcrawl status --cluster --serve` runs its cluster page on.
import { timingSafeEqual } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { NodeConfig } from "./config.js";
import type { MetricsSnapshot } from "./metrics.js";
import { uiAsset } from "./ui-assets.js";
import { ensureStatusToken } from "./status-token.js";

export interface StatusServer {
  port: number;
  close(): Promise<void>;
}

export interface RouteResult {
  type: string;
  body: string;
  status?: number;
}

export type Route = () => RouteResult | Promise<RouteResult>;

const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

/**
 * Status and metrics reveal the crawl (hosts, rates, paths). On loopback anyone on the machine may
 * read them; anywhere else a token is required (SHARDCRAWL_STATUS_TOKEN or SHARDCRAWL_STATUS_TOKEN_FILE).
 */
export function tokenForBind(bind: string): string | null {
  if (LOOPBACK.has(bind)) return null;
  const token = ensureStatusToken() ?? "";
  if (token.length < 16) {
    throw new Error(`the status endpoint binds ${bind}, not loopback: set SHARDCRAWL_STATUS_TOKEN (at least 16 characters), or SHARDCRAWL_STATUS_TOKEN_FILE to a file holding it (made with a random token if missing), so only holders of the token can read it`);
  }
  return token;
}

export function statusTokenFor(config: NodeConfig): string | null {
  return tokenForBind(config.statusBind);
}

function sameSecret(got: string, want: string): boolean {
  const a = Buffer.from(got);
  const b = Buffer.from(want);
  return a.length === b.length && timingSafeEqual(a, b);
}

/**
 * A bearer token (Prometheus, scripts), or HTTP Basic with the token as the password: a browser
 * asks for it once and then sends it with every request of the status page's own polling.
 */
export function authorized(header: string | undefined, token: string): boolean {
  const h = header ?? "";
  if (h.startsWith("Bearer ")) return sameSecret(h, `Bearer ${token}`);
  if (h.startsWith("Basic ")) {
    const decoded = Buffer.from(h.slice(6), "base64").toString("utf8");
    return sameSecret(decoded.slice(decoded.indexOf(":") + 1), token);
  }
  return false;
}

const html = (name: "node.html" | "cluster.html"): Route => () => ({ type: "text/html; charset=utf-8", body: uiAsset(name) });
const json = (get: () => unknown): Route => () => ({ type: "application/json", body: JSON.stringify(get()) });

/** The routes every page server shares: the chart script. */
export const UI_ROUTES: Record<string, Route> = {
  "/ui/charts.js": () => ({ type: "text/javascript; charset=utf-8", body: uiAsset("charts.js") }),
  "/ui/style.css": () => ({ type: "text/css; charset=utf-8", body: uiAsset("style.css") }),
  "/favicon.ico": () => ({ type: "image/x-icon", body: "", status: 204 }),
};

export async function serveRoutes(opts: { bind: string; port: number; token: string | null; routes: Record<string, Route> }): Promise<StatusServer> {
  const { token, routes } = opts;
  const server: Server = createServer((req, res) => {
    if (token && !authorized(req.headers.authorization, token)) {
      res.writeHead(401, { "content-type": "text/plain", "www-authenticate": 'Bearer, Basic realm="shardcrawl status (any user, the token as password)"' });
      res.end("a token is required: Authorization: Bearer <token>, or Basic with the token as the password\n");
      return;
    }
    const path = (req.url ?? "/").split("?")[0]!;
    const route = Object.hasOwn(routes, path) ? routes[path] : undefined;
    if (!route) {
      res.writeHead(404, { "content-type": "text/plain" });
      res.end(`not found: try ${Object.keys(routes).filter((p) => !p.startsWith("/ui/") && p !== "/favicon.ico").join(", ")}\n`);
      return;
    }
    Promise.resolve()
      .then(route)
      .then(
        (r) => {
          res.writeHead(r.status ?? 200, { "content-type": r.type, "cache-control": "no-store" });
          res.end(r.body);
        },
        (err: unknown) => {
          res.writeHead(500, { "content-type": "text/plain" });
          res.end(`internal error: ${(err as Error).message}\n`);
        },
      );
  });
  server.requestTimeout = 10_000;
  server.headersTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, opts.bind, () => resolve());
  });
  const addr = server.address();
  const port = typeof addr === "object" && addr ? addr.port : 0;
  return {
    port,
    close: () => new Promise<void>((r) => { server.closeAllConnections(); server.close(() => r()); }),
  };
}

/** snapshot: what /status answers; its stats, processes, ... fields are what /metrics renders. */
export async function startStatusServer(config: NodeConfig, snapshot: () => object, history: () => unknown = () => []): Promise<StatusServer> {
  return serveRoutes({
    bind: config.statusBind,
    port: config.statusPort,
    token: statusTokenFor(config),
    routes: {
      "/": html("node.html"),
      "/ui": html("node.html"),
      ...UI_ROUTES,
      "/status": json(snapshot),
      "/history": json(() => ({ samples: history() })),
      "/metrics": async () => {
        // prom-client is loaded at the first scrape, not at node start (~50 ms of CPU per start).
        const { METRICS_CONTENT_TYPE, renderMetrics } = await import("./metrics.js");
        return { type: METRICS_CONTENT_TYPE, body: await renderMetrics(snapshot() as MetricsSnapshot) };
      },
    },
  });
}
