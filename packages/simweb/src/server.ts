// The HTTP and HTTPS front: many hosts behind one port each, chosen by the Host header (and SNI).
// Each request: find the host, apply its behaviours (throttle, flapping, reset, hang, latency),
// route the path, render, apply validators and content encoding, log one line when it ends.
import { RobotsFaults } from "./robots-faults.js";
import { Listings } from "./listings.js";
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { createServer as createNetServer, type Socket } from "node:net";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { TLSSocket } from "node:tls";
import { brotliCompress, constants as zc, deflate, gzip } from "node:zlib";
import type { SimwebConfig } from "./config.js";
import type { Clock } from "./clock.js";
import { RealClock } from "./clock.js";
import { World, type HostModel, type Resource } from "./world.js";
import { Renderer, type Body } from "./html.js";
import { RequestLog, type LogEntry } from "./log.js";
import { CertFactory, loadOrCreateCa } from "./tls.js";
import { gzipBomb } from "./bomb.js";
import { Lru } from "./lru.js";
import { Rng, hashString, mix, unit } from "./prng.js";
import { NameService } from "./name-service.js";
import { startDnsServer, type RunningDns } from "./dns-server.js";
import { farmResponse } from "./wildcard-farm.js";

export interface StartOptions {
  config: SimwebConfig;
  bind?: string;
  httpPort?: number;
  httpsPort?: number;
  logFile?: string;
  caDir?: string;
  /** Content clock (page versions, churn); defaults to real time. Log times are always real. */
  clock?: Clock;
  /** UDP port of the DNS server (0 = any free one) when the config has a name service (dns.addresses > 0). */
  dnsPort?: number;
  /** The DNS server's query log (JSON lines). */
  dnsLogFile?: string;
}

export interface RunningSimweb {
  httpPort: number;
  httpsPort: number;
  caFile: string;
  world: World;
  /** The DNS server's UDP port, when one runs. */
  dnsPort?: number;
  /** Loopback addresses served besides the bind address (the name service's, same ports). */
  addresses: string[];
  close(): Promise<void>;
}

const gzipAsync = promisify(gzip);
const deflateAsync = promisify(deflate);
const brotliAsync = promisify(brotliCompress);

/** Per-host mutable state: in-flight count, request counter, token bucket. */
interface HostRuntime {
  inflight: number;
  counter: number;
  tokens: number;
  refilledAt: number;
}

/** Bodies above this are sent identity-encoded (compressing them would stall the benchmark). */
const MAX_COMPRESS_BYTES = 8 * 1024 * 1024;

export async function startSimweb(opts: StartOptions): Promise<RunningSimweb> {
  const world = new World(opts.config);
  const app = new SimwebApp(world, opts.clock ?? new RealClock(), opts.clock !== undefined && !(opts.clock instanceof RealClock), opts.logFile);
  const bind = opts.bind ?? "127.0.0.1";
  const caDir = opts.caDir ?? mkdtempSync(join(tmpdir(), "simweb-ca-"));
  const ca = await loadOrCreateCa(caDir);
  const certs = new CertFactory(ca);
  const fallback = await certs.pems("simweb.invalid"); // for clients that send no SNI
  const limits = opts.config.limits;

  const http = createHttpServer({ maxHeaderSize: limits.maxHeaderBytes, keepAliveTimeout: 10_000 }, (req, res) => app.handle(req, res, "http"));
  const https = createHttpsServer(
    {
      ...fallback,
      maxHeaderSize: limits.maxHeaderBytes,
      keepAliveTimeout: 10_000,
      SNICallback: (servername, cb) => {
        const h = world.hostByName(servername.toLowerCase());
        if (!h) {
          cb(new Error(`simweb does not serve ${servername}`), undefined);
          return;
        }
        certs.context(h.info.domain).then((ctx) => cb(null, ctx), (err: Error) => cb(err, undefined));
      },
    },
    (req, res) => app.handle(req, res, "https"),
  );
  for (const s of [http, https]) {
    s.maxConnections = limits.maxConnections;
    s.headersTimeout = 30_000;
    s.requestTimeout = 60_000;
    // Idle-socket cap: a client that stops reading a streamed body cannot pin a socket forever.
    s.timeout = Math.max(opts.config.hangMs, 120_000) + 10_000;
    s.on("clientError", (_err, socket: Socket) => socket.destroy());
  }
  https.on("tlsClientError", () => undefined); // failed handshakes (unknown SNI) are expected
  const listen = (s: Server, port: number): Promise<number> =>
    new Promise((resolve, reject) => {
      s.once("error", reject);
      s.listen(port, bind, () => {
        s.off("error", reject);
        const a = s.address();
        resolve(typeof a === "object" && a ? a.port : port);
      });
    });
  const httpPort = await listen(http, opts.httpPort ?? 0);
  const httpsPort = await listen(https, opts.httpsPort ?? 0);
  // The name service hands hosts their own loopback addresses: listen on each with the same ports,
  // passing connections to the one HTTP and HTTPS server (both take raw sockets on "connection").
  const names = new NameService(world);
  const addresses = names.addresses().filter((a) => a !== bind);
  const forwarders: ReturnType<typeof createNetServer>[] = [];
  for (const address of addresses) {
    for (const [server, port] of [[http, httpPort], [https, httpsPort]] as const) {
      const f = createNetServer((socket) => server.emit("connection", socket));
      forwarders.push(f);
      await new Promise<void>((resolve, reject) => {
        f.once("error", reject);
        f.listen(port, address, () => {
          f.off("error", reject);
          resolve();
        });
      });
    }
  }
  if (names.enabled) app.names = names;
  let dns: RunningDns | null = null;
  if (names.enabled && opts.dnsPort !== undefined) dns = await startDnsServer(names, { bind, port: opts.dnsPort, logFile: opts.dnsLogFile });
  let closed: Promise<void> | null = null;
  return {
    httpPort,
    httpsPort,
    caFile: ca.caFile,
    world,
    addresses,
    ...(dns ? { dnsPort: dns.port } : {}),
    close() {
      closed ??= (async () => {
        app.stop();
        await dns?.close();
        await Promise.all(forwarders.map((f) => new Promise<void>((r) => f.close(() => r()))));
        const done = Promise.all([http, https].map((s) => new Promise<void>((r) => s.close(() => r()))));
        http.closeAllConnections();
        https.closeAllConnections();
        await done;
        app.log?.close();
      })();
      return closed;
    },
  };
}

export class SimwebApp {
  readonly renderer: Renderer;
  readonly listings: Listings;
  readonly log: RequestLog | null;
  private readonly runtimes = new Map<number, HostRuntime>();
  private readonly hanging = new Set<Socket>();
  private readonly compressed: Lru<string, Promise<Buffer>>;
  private stopped = false;
  /** Page requests counted against config quota. */
  private quotaUsed = 0;
  /** Connection numbers for the request log (lets tests count connections and TLS resumptions). */
  private readonly connIds = new WeakMap<Socket, number>();
  private nextConnId = 1;
  /** robots.txt outage windows and Crawl-delays of chosen hosts (robots-faults.ts). */
  private readonly robotsFaults: RobotsFaults;
  /** The name service, when hosts have their own addresses: requests log the address they came on. */
  names: NameService | null = null;

  constructor(
    readonly world: World,
    readonly clock: Clock,
    private readonly simulated: boolean,
    logFile?: string,
  ) {
    this.renderer = new Renderer(world);
    this.listings = new Listings(world);
    this.robotsFaults = new RobotsFaults(world.config);
    this.log = logFile ? new RequestLog(logFile) : null;
    const lim = world.config.limits;
    // Entries are weighed by an estimate (a pending promise has no size yet): ~64 KB per compressed page.
    this.compressed = new Lru(100_000, lim.compressCacheBytes, () => 64 * 1024);
  }

  stop(): void {
    this.stopped = true;
    for (const s of this.hanging) s.destroy();
    this.hanging.clear();
  }

  private runtime(h: HostModel): HostRuntime {
    let rt = this.runtimes.get(h.info.index);
    if (!rt) {
      rt = { inflight: 0, counter: 0, tokens: Math.max(1, h.throttle.ratePerSec), refilledAt: Date.now() };
      this.runtimes.set(h.info.index, rt);
    }
    return rt;
  }

  handle(req: IncomingMessage, res: ServerResponse, scheme: "http" | "https"): void {
    const name = (req.headers.host ?? "").toLowerCase().replace(/:\d+$/, "").replace(/\.$/, "");
    const entry: LogEntry = {
      ts: Date.now(), end: 0, host: name, scheme, method: req.method ?? "", path: req.url ?? "",
      status: 0, bytes: 0, inflight: 0, ua: String(req.headers["user-agent"] ?? ""),
    };
    if (this.simulated) entry.sim = this.clock.now();
    this.noteConnection(req.socket, entry);
    const h = this.world.hostByName(name);
    const farm = this.world.config.wildcardFarm;
    if (!h && farm !== null && this.world.isFarmName(name) && !this.stopped) {
      const r = farmResponse(farm, this.world.config.seed, name, req.url ?? "/");
      res.on("close", () => {
        entry.end = Date.now();
        entry.status = res.writableFinished ? res.statusCode : 0;
        this.log?.write(entry);
      });
      this.send(res, entry, r.status, { "content-type": r.contentType }, r.body, req.method ?? "GET");
      return;
    }
    if (!h || this.stopped) {
      entry.end = Date.now();
      this.log?.write(entry);
      req.socket.destroy();
      return;
    }
    if (this.names && (this.names.movedAway(name, req.socket.localAddress, Date.now()) || this.names.closesConnections(name))) res.setHeader("connection", "close");
    const rt = this.runtime(h);
    rt.inflight++;
    entry.inflight = rt.inflight;
    let done = false;
    let released = false;
    // A response ends, for politeness purposes, when the server hands over its last bytes: the
    // moment res.end() is called. The "finish" event can run many ms later on a busy machine (the
    // client may already have read the response and sent its next request), which would make the
    // logged gap look shorter than it was.
    let endCalledAt = 0;
    const release = (): void => {
      if (released) return;
      released = true;
      rt.inflight--;
    };
    const originalEnd = res.end.bind(res) as (...a: unknown[]) => ServerResponse;
    res.end = ((...args: unknown[]) => {
      if (!endCalledAt) endCalledAt = Date.now();
      release();
      return originalEnd(...args);
    }) as typeof res.end;
    const complete = (status: number): void => {
      if (done) return;
      done = true;
      release();
      // A reset request ended when simweb sent the RST (entry.end set by reset), not when "close" ran.
      entry.end = status !== 0 && endCalledAt ? endCalledAt : entry.end || Date.now();
      entry.status = status;
      this.log?.write(entry);
    };
    res.on("finish", () => complete(res.statusCode));
    res.on("close", () => complete(res.writableFinished ? res.statusCode : 0));
    this.dispatch(h, rt, req, res, scheme, entry).catch((err: unknown) => {
      // A generation bug must not take the server down: answer 500 if we still can.
      if (!res.headersSent) {
        res.writeHead(500, { "content-type": "text/plain" });
        res.end(`simweb internal error: ${err instanceof Error ? err.message : String(err)}\n`);
      } else res.destroy();
    });
  }

  private noteConnection(socket: Socket, entry: LogEntry): void {
    let id = this.connIds.get(socket);
    if (id === undefined) {
      id = this.nextConnId++;
      this.connIds.set(socket, id);
    }
    entry.conn = id;
    if (this.names && socket.localAddress) entry.addr = socket.localAddress;
    if (socket instanceof TLSSocket) entry.tlsResumed = socket.isSessionReused();
  }

  private async dispatch(h: HostModel, rt: HostRuntime, req: IncomingMessage, res: ServerResponse, scheme: "http" | "https", entry: LogEntry): Promise<void> {
    const method = req.method ?? "GET";
    if (method !== "GET" && method !== "HEAD") return this.send(res, entry, 405, { allow: "GET, HEAD" }, Buffer.from("method not allowed\n"), method);
    const path = req.url ?? "/";
    if (h.info.scheme !== scheme) {
      // The host lives on the other scheme: redirect like a real site would.
      return this.send(res, entry, 301, { location: `${h.info.scheme}://${h.info.name}${path}` }, Buffer.from("moved\n"), method);
    }
    const resource = this.world.route(h, path);
    const isRobots = resource.kind === "robots" || resource.kind === "robots-moved";
    const n = rt.counter++;
    if (isRobots && h.info.robots === "unreachable") return this.reset(req.socket, entry);
    const fault = isRobots ? this.robotsFaults.outage(h) : null;
    if (fault) {
      if (fault.kind === "reset") return this.reset(req.socket, entry);
      if (fault.kind === "hang") return this.hang(req.socket);
      return this.send(res, entry, fault.status, fault.headers, Buffer.from("<h1>maintenance</h1>\n"), method);
    }
    if (!isRobots && this.quotaExhausted()) {
      const q = this.world.config.quota;
      return this.send(res, entry, 429, { [q.header]: "exhausted", "content-type": "text/plain" }, Buffer.from("plan quota exhausted\n"), method);
    }
    if (!isRobots) {
      // robots.txt is exempt from failure behaviours so robots ground truth stays well defined.
      if (h.has.has("throttle") && this.overCapacity(h, rt)) {
        const t = h.throttle;
        const retry = t.dateForm ? new Date(Date.now() + t.retryAfterSec * 1000).toUTCString() : String(t.retryAfterSec);
        return this.send(res, entry, t.status, { "retry-after": retry, "content-type": "text/plain" }, Buffer.from("slow down\n"), method);
      }
      if (h.has.has("flapping") && unit(mix(h.seed, 0xf1a, Math.floor(Date.now() / this.world.config.flapping.windowMs))) < this.world.config.flapping.downShare) {
        const status = [500, 502, 503][h.seed % 3] as number;
        return this.send(res, entry, status, { "content-type": "text/html" }, Buffer.from("<html><body><h1>Service unavailable</h1></body></html>\n"), method);
      }
      if (h.has.has("reset") && unit(mix(h.seed, 0x7e5, n)) < this.world.config.resetShare) return this.reset(req.socket, entry);
      if (h.has.has("hang") && unit(mix(h.seed, 0x4a6, n)) < this.world.config.hangShare) return this.hang(req.socket);
    }
    if (h.has.has("slow")) {
      const s = this.world.config.slow;
      const delay = Math.min(s.maxMs, new Rng(mix(h.seed, 0x510, n)).lognormal(s.medianMs, s.sigma));
      await new Promise((r) => setTimeout(r, delay));
      if (res.destroyed) return;
    }
    return this.serve(h, resource, req, res, entry, method);
  }

  /** The upstream plan's quota (config quota): true once afterRequests page requests were served. */
  private quotaExhausted(): boolean {
    const limit = this.world.config.quota.afterRequests;
    if (limit === null) return false;
    return this.quotaUsed++ >= limit;
  }

  /** Token bucket (rate) plus in-flight cap (concurrency): the host's hidden capacity. */
  private overCapacity(h: HostModel, rt: HostRuntime): boolean {
    const now = Date.now();
    const rate = h.throttle.ratePerSec;
    rt.tokens = Math.min(Math.max(1, rate), rt.tokens + ((now - rt.refilledAt) / 1000) * rate);
    rt.refilledAt = now;
    if (rt.inflight > h.throttle.maxConcurrency) return true;
    if (rt.tokens < 1) return true;
    rt.tokens -= 1;
    return false;
  }

  private reset(socket: Socket, entry: LogEntry): void {
    entry.end = Date.now();
    try {
      socket.resetAndDestroy();
    } catch {
      socket.destroy();
    }
  }

  private hang(socket: Socket): void {
    if (this.hanging.size >= this.world.config.limits.maxHanging) {
      socket.destroy();
      return;
    }
    this.hanging.add(socket);
    const timer = setTimeout(() => socket.destroy(), this.world.config.hangMs);
    timer.unref();
    socket.once("close", () => {
      clearTimeout(timer);
      this.hanging.delete(socket);
    });
  }

  private async serve(h: HostModel, resource: Resource, req: IncomingMessage, res: ServerResponse, entry: LogEntry, method: string): Promise<void> {
    const w = this.world;
    switch (resource.kind) {
      case "robots":
      case "robots-moved": {
        const kind = h.info.robots;
        if (resource.kind === "robots" && kind === "redirect") return this.send(res, entry, 301, { location: `${w.origin(h)}/meta/robots.txt` }, Buffer.from("moved\n"), method);
        if (kind === "absent" && w.robots.text(h) === null) return this.notFound(res, entry, method);
        if (kind === "server-error") return this.send(res, entry, [500, 503, 502][h.seed % 3] as number, { "content-type": "text/html" }, Buffer.from("<h1>error</h1>\n"), method);
        return this.send(res, entry, 200, { "content-type": "text/plain; charset=utf-8" }, Buffer.from((w.robots.text(h) ?? "") + this.listings.robotsLines(h), "utf8"), method);
      }
      case "sitemap":
        return this.send(res, entry, 200, { "content-type": "application/xml" }, Buffer.from(this.sitemap(h), "utf8"), method);
      case "static":
        return this.send(res, entry, 200, { "content-type": resource.type === "css" ? "text/css" : "application/javascript", "cache-control": "max-age=86400" }, Buffer.from(resource.type === "css" ? "body{margin:0}\n" : "void 0;\n"), method);
      case "redirect":
        return this.send(res, entry, resource.status, { location: resource.location, "content-type": "text/html" }, Buffer.from(`<a href="${resource.location.replace(/&/g, "&amp;")}">moved</a>\n`), method);
      case "trap": {
        const body = this.renderer.renderTrap(h, resource.trap, resource.path);
        return this.send(res, entry, 200, { "content-type": body.contentType }, body.buffer as Buffer, method);
      }
      case "bomb": {
        const bomb = await gzipBomb(w.config.bombBytes);
        return this.send(res, entry, 200, { "content-type": "text/html", "content-encoding": "gzip" }, bomb, method);
      }
      case "notfound": {
        const listed = this.listings.render(h, req.url ?? "/", this.clock.now());
        if (listed) return this.send(res, entry, 200, { "content-type": listed.contentType }, Buffer.from(listed.body, "utf8"), method);
        return this.notFound(res, entry, method);
      }
      case "page":
        return this.servePage(h, resource.page, req, res, entry, method);
    }
  }

  private async servePage(h: HostModel, page: import("./world.js").PageSpec, req: IncomingMessage, res: ServerResponse, entry: LogEntry, method: string): Promise<void> {
    const body = this.renderer.render(page, this.clock.now());
    const headers: Record<string, string> = { "content-type": body.contentType };
    if (h.has.has("validators")) {
      const etag = `"${hashString(String(body.version), mix(page.seed, body.churn)).toString(36)}-${page.id.toString(36)}"`;
      headers.etag = etag;
      headers["last-modified"] = new Date(body.version).toUTCString();
      if (notModified(req, etag, body.version)) return this.send(res, entry, 304, headers, null, method);
    }
    if (body.chunks) return this.stream(res, entry, headers, body, method);
    let buf = body.buffer as Buffer;
    const enc = h.has.has("compress") && buf.length <= MAX_COMPRESS_BYTES ? acceptedEncoding(req, h.encoding) : null;
    if (h.has.has("compress")) headers.vary = "Accept-Encoding";
    if (enc) {
      const key = `${page.url}|${body.version}|${body.churn}|${enc}`;
      let p = this.compressed.get(key);
      if (!p) {
        p = compress(buf, enc);
        this.compressed.set(key, p);
      }
      buf = await p;
      headers["content-encoding"] = enc;
      if (headers.etag) headers.etag = headers.etag.replace(/"$/, `-${enc}"`);
    }
    return this.send(res, entry, 200, headers, buf, method);
  }

  private notFound(res: ServerResponse, entry: LogEntry, method: string): void {
    this.send(res, entry, 404, { "content-type": "text/html; charset=utf-8" }, Buffer.from("<!DOCTYPE html><html><head><title>Not Found</title></head><body><h1>Not Found</h1></body></html>\n"), method);
  }

  private send(res: ServerResponse, entry: LogEntry, status: number, headers: Record<string, string>, body: Buffer | null, method: string): void {
    if (res.destroyed) return;
    const len = body?.length ?? 0;
    res.writeHead(status, { server: "simweb", ...headers, ...(status === 304 ? {} : { "content-length": String(len) }) });
    if (method === "HEAD" || body === null || status === 304) {
      res.end();
      return;
    }
    entry.bytes = len;
    res.end(body);
  }

  private async stream(res: ServerResponse, entry: LogEntry, headers: Record<string, string>, body: Body, method: string): Promise<void> {
    res.writeHead(200, { server: "simweb", ...headers, "content-length": String(body.length) });
    if (method === "HEAD" || !body.chunks) {
      res.end();
      return;
    }
    for (const chunk of body.chunks()) {
      if (res.destroyed) return;
      entry.bytes += chunk.length;
      if (!res.write(chunk)) {
        await new Promise<void>((resolve) => {
          const go = (): void => {
            res.off("drain", go);
            res.off("close", go);
            resolve();
          };
          res.on("drain", go);
          res.on("close", go);
        });
      }
    }
    res.end();
  }

  private sitemap(h: HostModel): string {
    const w = this.world;
    const home = w.page(h, 0);
    const urls = [home.url, ...w.links(home).filter((l) => !l.nofollow && l.url.startsWith(`${w.origin(h)}/`) && l.kind !== "trap" && l.kind !== "bomb" && l.kind !== "broken").map((l) => l.url)];
    // Hosts that keep validators also keep their sitemap's <lastmod> (W3C date-time, whole seconds,
    // the page's version stamp at content time: the same instant as its Last-Modified header).
    const now = this.clock.now();
    const lastmod = (u: string): string => {
      if (!h.has.has("validators")) return "";
      let v: number;
      try {
        v = w.pageVersionAt(u, now);
      } catch {
        return ""; // not a page (a redirect, say): no lastmod
      }
      return `<lastmod>${new Date(Math.floor(v / 1000) * 1000).toISOString().replace(".000Z", "Z")}</lastmod>`;
    };
    const body = [...new Set(urls)].map((u) => `  <url><loc>${u.replace(/&/g, "&amp;")}</loc>${lastmod(u)}</url>`).join("\n");
    return `<?xml version="1.0" encoding="UTF-8"?>\n<urlset xmlns="http://www.sitemaps.org/schemas/sitemap/0.9">\n${body}\n</urlset>\n`;
  }
}

function compress(buf: Buffer, enc: "gzip" | "br" | "deflate"): Promise<Buffer> {
  if (enc === "gzip") return gzipAsync(buf, { level: 6 });
  if (enc === "deflate") return deflateAsync(buf, { level: 6 });
  return brotliAsync(buf, { params: { [zc.BROTLI_PARAM_QUALITY]: 4, [zc.BROTLI_PARAM_SIZE_HINT]: buf.length } });
}

/** The host's encoding if the client accepts it (q > 0), else null. */
function acceptedEncoding(req: IncomingMessage, enc: "gzip" | "br" | "deflate"): "gzip" | "br" | "deflate" | null {
  const ae = String(req.headers["accept-encoding"] ?? "").toLowerCase();
  for (const part of ae.split(",")) {
    const [name, ...params] = part.trim().split(";");
    if (name !== enc && name !== "*") continue;
    const q = params.map((p) => p.trim()).find((p) => p.startsWith("q="));
    if (q && Number(q.slice(2)) === 0) return null;
    return enc;
  }
  return null;
}

/** RFC 9110 conditional GET: If-None-Match wins over If-Modified-Since. */
function notModified(req: IncomingMessage, etag: string, version: number): boolean {
  const inm = req.headers["if-none-match"];
  const strip = (t: string): string => t.trim().replace(/^W\//, "").replace(/-(gzip|br|deflate)"$/, '"');
  if (inm !== undefined) {
    if (inm.trim() === "*") return true;
    return inm.split(",").some((t) => strip(t) === etag);
  }
  const ims = req.headers["if-modified-since"];
  if (ims !== undefined) {
    const t = Date.parse(ims);
    if (Number.isNaN(t)) return false;
    return Math.floor(version / 1000) <= Math.floor(t / 1000);
  }
  return false;
}
