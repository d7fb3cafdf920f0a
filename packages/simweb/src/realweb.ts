// A web of REAL pages for end-to-end benchmarks: bodies are the pages of an HTML corpus (e.g. the
// npm package htmlparser-benchmark's files), served as they are except that every href is rewritten
// onto a set of served hosts, so each page keeps its real link count and mix:
//   - links to the page's own site (relative, or absolute to the same site) go to the serving host,
//     with their original path and query;
//   - links to another site go, for a share of sites (externalInScope, chosen by the site's name),
//     to the served host that site maps to (same path), and otherwise stay as written: out of scope;
//   - a link repeated on a page, or found on several pages, maps to the same served URL each time,
//     so duplicates occur as they do in the originals.
// Pages of one host: any path is a page; its body is one of the host's `templatesPerHost` corpus
// pages (picked by a hash of the path), so navigation repeats across a host's pages as it does on a
// real site, and content links repeat only where the templates' own links do. robots.txt on every
// host. Identity or gzip (when accepted), rendered once per (scheme, host, template) and kept.
import { createServer as createHttpServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createHttpsServer } from "node:https";
import { readFileSync, readdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { parseArgs } from "node:util";
import { hashString } from "./prng.js";
import { CertFactory, loadOrCreateCa } from "./tls.js";

export interface RealwebOptions {
  /** Folder of .html files (the corpus). */
  corpusDir: string;
  /** Served hosts: www.real<N>.test, N = 0..hosts-1. */
  hosts: number;
  /** Corpus pages a host's pages are drawn from (its "templates"). */
  templatesPerHost: number;
  /** Share of other sites whose links are mapped onto served hosts (in scope); the rest stay out of scope. */
  externalInScope: number;
  seed: number;
  /**
   * Answer every request with "Connection: close", so a client opens a new connection per page:
   * what a crawler pays when a host's next turn comes after its keep-alive time (default false).
   */
  connectionClose?: boolean;
}

export const DEFAULT_REALWEB: Omit<RealwebOptions, "corpusDir"> = { hosts: 66, templatesPerHost: 16, externalInScope: 0.5, seed: 1 };

/** One href slot of a template: where the original link pointed. */
type Slot =
  | { kind: "same"; rest: string; quote: string }
  | { kind: "served"; site: number; rest: string; quote: string };

interface Template {
  /** Literal pieces around the slots: pieces[0] slot[0] pieces[1] ... */
  pieces: string[];
  slots: Slot[];
}

const HREF_RE = /(\shref\s*=\s*)(?:"([^"]*)"|'([^']*)'|([^\s"'>]+))/gi;

/** A site's key: its host without "www.", cut to the registrable part by a rough public-suffix rule. */
function siteOf(host: string): string {
  const labels = host.toLowerCase().replace(/\.$/, "").split(".");
  if (labels.length <= 2) return labels.join(".");
  const tld = labels[labels.length - 1]!;
  const sld = labels[labels.length - 2]!;
  const keep = tld.length === 2 && sld.length <= 3 ? 3 : 2; // co.uk, com.br ...
  return labels.slice(-keep).join(".");
}

function decodeHref(raw: string): string {
  return raw.replace(/&amp;/gi, "&").replace(/&#38;/g, "&").trim();
}

function encodeHref(url: string): string {
  return url.replace(/&/g, "&amp;").replace(/"/g, "%22");
}

/** The page's original URL: canonical, og:url, <base>, else its most linked host. */
function originalUrlOf(html: string, index: number): string {
  const tries = [
    /<link[^>]+rel\s*=\s*["']?canonical["']?[^>]*href\s*=\s*["']([^"']+)["']/i,
    /<link[^>]+href\s*=\s*["']([^"']+)["'][^>]*rel\s*=\s*["']?canonical/i,
    /<meta[^>]+property\s*=\s*["']og:url["'][^>]*content\s*=\s*["']([^"']+)["']/i,
    /<base[^>]+href\s*=\s*["']([^"']+)["']/i,
  ];
  for (const re of tries) {
    const m = re.exec(html);
    if (m) {
      try {
        const u = new URL(decodeHref(m[1]!));
        if (u.protocol === "http:" || u.protocol === "https:") return u.href;
      } catch { /* next */ }
    }
  }
  const counts = new Map<string, number>();
  for (const m of html.matchAll(/href\s*=\s*["']?https?:\/\/([^/"'\s>:]+)/gi)) {
    const s = siteOf(m[1]!);
    counts.set(s, (counts.get(s) ?? 0) + 1);
  }
  let best = "";
  let n = 0;
  for (const [s, c] of counts) if (c > n) { best = s; n = c; }
  return best ? `http://www.${best}/` : `http://www.page${index}.example/`;
}

export interface RealwebStats {
  templates: number;
  meanBodyBytes: number;
  /** href attributes per template (all kinds), as written in the original. */
  hrefsPerPage: number;
  /** Of those: same site, mapped to another served host, out of scope, other (fragments, mailto:, javascript:, ...). */
  sameSitePerPage: number;
  otherServedPerPage: number;
  outOfScopePerPage: number;
  otherPerPage: number;
}

export class RealWeb {
  readonly options: RealwebOptions;
  private readonly templates: Template[] = [];
  private readonly bodyBytes: number[] = [];
  /** Rendered bodies by (scheme, host, template). */
  private readonly rendered = new Map<string, { identity: Buffer; gzip: Buffer }>();
  readonly stats: RealwebStats;

  constructor(options: RealwebOptions) {
    this.options = options;
    if (!(options.hosts >= 1)) throw new RangeError("realweb: hosts must be >= 1");
    if (!(options.templatesPerHost >= 1)) throw new RangeError("realweb: templatesPerHost must be >= 1");
    if (!(options.externalInScope >= 0 && options.externalInScope <= 1)) throw new RangeError("realweb: externalInScope must be in [0, 1]");
    const files = readdirSync(options.corpusDir).filter((f) => f.endsWith(".html")).sort();
    if (files.length === 0) throw new Error(`realweb: no .html files in ${options.corpusDir}`);
    let same = 0, served = 0, out = 0, other = 0, hrefs = 0;
    for (const [i, f] of files.entries()) {
      // latin1 keeps every byte as it is: the body goes back out byte for byte outside the hrefs.
      const html = readFileSync(join(options.corpusDir, f)).toString("latin1");
      this.bodyBytes.push(html.length);
      const base = originalUrlOf(html, i);
      const baseSite = siteOf(new URL(base).hostname);
      const pieces: string[] = [];
      const slots: Slot[] = [];
      let last = 0;
      for (const m of html.matchAll(HREF_RE)) {
        const raw = m[2] ?? m[3] ?? m[4] ?? "";
        const quote = m[2] !== undefined ? '"' : m[3] !== undefined ? "'" : "";
        hrefs++;
        let slot: Slot | undefined;
        const href = decodeHref(raw);
        if (href !== "" && !href.startsWith("#")) {
          try {
            const u = new URL(href, base);
            if (u.protocol === "http:" || u.protocol === "https:") {
              const rest = u.pathname + u.search + u.hash;
              const site = siteOf(u.hostname);
              if (site === baseSite) {
                slot = { kind: "same", rest, quote: quote || '"' };
                same++;
              } else if ((hashString(site, options.seed) % 10_000) / 10_000 < options.externalInScope) {
                slot = { kind: "served", site: hashString(site, options.seed + 1) % options.hosts, rest, quote: quote || '"' };
                served++;
              } else {
                out++;
              }
            }
          } catch { /* invalid: kept as written */ }
        }
        if (!slot) {
          if (href === "" || href.startsWith("#") || /^(mailto|javascript|tel|data):/i.test(href)) other++;
          continue; // kept as written (out of scope, or not a link to crawl)
        }
        pieces.push(html.slice(last, m.index + m[1]!.length));
        slots.push(slot);
        last = m.index + m[0].length;
      }
      pieces.push(html.slice(last));
      this.templates.push({ pieces, slots });
    }
    const n = this.templates.length;
    this.stats = {
      templates: n,
      meanBodyBytes: this.bodyBytes.reduce((a, b) => a + b, 0) / n,
      hrefsPerPage: hrefs / n, sameSitePerPage: same / n, otherServedPerPage: served / n, outOfScopePerPage: out / n, otherPerPage: other / n,
    };
  }

  hostName(i: number): string {
    return `www.real${i}.test`;
  }

  /** Host index of a served host name, or -1. */
  hostIndex(name: string): number {
    const m = /^www\.real(\d+)\.test$/.exec(name.toLowerCase());
    if (!m) return -1;
    const i = Number(m[1]);
    return i < this.options.hosts ? i : -1;
  }

  seeds(scheme: "http" | "https"): string[] {
    return Array.from({ length: this.options.hosts }, (_, i) => `${scheme}://${this.hostName(i)}/`);
  }

  /** The template of a path on a host: one of the host's templatesPerHost corpus pages. */
  templateOf(host: number, path: string): number {
    const n = this.templates.length;
    const first = (host * this.options.templatesPerHost) % n;
    return (first + (hashString(path, this.options.seed + 2) % this.options.templatesPerHost)) % n;
  }

  page(scheme: "http" | "https", host: number, path: string, gzip: boolean): Buffer {
    const t = this.templateOf(host, path);
    const key = `${scheme}|${host}|${t}`;
    let r = this.rendered.get(key);
    if (!r) {
      const identity = this.render(scheme, host, this.templates[t]!);
      r = { identity, gzip: gzipSync(identity, { level: 6 }) };
      this.rendered.set(key, r);
    }
    return gzip ? r.gzip : r.identity;
  }

  private render(scheme: string, host: number, t: Template): Buffer {
    const out: string[] = [t.pieces[0]!];
    for (let i = 0; i < t.slots.length; i++) {
      const s = t.slots[i]!;
      const h = s.kind === "same" ? host : s.site;
      out.push(`${s.quote}${encodeHref(`${scheme}://${this.hostName(h)}${s.rest}`)}${s.quote}`);
      out.push(t.pieces[i + 1]!);
    }
    return Buffer.from(out.join(""), "latin1");
  }

  robots(): string {
    return "User-agent: *\nDisallow: /cgi-bin/\nDisallow: /wp-admin/\n\nSitemap: /sitemap.xml\n";
  }

  handle(req: IncomingMessage, res: ServerResponse, scheme: "http" | "https"): void {
    // Node's server closes the socket after a response that carries this header.
    if (this.options.connectionClose) res.setHeader("connection", "close");
    const hostHeader = (req.headers.host ?? "").replace(/:\d+$/, "");
    const host = this.hostIndex(hostHeader);
    if (host < 0) {
      res.writeHead(421, { "content-type": "text/plain" }).end("not served\n");
      return;
    }
    const path = (req.url ?? "/").split("#")[0]!;
    if (path === "/robots.txt") {
      res.writeHead(200, { "content-type": "text/plain" }).end(this.robots());
      return;
    }
    if (req.method !== "GET" && req.method !== "HEAD") {
      res.writeHead(405).end();
      return;
    }
    const gzip = /\bgzip\b/i.test(String(req.headers["accept-encoding"] ?? ""));
    const body = this.page(scheme, host, path, gzip);
    res.writeHead(200, { "content-type": "text/html", "content-length": body.length, ...(gzip ? { "content-encoding": "gzip" } : {}), vary: "accept-encoding" });
    res.end(req.method === "HEAD" ? undefined : body);
  }
}

export interface RunningRealweb {
  web: RealWeb;
  httpPort: number;
  httpsPort: number;
  caFile: string;
  close(): Promise<void>;
}

function listen(server: Server, port: number, bind: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, bind, () => {
      const a = server.address();
      resolve(typeof a === "object" && a ? a.port : port);
    });
  });
}

export async function startRealweb(options: RealwebOptions, net: { bind?: string; httpPort?: number; httpsPort?: number; caDir?: string } = {}): Promise<RunningRealweb> {
  const web = new RealWeb(options);
  const bind = net.bind ?? "127.0.0.1";
  const ca = await loadOrCreateCa(net.caDir ?? mkdtempSync(join(tmpdir(), "realweb-ca-")));
  const certs = new CertFactory(ca);
  const fallback = await certs.pems("realweb.invalid");
  // Every host's certificate before the first handshake: issued on demand, 66 of them under load
  // took long enough that a crawler's first robots.txt fetches timed out (robots "unavailable").
  for (let i = 0; i < options.hosts; i++) await certs.context(`real${i}.test`);
  const http = createHttpServer({ keepAliveTimeout: 10_000 }, (req, res) => web.handle(req, res, "http"));
  const https = createHttpsServer({
    ...fallback,
    keepAliveTimeout: 10_000,
    SNICallback: (servername, cb) => {
      const i = web.hostIndex(servername);
      if (i < 0) {
        cb(new Error(`realweb does not serve ${servername}`), undefined);
        return;
      }
      certs.context(`real${i}.test`).then((ctx) => cb(null, ctx), (err: Error) => cb(err, undefined));
    },
  }, (req, res) => web.handle(req, res, "https"));
  const httpPort = await listen(http, net.httpPort ?? 0, bind);
  const httpsPort = await listen(https, net.httpsPort ?? 0, bind);
  return {
    web, httpPort, httpsPort, caFile: ca.caFile,
    close: async () => {
      http.closeAllConnections();
      https.closeAllConnections();
      await Promise.all([new Promise((r) => http.close(r)), new Promise((r) => https.close(r))]);
    },
  };
}

/** `simweb realweb --corpus DIR ...`: serves until SIGTERM; prints {http, https, ca, hosts, stats} first. */
export async function realwebMain(argv: string[]): Promise<number> {
  const { values: v } = parseArgs({
    args: argv, strict: true, options: {
      corpus: { type: "string" }, hosts: { type: "string" }, "templates-per-host": { type: "string" }, "external-in-scope": { type: "string" },
      seed: { type: "string" }, bind: { type: "string" }, port: { type: "string" }, "https-port": { type: "string" }, "ca-dir": { type: "string" },
      "seeds-out": { type: "string" }, scheme: { type: "string" }, "connection-close": { type: "boolean" },
    },
  });
  if (!v.corpus) throw new RangeError("realweb needs --corpus DIR (a folder of .html files)");
  const num = (x: string | undefined, d: number): number => (x === undefined ? d : Number(x));
  const sim = await startRealweb({
    corpusDir: v.corpus,
    hosts: num(v.hosts, DEFAULT_REALWEB.hosts),
    templatesPerHost: num(v["templates-per-host"], DEFAULT_REALWEB.templatesPerHost),
    externalInScope: num(v["external-in-scope"], DEFAULT_REALWEB.externalInScope),
    seed: num(v.seed, DEFAULT_REALWEB.seed),
    connectionClose: v["connection-close"] ?? false,
  }, { bind: v.bind ?? "127.0.0.1", httpPort: num(v.port, 0), httpsPort: num(v["https-port"], 0), ...(v["ca-dir"] ? { caDir: v["ca-dir"] } : {}) });
  if (v["seeds-out"]) writeFileSync(v["seeds-out"], sim.web.seeds(v.scheme === "https" ? "https" : "http").join("\n") + "\n");
  process.stdout.write(`${JSON.stringify({ http: sim.httpPort, https: sim.httpsPort, ca: sim.caFile, hosts: sim.web.options.hosts, stats: sim.web.stats })}\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGTERM", () => resolve());
    process.once("SIGINT", () => resolve());
  });
  await sim.close();
  return 0;
}
