// The configuration of one node, from CLI flags or a config file. Everything a child process needs
// travels to it as this JSON (in an environment variable), so children never re-parse flags.
import { availableParallelism } from "node:os";
import { validateShardConfig, type ShardConfig } from "../shard/shard-spec.js";

export type Scope = "domains" | "hosts" | "any";

export interface NodeConfig {
  /** Output folder: warc/, pages/, redis/ (when we start Redis), status files. */
  out: string;
  /** Seed file (one URL per line, blank lines and # comments ignored). */
  seeds?: string;
  /** Redis URL; when absent the node starts its own redis-server under out/redis. */
  redis?: string;
  /** Key prefix in Redis, so a shared Redis could hold several crawls (default "sc:"). */
  prefix: string;
  maxPages?: number;
  delayMs: number;
  /**
   * Added to every politeness gap. Timers fire late on busy machines and a server may log a
   * response's end after the bytes left it: the margin keeps the gap the server sees >= delay.
   */
  politenessMarginMs: number;
  /** Upper bound for robots.txt Crawl-delay (ms). */
  maxCrawlDelayMs: number;
  hostConcurrency: number;
  userAgent: string;
  connectTo: string[];
  resolve: string[];
  allowPrivate: boolean;
  scope: Scope;
  caFile?: string;
  maxPageBytes: number;
  maxDecodedBytes: number;
  fetchers: number;
  parsers: number;
  /** Worker threads per parser process (piscina). */
  parserThreads: number;
  /** Requests in flight per fetcher process. */
  fetcherConcurrency: number;
  timeouts: { connectMs: number; headersMs: number; bodyMs: number; totalMs: number };
  leaseTtlMs: number;
  /** Bloom filter sizing. */
  expectedUrls: number;
  falsePositiveRate: number;
  /** Parse queue bound, in pages. */
  parseQueueMax: number;
  maxRedirects: number;
  maxUrlLength: number;
  maxLinksPerPage: number;
  honourNofollow: boolean;
  warcMaxFileBytes: number;
  warcGzipLevel: number;
  /** Exit when the frontier drains (crawl) or keep running (node). */
  exitWhenDone: boolean;
  /** HTTP port for /metrics and /status on 127.0.0.1 (0 = any free port). */
  statusPort: number;
  statusBind: string;
  /** Terminal progress: "auto" shows it on a TTY only. */
  progress: "auto" | "on" | "off";
  nodeName: string;
  /**
   * Cluster membership: when set, this node crawls only hosts whose shard key it owns; seeds of
   * other nodes are counted and skipped (every node reads the same seed list), and links owned by
   * other nodes go to out/outbox/<node>/ for exchange.
   */
  shard?: ShardConfig;
  /** Outbox files rotate beyond this many compressed bytes. */
  outboxMaxFileBytes: number;
  /** Outbox files are finished (made exchangeable) at the latest this long after they were opened. */
  outboxMaxFileAgeMs: number;
  /** Entries per generation of each parser's outbox duplicate filter. */
  outboxDedupEntries: number;
  /** How often a running node looks for files in out/inbox/ to ingest (ms). */
  inboxPollMs: number;
  /** maxmemory of the Redis the node starts itself (0 = no limit); keep it well under RAM. */
  redisMaxMemoryBytes: number;
}

export const DEFAULT_USER_AGENT = "shardcrawl/0.1 (+https://github.com/shardcrawl/shardcrawl)";

export function defaultConfig(): NodeConfig {
  const cores = Math.max(1, availableParallelism());
  return {
    out: "out",
    prefix: "sc:",
    delayMs: 1000,
    politenessMarginMs: 50,
    maxCrawlDelayMs: 60_000,
    hostConcurrency: 1,
    userAgent: DEFAULT_USER_AGENT,
    connectTo: [],
    resolve: [],
    allowPrivate: false,
    scope: "domains",
    maxPageBytes: 2 * 1024 * 1024,
    maxDecodedBytes: 8 * 1024 * 1024,
    // Roughly the reference shape (9 fetchers : 6 parsers per 16 vCPU), never fewer than one each.
    fetchers: Math.max(1, Math.round(cores * 0.5)),
    parsers: Math.max(1, Math.round(cores * 0.4)),
    parserThreads: 1,
    fetcherConcurrency: 256,
    timeouts: { connectMs: 10_000, headersMs: 15_000, bodyMs: 15_000, totalMs: 60_000 },
    leaseTtlMs: 120_000,
    expectedUrls: 10_000_000,
    falsePositiveRate: 0.01,
    parseQueueMax: 256,
    maxRedirects: 5,
    maxUrlLength: 2048,
    maxLinksPerPage: 10_000,
    honourNofollow: true,
    warcMaxFileBytes: 1024 * 1024 * 1024,
    warcGzipLevel: 6,
    exitWhenDone: true,
    statusPort: 0,
    statusBind: "127.0.0.1",
    progress: "auto",
    nodeName: "node0",
    outboxMaxFileBytes: 64 * 1024 * 1024,
    outboxDedupEntries: 500_000,
    outboxMaxFileAgeMs: 300_000,
    inboxPollMs: 2000,
    redisMaxMemoryBytes: 0,
  };
}

/** Checks a config for values that cannot work, with messages that name the key. */
export function validateConfig(c: NodeConfig): string[] {
  const errors: string[] = [];
  const positiveInts: Array<keyof NodeConfig> = [
    "hostConcurrency", "fetchers", "parsers", "parserThreads", "fetcherConcurrency", "maxPageBytes",
    "maxDecodedBytes", "leaseTtlMs", "expectedUrls", "parseQueueMax", "maxUrlLength", "maxLinksPerPage",
    "warcMaxFileBytes", "outboxMaxFileBytes", "outboxDedupEntries", "outboxMaxFileAgeMs", "inboxPollMs",
  ];
  for (const k of positiveInts) {
    const v = c[k];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1) errors.push(`${k}: expected a positive integer, got ${JSON.stringify(v)}`);
  }
  if (!Number.isFinite(c.politenessMarginMs) || c.politenessMarginMs < 0) errors.push(`politenessMarginMs: expected milliseconds >= 0, got ${c.politenessMarginMs}`);
  if (!Number.isFinite(c.delayMs) || c.delayMs < 0) errors.push(`delay: expected milliseconds >= 0, got ${c.delayMs}`);
  if (c.maxPages !== undefined && (!Number.isInteger(c.maxPages) || c.maxPages < 1)) errors.push(`max-pages: expected a positive integer, got ${c.maxPages}`);
  if (!(c.falsePositiveRate > 0 && c.falsePositiveRate < 0.5)) errors.push(`falsePositiveRate: expected 0 < p < 0.5, got ${c.falsePositiveRate}`);
  if (!["domains", "hosts", "any"].includes(c.scope)) errors.push(`scope: expected domains, hosts or any, got ${JSON.stringify(c.scope)}`);
  if (!c.userAgent.trim()) errors.push("user-agent: must not be empty");
  if (c.warcGzipLevel < 0 || c.warcGzipLevel > 9) errors.push(`warcGzipLevel: expected 0..9, got ${c.warcGzipLevel}`);
  if (c.maxRedirects < 0) errors.push(`maxRedirects: expected >= 0, got ${c.maxRedirects}`);
  for (const [k, v] of Object.entries(c.timeouts)) {
    if (!(typeof v === "number" && v > 0)) errors.push(`timeouts.${k}: expected milliseconds > 0, got ${JSON.stringify(v)}`);
  }
  if (c.shard) errors.push(...validateShardConfig(c.shard));
  return errors;
}

export const CONFIG_ENV = "SHARDCRAWL_CONFIG";
