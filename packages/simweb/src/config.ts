// Every knob of the synthetic web, JSON-serializable, with presets. A World is a pure function of
// (config, seed): two processes given the same config serve the same bytes.
import { DEFAULT_LISTINGS, type ListingsConfig } from "./listings.js";
import { validateRobotsFaults, type CrawlDelaySpec, type RobotsOutageSpec } from "./robots-faults.js";
import { DEFAULT_DNS, validateDns, type DnsConfig, type WildcardFarmConfig } from "./name-service.js";

/** How a host answers /robots.txt. */
export type RobotsKind =
  | "absent" // 404
  | "empty" // 200, empty file: allow all
  | "rules" // User-agent: * with Allow/Disallow using * and $
  | "agent-specific" // a stricter group for our agent token, plus groups for other bots
  | "crawl-delay" // rules plus Crawl-delay
  | "sitemap" // rules plus Sitemap: lines (and a /sitemap.xml)
  | "large" // ~600 KB: the real rules first, then inert padding rules
  | "redirect" // 301 to /meta/robots.txt, which holds the rules
  | "disallow-all" // User-agent: * / Disallow: /
  | "server-error" // 5xx: a crawler must treat the host as fully disallowed
  | "unreachable"; // connection destroyed: also fully disallowed

export const ROBOTS_KINDS: readonly RobotsKind[] = [
  "absent", "empty", "rules", "agent-specific", "crawl-delay", "sitemap", "large", "redirect",
  "disallow-all", "server-error", "unreachable",
];

/** Host behaviours; each host gets each behaviour independently with its configured probability. */
export type Behaviour =
  | "slow" // latency drawn from a log-normal before the response starts
  | "throttle" // hidden per-host concurrency and rate capacity; 429/503 + Retry-After beyond it
  | "flapping" // 5xx during some time windows
  | "reset" // some requests get a TCP reset
  | "hang" // some requests never get an answer (socket held, then destroyed)
  | "redirects" // links to redirects: single hops, chains, loops, cross-host
  | "trap-calendar" // an infinite calendar
  | "trap-session" // session ids in URLs: infinitely many URLs for the same few pages
  | "non-html" // some pages are PDF / JSON / images / plain text
  | "huge" // some pages are several MB to tens of MB
  | "compress" // gzip / br / deflate when the client accepts it
  | "wrong-charset" // declared charset does not match the bytes
  | "bomb" // links to a gzip decompression bomb
  | "validators"; // ETag / Last-Modified and correct 304 answers

export const BEHAVIOURS: readonly Behaviour[] = [
  "slow", "throttle", "flapping", "reset", "hang", "redirects", "trap-calendar", "trap-session",
  "non-html", "huge", "compress", "wrong-charset", "bomb", "validators",
];

/** Behaviours a polite test crawl should never meet. */
export const HOSTILE_BEHAVIOURS: readonly Behaviour[] = [
  "slow", "throttle", "flapping", "reset", "hang", "redirects", "trap-calendar", "trap-session",
  "non-html", "huge", "wrong-charset", "bomb",
];

export interface SimwebConfig {
  seed: number;
  /** Number of served hosts (tested up to 100,000 and beyond). */
  hosts: number;
  /** Weights for 1, 2, 3, ... hosts sharing one registrable domain (www.dN.test, blog.dN.test, ...). */
  hostsPerDomain: number[];
  /** Share of hosts served over https (each host has exactly one scheme). */
  httpsShare: number;
  /** Pages per host: Pareto(min, alpha) capped at max; heavy-tailed (most hosts small). */
  pagesPerHost: { min: number; alpha: number; max: number };
  /** Hard cap on pages per host (tests); null = none. */
  hostPageCap: number | null;
  /** Out-degree of a page (anchors besides navigation): log-normal, capped. */
  outDegree: { median: number; sigma: number; max: number };
  /** Where the out-degree comes from: the log-normal above (default) or the link counts of real pages (real-degree.ts), still capped at outDegree.max. */
  outDegreeFrom?: "lognormal" | "real";
  /** Tree fan-out that makes every page of a host reachable from its home page. */
  treeFanout: number;
  /** Share of a page's links that go to other served hosts. */
  crossHostShare: number;
  /** Share of a page's links that go to hosts simweb does not serve (.invalid). */
  unservedShare: number;
  /** Share of links that point to a page that does not exist (404). */
  brokenShare: number;
  /** Share of links carrying rel=nofollow. */
  nofollowShare: number;
  /** Share of pages with meta robots nofollow (their links must not be followed). */
  metaNofollowShare: number;
  /** Share of pages with meta robots noindex (crawlable, links followed). */
  metaNoindexShare: number;
  /** Share of pages with a <base href>. */
  baseHrefShare: number;
  /** HTML page size in bytes: log-normal fitted to (median, mean), clamped to [min, max]. */
  pageSize: { median: number; mean: number; min: number; max: number };
  /** Share of hosts whose pages are windows-1252 instead of UTF-8. */
  latin1Share: number;
  /** Weights of robots.txt kinds across hosts. */
  robots: Record<RobotsKind, number>;
  /** Product token the agent-specific robots groups name (the crawler's token). */
  robotsAgentToken: string;
  /** Probability that a host has each behaviour. */
  behaviours: Record<Behaviour, number>;
  slow: { medianMs: number; sigma: number; maxMs: number };
  throttle: { maxConcurrency: number[]; ratePerSec: number[]; retryAfterSec: number[] };
  flapping: { windowMs: number; downShare: number };
  /** Per-request probability of a reset / a hang on hosts with that behaviour. */
  resetShare: number;
  hangShare: number;
  /** How long a hanging request is held before its socket is destroyed. */
  hangMs: number;
  /** Share of pages that are huge on hosts with "huge", and their size range. */
  huge: { share: number; minBytes: number; maxBytes: number };
  /** Share of pages that are not HTML on hosts with "non-html". */
  nonHtmlShare: number;
  /** Decompressed size of the gzip bomb. */
  bombBytes: number;
  /** Page change model (Poisson per page); see change.ts. */
  change: {
    /** Share of pages that never change. */
    staticShare: number;
    /** Mean time between changes is log-uniform in [minIntervalMs, maxIntervalMs]. */
    minIntervalMs: number;
    maxIntervalMs: number;
    /** Share of pages that churn a timestamp or an ad slot on every visit (content unchanged). */
    churnShare: number;
  };
  /** Origin of simulated time (scaled clocks start here). */
  timeOriginMs: number;
  /**
   * An upstream plan's quota in front of the whole web (a proxy or scraping API): after this many
   * page requests (robots.txt exempt) every page request gets 429 with `header: exhausted`.
   * null = no quota. Counted per server process, so a restarted server has its quota restored.
   */
  quota: { afterRequests: number | null; header: string };
  /** Listing pages, feeds and sitemap indexes on a share of hosts (listings.ts). */
  listings: ListingsConfig;
  /** robots.txt outage windows and long Crawl-delays on chosen hosts (robots-faults.ts). */
  robotsOutages: RobotsOutageSpec[];
  crawlDelays: CrawlDelaySpec[];
  /** Opt-in name service (name-service.ts): per-domain loopback addresses and DNS faults; addresses 0 = off. */
  dns: DnsConfig;
  /** Host counts of the first domains (d0.test, d1.test, ...): hundreds of subdomain hosts each. Empty = none. */
  bigDomains: number[];
  /** A wildcard-DNS domain whose pages link to fresh random subdomains without end; null = none. */
  wildcardFarm: WildcardFarmConfig | null;
  /** Server limits: every queue and socket set is bounded. */
  limits: { maxConnections: number; maxHanging: number; compressCacheBytes: number; maxHeaderBytes: number };
}

const DAY = 86_400_000;

const ROBOTS_VARIETY: Record<RobotsKind, number> = {
  absent: 3, empty: 1, rules: 4, "agent-specific": 2, "crawl-delay": 1, sitemap: 2, large: 0.5,
  redirect: 1, "disallow-all": 0.4, "server-error": 0.4, unreachable: 0.3,
};

function behaviours(shares: Partial<Record<Behaviour, number>>): Record<Behaviour, number> {
  const out = {} as Record<Behaviour, number>;
  for (const b of BEHAVIOURS) out[b] = shares[b] ?? 0;
  return out;
}

export const DEFAULT_CONFIG: SimwebConfig = {
  seed: 1,
  hosts: 10_000,
  hostsPerDomain: [6, 2, 1, 0.5],
  httpsShare: 0.5,
  pagesPerHost: { min: 5, alpha: 0.55, max: 5_000_000 },
  hostPageCap: null,
  outDegree: { median: 40, sigma: 0.6, max: 400 },
  treeFanout: 6,
  crossHostShare: 0.12,
  unservedShare: 0.04,
  brokenShare: 0.01,
  nofollowShare: 0.05,
  metaNofollowShare: 0.03,
  metaNoindexShare: 0.05,
  baseHrefShare: 0.1,
  pageSize: { median: 138_000, mean: 242_000, min: 2_000, max: 8_000_000 },
  latin1Share: 0.15,
  robots: { ...ROBOTS_VARIETY },
  robotsAgentToken: "shardcrawl",
  robotsOutages: [],
  crawlDelays: [],
  dns: { ...DEFAULT_DNS, faults: [] },
  bigDomains: [],
  wildcardFarm: null,
  behaviours: behaviours({
    slow: 0.1, throttle: 0.05, flapping: 0.02, reset: 0.02, hang: 0.01, redirects: 0.1,
    "trap-calendar": 0.02, "trap-session": 0.02, "non-html": 0.1, huge: 0.01, compress: 0.5,
    "wrong-charset": 0.03, bomb: 0.005, validators: 0.6,
  }),
  slow: { medianMs: 300, sigma: 0.8, maxMs: 10_000 },
  throttle: { maxConcurrency: [1, 2, 4], ratePerSec: [1, 2, 5, 10], retryAfterSec: [1, 2, 5] },
  flapping: { windowMs: 20_000, downShare: 0.3 },
  resetShare: 0.1,
  hangShare: 0.05,
  hangMs: 120_000,
  huge: { share: 0.02, minBytes: 5_000_000, maxBytes: 40_000_000 },
  nonHtmlShare: 0.15,
  bombBytes: 256 * 1024 * 1024,
  change: { staticShare: 0.3, minIntervalMs: DAY / 4, maxIntervalMs: 365 * DAY, churnShare: 0.1 },
  timeOriginMs: Date.UTC(2025, 0, 1),
  quota: { afterRequests: null, header: "x-upstream-quota" },
  listings: DEFAULT_LISTINGS,
  limits: { maxConnections: 20_000, maxHanging: 2_000, compressCacheBytes: 64 * 1024 * 1024, maxHeaderBytes: 16 * 1024 },
};

export type PresetName = "default" | "polite" | "hostile" | "tiny";

const NO_HOSTILITY: Partial<Record<Behaviour, number>> = Object.fromEntries(HOSTILE_BEHAVIOURS.map((b) => [b, 0]));

export const presets: Record<PresetName, Partial<SimwebConfig>> = {
  default: {},
  polite: {
    hosts: 1_000,
    httpsShare: 0,
    behaviours: behaviours({ ...NO_HOSTILITY, compress: 0.5, validators: 0.6 }),
  },
  hostile: {
    hosts: 1_000,
    behaviours: behaviours({
      slow: 0.4, throttle: 0.3, flapping: 0.2, reset: 0.2, hang: 0.1, redirects: 0.4,
      "trap-calendar": 0.2, "trap-session": 0.2, "non-html": 0.3, huge: 0.1, compress: 0.6,
      "wrong-charset": 0.2, bomb: 0.1, validators: 0.5,
    }),
  },
  tiny: {
    hosts: 20,
    pagesPerHost: { min: 5, alpha: 1.0, max: 150 },
    outDegree: { median: 12, sigma: 0.4, max: 40 },
    pageSize: { median: 9_000, mean: 10_000, min: 5_000, max: 20_000 },
    behaviours: behaviours({ ...NO_HOSTILITY, compress: 0.5, validators: 0.6 }),
  },
};

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** Deep merge of plain objects; arrays and scalars replace. */
function merge<T>(base: T, over: unknown): T {
  if (!isObject(base) || !isObject(over)) return (over === undefined ? base : over) as T;
  const out: Record<string, unknown> = { ...base };
  for (const [k, v] of Object.entries(over)) {
    if (v === undefined) continue;
    out[k] = k in base ? merge((base as Record<string, unknown>)[k], v) : v;
  }
  return out as T;
}

export class ConfigError extends Error {}

/** Builds a full config from a preset name (default "default") and overrides; validates it. */
export function makeConfig(overrides: Partial<SimwebConfig> & { preset?: string } = {}): SimwebConfig {
  const { preset = "default", ...rest } = overrides;
  if (!(preset in presets)) throw new ConfigError(`unknown preset "${preset}" (known: ${Object.keys(presets).join(", ")})`);
  const withPreset = merge(structuredClone(DEFAULT_CONFIG), presets[preset as PresetName]);
  const cfg = merge(withPreset, rest);
  validate(cfg);
  return cfg;
}

function validate(c: SimwebConfig): void {
  const fail = (msg: string): never => {
    throw new ConfigError(`invalid simweb config: ${msg}`);
  };
  if (!Number.isInteger(c.seed)) fail("seed must be an integer");
  if (!Number.isInteger(c.hosts) || c.hosts < 1 || c.hosts > 10_000_000) fail("hosts must be an integer in 1..10,000,000");
  if (c.hostsPerDomain.length < 1 || c.hostsPerDomain.length > 8) fail("hostsPerDomain needs 1..8 weights");
  for (const [name, v] of [["httpsShare", c.httpsShare], ["crossHostShare", c.crossHostShare], ["unservedShare", c.unservedShare], ["nofollowShare", c.nofollowShare], ["latin1Share", c.latin1Share]] as const) {
    if (!(v >= 0 && v <= 1)) fail(`${name} must be in [0,1]`);
  }
  if (c.crossHostShare + c.unservedShare + c.brokenShare > 0.9) fail("crossHostShare + unservedShare + brokenShare must leave room for same-host links");
  const ps = c.pageSize;
  if (!(ps.min > 0 && ps.min <= ps.median && ps.median <= ps.mean && ps.mean <= ps.max)) fail("pageSize needs 0 < min <= median <= mean <= max");
  const pp = c.pagesPerHost;
  if (!(pp.min >= 1 && pp.alpha > 0 && pp.max >= pp.min && pp.max <= 500_000_000)) fail("pagesPerHost needs min >= 1, alpha > 0, min <= max <= 500,000,000");
  if (c.hostPageCap !== null && !(Number.isInteger(c.hostPageCap) && c.hostPageCap >= 1)) fail("hostPageCap must be null or a positive integer");
  if (!(c.treeFanout >= 2 && c.treeFanout <= 64)) fail("treeFanout must be in 2..64");
  if (!(c.outDegree.median >= 0 && c.outDegree.max >= 0)) fail("outDegree must be non-negative");
  if (c.outDegreeFrom !== undefined && c.outDegreeFrom !== "lognormal" && c.outDegreeFrom !== "real") fail('outDegreeFrom must be "lognormal" or "real"');
  for (const b of BEHAVIOURS) if (!(c.behaviours[b] >= 0 && c.behaviours[b] <= 1)) fail(`behaviours.${b} must be in [0,1]`);
  if (!/^[a-z0-9_-]+$/i.test(c.robotsAgentToken)) fail("robotsAgentToken must be a product token");
  validateRobotsFaults(c, c.hosts, fail);
  validateDns(c.dns, c.wildcardFarm, c.hosts, fail);
  if (!Array.isArray(c.bigDomains) || c.bigDomains.some((n) => !(Number.isInteger(n) && n >= 1 && n <= 100_000))) fail("bigDomains must be a list of host counts in 1..100,000");
  if (c.change.minIntervalMs <= 0 || c.change.maxIntervalMs < c.change.minIntervalMs) fail("change intervals must satisfy 0 < min <= max");
  if (c.quota.afterRequests !== null && !(Number.isInteger(c.quota.afterRequests) && c.quota.afterRequests >= 0)) fail("quota.afterRequests must be null or an integer >= 0");
  if (!/^[a-z0-9-]+$/i.test(c.quota.header)) fail("quota.header must be a header name");
  const l = c.listings;
  if (!(l.hostShare >= 0 && l.hostShare <= 1 && l.visibleShare >= 0 && l.visibleShare <= 1 && l.itemsPerListing >= 1 && l.lagMs >= 0 && l.feedEntries >= 1 && l.feedScan >= 1)) fail("listings: shares in [0,1], itemsPerListing, feedEntries and feedScan >= 1, lagMs >= 0");
  if (c.throttle.maxConcurrency.length === 0 || c.throttle.ratePerSec.length === 0 || c.throttle.retryAfterSec.length === 0) fail("throttle lists must not be empty");
}
