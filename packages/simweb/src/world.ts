// The synthetic web as a pure function of the config: hosts, pages, links and what every URL is.
// Lazy by construction: the host table is built up front (small: one record per host), pages and
// links are computed on demand from per-page PRNG seeds, so a 100,000-host web with millions of
// pages per host costs nothing until a URL is asked for.
import { realOutDegree } from "./real-degree.js";
import type { Behaviour, RobotsKind, SimwebConfig } from "./config.js";
import { BEHAVIOURS, ROBOTS_KINDS } from "./config.js";
import { Rng, hashString, lognormalSigma, mix } from "./prng.js";
import { LANGS, NON_ASCII_NAMES, SECTIONS, SUBDOMAIN_LABELS, USERS, WORDS } from "./vocab.js";
import type { ChangeSpec, Churn } from "./change.js";
import { changeRatePerMs, changeTimesBetween, lastChangeAt } from "./change.js";
import { decodeUnreservedPercent } from "./normalize.js";
import { expectedSet, type ExpectedOptions, type ExpectedResult } from "./expected.js";
import { RobotsBook } from "./robots.js";
import { TwoGenerationCache } from "./lru.js";

export type Scheme = "http" | "https";
export type Charset = "utf-8" | "windows-1252";

/** Public, JSON-friendly description of a served host. */
export interface HostInfo {
  index: number;
  name: string;
  scheme: Scheme;
  /** Registrable domain (eTLD+1), e.g. d17.test. */
  domain: string;
  pageCount: number;
  behaviours: Behaviour[];
  robots: RobotsKind;
  charset: Charset;
}

/** Everything the generator and server need to know about a host. */
export interface HostModel {
  info: HostInfo;
  seed: number;
  has: ReadonlySet<Behaviour>;
  sections: string[];
  lang: string;
  encoding: "gzip" | "br" | "deflate";
  /** How the charset is declared; a "lie" declares one charset and sends bytes of the other. */
  charsetDecl: "header" | "meta" | "http-equiv" | "bom" | "header-lies" | "meta-lies";
  throttle: { maxConcurrency: number; ratePerSec: number; retryAfterSec: number; status: 429 | 503; dateForm: boolean };
  /** Indexes of hosts on the same registrable domain (including this one). */
  siblings: number[];
}

export type PageKind = "html" | "pdf" | "json" | "image" | "text";

export interface PageSpec {
  host: HostModel;
  id: number;
  /** Canonical path + query. */
  path: string;
  /** Canonical absolute URL. */
  url: string;
  kind: PageKind;
  huge: boolean;
  /** Target body size in bytes (HTML pages hit it exactly unless their fixed parts are larger). */
  size: number;
  section: string;
  slug: string;
  /** Content of <meta name="robots">, or null. */
  metaRobots: string | null;
  /** Links on this page must not be followed (meta robots nofollow/none). */
  nofollowPage: boolean;
  noindex: boolean;
  /** Absolute <base href>, or null. */
  baseHref: string | null;
  change: ChangeSpec;
  seed: number;
}

export type LinkKind = "nav" | "tree" | "same" | "cross" | "unserved" | "broken" | "redirect" | "trap" | "bomb";

/** A link as the generator decided it: its canonical target; the HTML writes it in some spelling. */
export interface LinkSpec {
  url: string;
  nofollow: boolean;
  kind: LinkKind;
}

export type Resource =
  | { kind: "page"; page: PageSpec }
  | { kind: "robots" }
  | { kind: "robots-moved" }
  | { kind: "sitemap" }
  | { kind: "static"; type: "css" | "js" }
  | { kind: "redirect"; status: 301 | 302 | 303 | 307 | 308; target: string; location: string }
  | { kind: "trap"; trap: "calendar" | "session"; path: string }
  | { kind: "bomb" }
  | { kind: "notfound" };

const DAY = 86_400_000;
const REDIRECT_STATUSES = [301, 302, 303, 307, 308] as const;

/** Path templates of ordinary pages (see pathFor); weights sum to 100. */
const TEMPLATE_WEIGHTS = [35, 15, 15, 10, 10, 15];
const PAGE_PATTERNS: RegExp[] = [
  /^\/[a-z]+\/[a-z0-9-]+-([0-9a-z]+)\.html$/,
  /^\/[a-z]+\/\d{4}\/[a-z0-9-]+-([0-9a-z]+)\/$/,
  /^\/[a-z]+\.php\?id=([0-9a-z]+)&sort=[a-z]+$/,
  /^\/~[a-z]+\/[a-z0-9-]+-([0-9a-z]+)$/,
  /^\/wiki\/[^/?]+-([0-9a-z]+)$/,
  /^\/[a-z]+\/item-([0-9a-z]+)\?ref=[a-z]+&lang=[a-z]+$/,
  /^\/files\/[a-z0-9-]+-([0-9a-z]+)\.(?:pdf|json|jpg|txt)$/,
];
const FILE_EXT: Record<Exclude<PageKind, "html">, string> = { pdf: "pdf", json: "json", image: "jpg", text: "txt" };

export function hex16(a: number, b: number): string {
  return (a >>> 0).toString(16).padStart(8, "0") + (b >>> 0).toString(16).padStart(8, "0");
}

function slugOf(r: Rng): string {
  const n = r.range(1, 3);
  const parts: string[] = [];
  for (let i = 0; i < n; i++) parts.push(r.pick(WORDS));
  return parts.join("-");
}

export class World {
  readonly config: SimwebConfig;
  private readonly models: HostModel[] = [];
  private readonly byName = new Map<string, number>();
  private readonly sizeSigma: number;
  /** Page specs are pure functions of (host, id); caching the hot ones makes link walks cheap. */
  private readonly pageCache = new TwoGenerationCache<number, PageSpec>(50_000);
  readonly robots: RobotsBook;

  constructor(config: SimwebConfig) {
    this.config = config;
    this.sizeSigma = lognormalSigma(config.pageSize.median, config.pageSize.mean);
    this.buildHosts();
    this.robots = new RobotsBook(this);
  }

  // ---- hosts -------------------------------------------------------------------------------

  private buildHosts(): void {
    const c = this.config;
    const robotsWeights = ROBOTS_KINDS.map((k) => c.robots[k] ?? 0);
    for (let d = 0; this.models.length < c.hosts; d++) {
      const dr = new Rng(mix(c.seed, 2, d));
      const big = c.bigDomains[d];
      const k = big !== undefined ? Math.min(big, c.hosts - this.models.length) : Math.min(1 + dr.weighted(c.hostsPerDomain), c.hosts - this.models.length, SUBDOMAIN_LABELS.length);
      const domain = `d${d}.test`;
      const siblings: number[] = [];
      for (let j = 0; j < k; j++) {
        const index = this.models.length;
        siblings.push(index);
        // A big domain runs out of words: its later hosts are h<j>.
        const name = `${SUBDOMAIN_LABELS[j] ?? `h${j}`}.${domain}`;
        const seed = mix(c.seed, 1, index);
        const r = new Rng(seed);
        const scheme: Scheme = r.chance(c.httpsShare) ? "https" : "http";
        // Pareto page count: most hosts small, a few with millions of pages.
        const u = 1 - r.next();
        let pageCount = Math.floor(c.pagesPerHost.min * Math.pow(u, -1 / c.pagesPerHost.alpha));
        pageCount = Math.max(1, Math.min(pageCount, c.pagesPerHost.max, c.hostPageCap ?? Infinity));
        const behaviours = BEHAVIOURS.filter((b) => new Rng(mix(seed, 7, hashString(b))).chance(c.behaviours[b]));
        const robots = ROBOTS_KINDS[r.weighted(robotsWeights)] as RobotsKind;
        let charset: Charset = r.chance(c.latin1Share) ? "windows-1252" : "utf-8";
        const has = new Set(behaviours);
        const nsec = r.range(3, 6);
        const pool = [...SECTIONS];
        const sections: string[] = [];
        for (let s = 0; s < nsec; s++) sections.push(pool.splice(r.int(pool.length), 1)[0] as string);
        const decls = charset === "utf-8" ? (["header", "meta", "http-equiv", "bom"] as const) : (["header", "meta", "http-equiv"] as const);
        let charsetDecl: HostModel["charsetDecl"] = r.pick(decls);
        if (has.has("wrong-charset")) {
          // header-lies: UTF-8 bytes under a Latin-1 header; meta-lies: windows-1252 bytes under a UTF-8 meta.
          charsetDecl = r.chance(0.5) ? "header-lies" : "meta-lies";
          charset = charsetDecl === "header-lies" ? "utf-8" : "windows-1252";
        }
        const t = c.throttle;
        const info: HostInfo = { index, name, scheme, domain, pageCount, behaviours, robots, charset };
        this.models.push({
          info, seed, has, sections, siblings,
          lang: charset === "utf-8" ? r.pick(LANGS) : r.pick(["de", "fr", "es"]),
          encoding: r.pick(["gzip", "br", "deflate"] as const),
          charsetDecl,
          throttle: {
            maxConcurrency: r.pick(t.maxConcurrency), ratePerSec: r.pick(t.ratePerSec), retryAfterSec: r.pick(t.retryAfterSec),
            status: r.chance(0.7) ? 429 : 503, dateForm: r.chance(0.2),
          },
        });
        this.byName.set(name, index);
      }
    }
  }

  /** True for a name under the wildcard farm's domain (config wildcardFarm): every such name is served. */
  isFarmName(name: string): boolean {
    const farm = this.config.wildcardFarm;
    return farm !== null && (name === farm.domain || name.endsWith(`.${farm.domain}`));
  }

  /** False when the name service never gives the host an address (an NXDOMAIN name, an endless SERVFAIL). */
  resolvable(h: HostModel): boolean {
    return !this.config.dns.faults.some((f) => f.host === h.info.index && (f.kind === "nxdomain" || (f.kind !== "move" && f.forMs === undefined)));
  }

  /** All served hosts (shared objects: do not mutate). */
  hosts(): HostInfo[] {
    return this.models.map((m) => m.info);
  }

  hostCount(): number {
    return this.models.length;
  }

  model(index: number): HostModel {
    const m = this.models[index];
    if (!m) throw new RangeError(`no host #${index}`);
    return m;
  }

  /** The host served under this name (lower-case, no port), or undefined. */
  hostByName(name: string): HostModel | undefined {
    const i = this.byName.get(name);
    return i === undefined ? undefined : this.models[i];
  }

  origin(h: HostModel): string {
    return `${h.info.scheme}://${h.info.name}`;
  }

  /** Home page URLs of the first `count` hosts (all hosts by default). */
  seeds(count = this.models.length): string[] {
    return this.models.slice(0, Math.max(0, count)).map((m) => `${this.origin(m)}/`);
  }

  // ---- pages -------------------------------------------------------------------------------

  page(h: HostModel, id: number): PageSpec {
    const key = h.info.index * 1e9 + id; // exact: index < 9e6 and id < 1e9 (pagesPerHost.max is capped below)
    let p = this.pageCache.get(key);
    if (!p) {
      p = this.makePage(h, id);
      this.pageCache.set(key, p);
    }
    return p;
  }

  /** The page's path and the draws it depends on; makePage continues with the same generator. */
  private pathDraws(h: HostModel, id: number): { r: Rng; seed: number; section: string; slug: string; kind: PageKind; path: string } {
    const c = this.config;
    const seed = mix(h.seed, 3, id);
    const r = new Rng(seed);
    const section = r.pick(h.sections);
    const slug = slugOf(r);
    const template = r.weighted(TEMPLATE_WEIGHTS);
    let kind: PageKind = "html";
    if (id !== 0 && h.has.has("non-html") && r.chance(c.nonHtmlShare)) kind = r.pick(["pdf", "json", "image", "text"] as const);
    const id36 = id.toString(36);
    let path: string;
    if (id === 0) path = "/";
    else if (kind !== "html") path = `/files/${slug}-${id36}.${FILE_EXT[kind]}`;
    else {
      switch (template) {
        case 0: path = `/${section}/${slug}-${id36}.html`; break;
        case 1: path = `/${section}/${2000 + r.int(26)}/${slug}-${id36}/`; break;
        case 2: path = `/${section}.php?id=${id36}&sort=${r.pick(["new", "top", "old"])}`; break;
        case 3: path = `/~${r.pick(USERS)}/${slug}-${id36}`; break;
        case 4: path = `/wiki/${encodeURIComponent(r.pick(NON_ASCII_NAMES))}_${slug}-${id36}`; break;
        default: path = `/${section}/item-${id36}?ref=${r.pick(["nav", "side", "footer"])}&lang=${r.pick(LANGS)}`;
      }
    }
    return { r, seed, section, slug, kind, path };
  }

  /** Canonical URL of page `id` (cheaper than page(): links need only this). */
  pageUrl(h: HostModel, id: number): string {
    const key = h.info.index * 1e9 + id;
    return this.pageCache.get(key)?.url ?? this.origin(h) + this.pathDraws(h, id).path;
  }

  private makePage(h: HostModel, id: number): PageSpec {
    const c = this.config;
    const { r, seed, section, slug, kind, path } = this.pathDraws(h, id);
    let size = Math.round(r.lognormal(c.pageSize.median, this.sizeSigma));
    size = Math.max(c.pageSize.min, Math.min(c.pageSize.max, size));
    let huge = false;
    if (kind === "html" && id !== 0 && h.has.has("huge") && r.chance(c.huge.share)) {
      huge = true;
      size = Math.round(Math.exp(Math.log(c.huge.minBytes) + r.next() * (Math.log(c.huge.maxBytes) - Math.log(c.huge.minBytes))));
    }
    if (kind !== "html") size = Math.max(500, Math.round(size / 3));
    let metaRobots: string | null = null;
    let nofollowPage = false;
    let noindex = false;
    if (id !== 0 && kind === "html") {
      if (r.chance(c.metaNofollowShare)) {
        nofollowPage = true;
        metaRobots = r.pick(["nofollow", "noindex, nofollow", "NOFOLLOW", "none", "index,nofollow"]);
        noindex = metaRobots === "noindex, nofollow" || metaRobots === "none";
      } else if (r.chance(c.metaNoindexShare)) {
        noindex = true;
        metaRobots = r.pick(["noindex", "noindex, follow", "NOINDEX"]);
      }
    }
    const baseHref = kind === "html" && r.chance(c.baseHrefShare) ? `${this.origin(h)}/${r.pick(h.sections)}/sub/` : null;
    const ch = c.change;
    const intervalMs = r.chance(ch.staticShare)
      ? Infinity
      : Math.exp(Math.log(ch.minIntervalMs) + r.next() * (Math.log(ch.maxIntervalMs) - Math.log(ch.minIntervalMs)));
    const churn: Churn = kind === "html" && r.chance(ch.churnShare) ? (r.chance(0.5) ? "timestamp" : "ad") : "none";
    const change: ChangeSpec = {
      intervalMs,
      phaseMs: Number.isFinite(intervalMs) ? r.next() * intervalMs : 0,
      seed: mix(seed, 0xc4),
      churn,
      baseMs: c.timeOriginMs - (1 + r.int(1000)) * DAY - r.int(DAY),
    };
    return { host: h, id, path, url: this.origin(h) + path, kind, huge, size, section, slug, metaRobots, nofollowPage, noindex, baseHref, change, seed };
  }

  /** Outgoing links of a page, in document order, with their canonical targets. */
  links(p: PageSpec): LinkSpec[] {
    if (p.kind !== "html") return [];
    const c = this.config;
    const h = p.host;
    const n = h.info.pageCount;
    const r = new Rng(mix(p.seed, 4));
    const out: LinkSpec[] = [];
    const add = (url: string, kind: LinkKind): void => {
      out.push({ url, kind, nofollow: r.chance(c.nofollowShare) });
    };
    const pageUrl = (id: number): string => this.pageUrl(h, id);
    if (p.id !== 0) add(`${this.origin(h)}/`, "nav");
    for (let i = 1; i <= Math.min(4, n - 1); i++) if (i !== p.id) add(pageUrl(i), "nav");
    const f = c.treeFanout;
    for (let i = p.id * f + 1; i <= p.id * f + f && i < n; i++) add(pageUrl(i), "tree");
    if (p.id > 0) add(pageUrl(Math.floor((p.id - 1) / f)), "tree");
    const degree = Math.min(c.outDegree.max, c.outDegreeFrom === "real" ? realOutDegree(r.next()) : Math.round(r.lognormal(c.outDegree.median, c.outDegree.sigma)));
    for (let i = 0; i < degree; i++) {
      const x = r.next();
      if (x < c.crossHostShare && this.models.length > 1) {
        const j = h.siblings.length > 1 && r.chance(0.3) ? r.pick(h.siblings) : Math.floor(this.models.length * r.next() ** 2);
        const other = this.model(j);
        add(r.chance(0.5) || other.info.pageCount === 1 ? `${this.origin(other)}/` : this.pageUrl(other, r.int(other.info.pageCount)), "cross");
      } else if (x < c.crossHostShare + c.unservedShare) {
        const path = r.chance(0.4) ? "/" : `/${r.pick(WORDS)}/${r.pick(WORDS)}.html`;
        add(`${r.chance(0.5) ? "https" : "http"}://${r.pick(["www", "cdn", "api", "m"])}.x${r.int(100_000)}.invalid${path}`, "unserved");
      } else if (x < c.crossHostShare + c.unservedShare + c.brokenShare) {
        add(`${this.origin(h)}/${r.pick(h.sections)}/gone-${r.int(1_000_000).toString(36)}.html`, "broken");
      } else {
        add(pageUrl(r.int(n)), "same");
      }
    }
    // Entrances to hostile structures: always on the home page, sometimes elsewhere.
    const home = p.id === 0;
    if (h.has.has("redirects") && (home || r.chance(0.3))) {
      const id = r.int(n);
      switch (r.int(home ? 1 : 4)) {
        case 0: add(`${this.origin(h)}/go/${id.toString(36)}`, "redirect"); break;
        case 1: add(`${this.origin(h)}/r/${r.range(2, 4)}/${id.toString(36)}`, "redirect"); break;
        case 2: add(`${this.origin(h)}/loop/${r.int(100)}/a`, "redirect"); break;
        default: add(`${this.origin(h)}/out/${r.int(this.models.length).toString(36)}`, "redirect");
      }
      if (home) add(`${this.origin(h)}/r/3/${r.int(n).toString(36)}`, "redirect");
      if (home) add(`${this.origin(h)}/loop/${r.int(100)}/a`, "redirect");
    }
    if (h.has.has("trap-calendar") && (home || r.chance(0.3))) {
      add(`${this.origin(h)}/calendar/${2020 + r.int(6)}/${String(1 + r.int(12)).padStart(2, "0")}/`, "trap");
    }
    if (h.has.has("trap-session") && (home || r.chance(0.3))) {
      add(`${this.origin(h)}/shop/${r.pick(WORDS)}?sid=${hex16(r.u32(), r.u32())}`, "trap");
    }
    if (h.has.has("bomb") && (home || r.chance(0.1))) add(`${this.origin(h)}/download/archive-${r.int(10)}.html`, "bomb");
    return out;
  }

  /** Links inside an (infinite) trap space. */
  trapLinks(h: HostModel, trap: "calendar" | "session", path: string): LinkSpec[] {
    const o = this.origin(h);
    const out: LinkSpec[] = [{ url: `${o}/`, kind: "nav", nofollow: false }];
    const add = (u: string): void => {
      out.push({ url: o + u, kind: "trap", nofollow: false });
    };
    if (trap === "calendar") {
      const m = /^\/calendar\/(\d{4})\/(\d{2})\/(?:(\d{2})\/)?$/.exec(path);
      if (!m) return out;
      const y = Number(m[1]);
      const mo = Number(m[2]);
      const fmt = (t: number, withDay: boolean): string => {
        const d = new Date(t);
        const yy = String(d.getUTCFullYear()).padStart(4, "0");
        const mm = String(d.getUTCMonth() + 1).padStart(2, "0");
        return withDay ? `/calendar/${yy}/${mm}/${String(d.getUTCDate()).padStart(2, "0")}/` : `/calendar/${yy}/${mm}/`;
      };
      if (m[3] === undefined) {
        add(fmt(Date.UTC(y, mo - 2, 1), false));
        add(fmt(Date.UTC(y, mo, 1), false));
        for (let d = 1; d <= 3; d++) add(fmt(Date.UTC(y, mo - 1, d), true));
      } else {
        const t = Date.UTC(y, mo - 1, Number(m[3]));
        add(fmt(t - DAY, true));
        add(fmt(t + DAY, true));
        add(fmt(t, false));
      }
    } else {
      const sid = /[?&]sid=([0-9a-f]{16})/.exec(path)?.[1] ?? "0";
      const hs = hashString(sid, h.seed);
      const r = new Rng(hs);
      for (let i = 0; i < 4; i++) add(`/shop/${r.pick(WORDS)}?sid=${hex16(mix(hs, i), mix(hs, i, 1))}`);
    }
    return out;
  }

  // ---- routing -----------------------------------------------------------------------------

  /** What a request for this path (+query) on this host gets. */
  route(h: HostModel, rawTarget: string): Resource {
    const hashAt = rawTarget.indexOf("#");
    const target = decodeUnreservedPercent(hashAt >= 0 ? rawTarget.slice(0, hashAt) : rawTarget);
    if (target === "/robots.txt") return { kind: "robots" };
    if (target === "/meta/robots.txt" && h.info.robots === "redirect") return { kind: "robots-moved" };
    if (target === "/sitemap.xml" && h.info.robots === "sitemap") return { kind: "sitemap" };
    if (target === "/static/site.css") return { kind: "static", type: "css" };
    if (target === "/static/app.js") return { kind: "static", type: "js" };
    if (target === "/") return { kind: "page", page: this.page(h, 0) };
    const o = this.origin(h);
    const statusFor = (key: string): (typeof REDIRECT_STATUSES)[number] => REDIRECT_STATUSES[hashString(key, h.seed) % REDIRECT_STATUSES.length] as (typeof REDIRECT_STATUSES)[number];
    if (h.has.has("redirects")) {
      let m = /^\/go\/([0-9a-z]+)$/.exec(target);
      if (m) {
        const id = parseInt(m[1] as string, 36);
        if (id < h.info.pageCount) {
          const p = this.page(h, id);
          // Some Location headers are relative references (allowed since RFC 7231).
          return { kind: "redirect", status: statusFor(target), target: p.url, location: hashString(target) % 3 === 0 ? p.path : p.url };
        }
      }
      m = /^\/r\/([1-9])\/([0-9a-z]+)$/.exec(target);
      if (m) {
        const n = Number(m[1]);
        const id = parseInt(m[2] as string, 36);
        if (id < h.info.pageCount) {
          const next = n <= 1 ? this.page(h, id).url : `${o}/r/${n - 1}/${m[2]}`;
          return { kind: "redirect", status: statusFor(target), target: next, location: next };
        }
      }
      m = /^\/loop\/(\d{1,3})\/([ab])$/.exec(target);
      if (m) {
        const next = `${o}/loop/${m[1]}/${m[2] === "a" ? "b" : "a"}`;
        return { kind: "redirect", status: statusFor(target), target: next, location: next };
      }
      m = /^\/out\/([0-9a-z]+)$/.exec(target);
      if (m) {
        const j = parseInt(m[1] as string, 36);
        if (j < this.models.length) {
          const next = `${this.origin(this.model(j))}/`;
          return { kind: "redirect", status: 302, target: next, location: next };
        }
      }
    }
    if (h.has.has("trap-calendar") && /^\/calendar\/\d{4}\/(0[1-9]|1[0-2])\/(?:(0[1-9]|[12]\d|3[01])\/)?$/.test(target)) {
      return { kind: "trap", trap: "calendar", path: target };
    }
    if (h.has.has("trap-session") && /^\/shop\/[a-z]+\?sid=[0-9a-f]{16}$/.test(target)) {
      return { kind: "trap", trap: "session", path: target };
    }
    if (h.has.has("bomb") && /^\/download\/archive-\d\.html$/.test(target)) return { kind: "bomb" };
    for (const re of PAGE_PATTERNS) {
      const m = re.exec(target);
      if (!m) continue;
      const id = parseInt(m[1] as string, 36);
      if (!(id > 0 && id < h.info.pageCount)) continue;
      const p = this.page(h, id);
      if (p.path === target) return { kind: "page", page: p };
    }
    return { kind: "notfound" };
  }

  /** Splits an absolute URL into its served host and path (+query); host undefined when not served. */
  locate(url: string): { host: HostModel | undefined; scheme: string; path: string } | null {
    let u: URL;
    try {
      u = new URL(url);
    } catch {
      return null;
    }
    const scheme = u.protocol.slice(0, -1);
    return { host: this.hostByName(u.hostname), scheme, path: u.pathname + u.search };
  }

  /** The resource an absolute URL names, or null when no served host (and scheme) matches it. */
  resolve(url: string): { host: HostModel; resource: Resource } | null {
    const loc = this.locate(url);
    if (!loc?.host || loc.host.info.scheme !== loc.scheme) return null;
    return { host: loc.host, resource: this.route(loc.host, loc.path) };
  }

  /** True when the URL is inside an infinite spider-trap space. */
  isTrap(url: string): boolean {
    return this.resolve(url)?.resource.kind === "trap";
  }

  // ---- change ground truth ----------------------------------------------------------------

  private pageOf(url: string): PageSpec {
    const r = this.resolve(url);
    if (!r || r.resource.kind !== "page") throw new Error(`not a simweb page: ${url}`);
    return r.resource.page;
  }

  /** Version stamp (ms of the last content change at or before tMs; a constant for static pages). */
  pageVersionAt(url: string, tMs: number): number {
    return lastChangeAt(this.pageOf(url).change, tMs);
  }

  /** Content change instants in (fromMs, toMs]. */
  changeTimes(url: string, fromMs: number, toMs: number): number[] {
    return changeTimesBetween(this.pageOf(url).change, fromMs, toMs);
  }

  /** Configured change rate in changes per day (0 for static pages) and the page's churn kind. */
  changeRate(url: string): { perDay: number; churn: Churn } {
    const spec = this.pageOf(url).change;
    return { perDay: changeRatePerMs(spec) * DAY, churn: spec.churn };
  }

  // ---- ground truth for coverage -------------------------------------------------------------

  expected(opts: ExpectedOptions): ExpectedResult {
    return expectedSet(this, opts);
  }
}
