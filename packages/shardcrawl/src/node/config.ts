// The configuration of one node, from CLI flags or a config file. Everything a child process needs
// travels to it as this JSON (in an environment variable), so children never re-parse flags.
import { DEFAULT_STRIP_PARAMS, ParamStripper } from "../url/strip-params.js";
import { parseMinFreeDisk } from "./disk-space.js";
import { availableParallelism } from "node:os";
import { validateShardConfig, type ShardConfig } from "../shard/shard-spec.js";
import { buildUrlFilters } from "../frontier/url-filters.js";
import { validateRecrawlConfig, type RecrawlNodeConfig } from "./recrawl-config.js";
import type { QueueSizing } from "./queue-sizing.js";
import { checkPriorityRules, type PriorityRule } from "../schedule/priority.js";
import { validateLogSettings } from "./node-logger.js";
import { checkDnsServers } from "../fetch/dns-servers.js";

export type Scope = "domains" | "hosts" | "any";

export interface NodeConfig {
  /** Output folder: warc/, pages/, redis/ (when we start Redis), status files. */
  out: string;
  /** Seed file (one URL per line, blank lines and # comments ignored). */
  seeds?: string;
  /** Redis URL; when absent the node starts its own redis-server under out/redis. */
  redis?: string;
  /** Data folder of the node's own redis-server, e.g. on its own volume ("" = out/redis; else out/redis links to it). */
  redisDir: string;
  /** Free space of the output disk below which leasing pauses: "5%" or bytes ("2G"); "0" = only on ENOSPC (node/disk-space.ts). */
  minFreeDisk: string;
  /** Command run with each closed WARC, CDXJ and page-log file as its argument; exit 0 = shipped ("" = none; node/file-shipper.ts). */
  onFileClosed: string;
  /** Remove a file once onFileClosed shipped it. */
  deleteShipped: boolean;
  /** Key prefix in Redis, so a shared Redis could hold several crawls (default "sc:"). */
  prefix: string;
  maxPages?: number;
  delayMs: number;
  /**
   * Added to every politeness gap. Timers fire late on busy machines and a server may log a
   * response's end after the bytes left it: the margin keeps the gap the server sees >= delay.
   */
  politenessMarginMs: number;
  /** robots.txt Crawl-delay is honoured up to this (ms); a host asking for more is skipped (crawl-delay-too-long). */
  maxCrawlDelayMs: number;
  /** robots.txt outage back-off: first wait, doubling up to the max (ms); fetch/robots-outage.ts. */
  robotsBackoffBaseMs: number;
  robotsBackoffMaxMs: number;
  /** After robots.txt has been unreachable this long, use the last cached copy if any (RFC 9309 2.3.1.4). */
  robotsOutageMaxMs: number;
  /** A crawl whose only work left is hosts waiting out a robots.txt outage ends after this long (reporting them deferred). */
  maxDeferWaitMs: number;
  /** Optional From header (an e-mail address for the site owner to reach the operator); "" = none. */
  fromHeader: string;
  hostConcurrency: number;
  /**
   * What one politeness clock (delay, Crawl-delay, AIMD back-off) and one in-flight limit cover:
   * each "host", or each registrable "domain" across all its hosts (default).
   */
  politenessKey: "host" | "domain";
  /** Requests in flight to one IP address (the address connected to) across the node; 0 = no limit (node/ip-slots.ts). */
  ipConcurrency: number;
  /** The site owners' opt-out list loaded at start ("" = none; node/exclude-file.ts). */
  excludeFile: string;
  userAgent: string;
  connectTo: string[];
  resolve: string[];
  /** DNS servers ("ip" or "ip:port") asked instead of the system resolver (getaddrinfo); empty = system. */
  dnsServers: string[];
  /** Record TTLs (from --dns-server answers) are clamped to [dnsMinTtlMs, dnsMaxTtlMs]. */
  dnsMinTtlMs: number;
  dnsMaxTtlMs: number;
  /** Resolver calls in flight at once per fetcher; more wait in a bounded queue. */
  dnsConcurrency: number;
  allowPrivate: boolean;
  scope: Scope;
  caFile?: string;
  maxPageBytes: number;
  /**
   * After a cut at maxPageBytes, read and drop up to this many more bytes to keep the connection
   * for the host's next request (only for hosts whose delay is under the keep-alive time); 0: stop at the cut.
   */
  cutDrainBytes: number;
  maxDecodedBytes: number;
  fetchers: number;
  parsers: number;
  /** Worker threads per parser process (piscina); 0 parses on the process's main thread. */
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
  /** Parse stage bound in body bytes (queued or being parsed; 0 = none). Size it as rate x accepted wait x mean page size. */
  parseQueueMaxBytes: number;
  maxRedirects: number;
  maxUrlLength: number;
  maxLinksPerPage: number;
  honourNofollow: boolean;
  warcMaxFileBytes: number;
  warcGzipLevel: number;
  /** Files written beside each WARC file and rotated with it (docs/outputs.md): WET text, WAT metadata, Parquet capture index. */
  derivatives: Derivative[];
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
  // --- flow control: queue bounds, retries, shedding, upstream limits ---
  /** Attempts per URL in total, first included (1 = no retries). */
  retryMaxAttempts: number;
  /** Retry back-off: full jitter in [0, min(retryCapMs, retryBaseMs * 2^attempt)]. */
  retryBaseMs: number;
  retryCapMs: number;
  /** Retry-After (seconds or a date) is honoured up to this. */
  maxRetryAfterMs: number;
  /** Per-host AIMD: floor, additive increase per window, multiplicative decrease, latency signal, probe interval, delay multiplier cap. */
  aimdFloor: number;
  aimdIncrease: number;
  aimdDecrease: number;
  aimdLatencyFactor: number;
  aimdLatencyMinMs: number;
  aimdProbeMs: number;
  aimdMaxDelayMultiplier: number;
  /** Lease TTL = clamp(percentile of recent fetch times x 2, leaseTtlFloorMs, leaseTtlMs). */
  leaseTtlPercentile: number;
  leaseTtlFloorMs: number;
  /** Queue caps: per host and for the whole frontier (URLs). */
  maxQueuedPerHost: number;
  maxQueuedTotal: number;
  /** Past a cap the lowest-priority URLs are dropped (counted) or spilled to out/spill/ and re-admitted later. */
  shedMode: "drop" | "spill";
  /** Redis used_memory budget in bytes (0 = none): the memory governor lowers the total cap near it. */
  redisMemoryBudgetBytes: number;
  /** URLs ever admitted per host (spider-trap defence; 0 = none). */
  hostPageBudget: number;
  /** Hosts admitted per registrable domain (wildcard-DNS host farms; 0 = none). */
  maxHostsPerDomain: number;
  /** Session-id and tracking parameters removed from URLs (url/strip-params.ts; [] = none). */
  stripParams: string[];
  /** URL filter chain applied where links are queued, e.g. ["max-path-depth=16"] (frontier/url-filters.ts). */
  urlFilters: string[];
  /** Requests in flight across the node: our upstream plan's concurrency cap (0 = none). */
  globalConcurrency: number;
  /** A response header marking a 429 as our upstream plan's limit (pauses all fetching; "" = none). */
  upstreamLimitHeader: string;
  /** A response header saying our upstream quota is exhausted (stops fetching; "" = none). */
  upstreamQuotaHeader: string;
  /** Continuous mode (node/recrawl-config.ts): revisit fetched pages within a budget. */
  recrawl?: RecrawlNodeConfig;
  /**
   * Queue sizing (node/queue-sizing.ts): with a target rate, the parse queue (pages, bytes) and the
   * parsers' write buffers are derived as rate x accepted wait (x typical page size), unless set explicitly.
   */
  targetPagesPerSec: number;
  acceptedWaitMs: number;
  typicalPageBytes: number;
  /** Per parser: output bytes (WARC, page log, outbox) not yet on disk; past it the parser takes no new pages. */
  writeBufferBytes: number;
  /** Where each queue bound came from (set when the config is built; shown in summary.json and /status). */
  queueSizing?: QueueSizing;
  /** URL priority rules, first match wins: [{pattern (a regular expression on the URL), priority (tier 0 = first)}]. */
  priorityRules: PriorityRule[];
  /** Structured logs (node/node-logger.ts): pino level, file size that triggers a roll, rotated files kept per process. */
  logLevel: "trace" | "debug" | "info" | "warn" | "error" | "fatal" | "silent";
  logMaxBytes: number;
  logFiles: number;
}

export const DEFAULT_USER_AGENT = "shardcrawl/0.1 (+https://github.com/shardcrawl/shardcrawl)";

export function defaultConfig(): NodeConfig {
  const cores = Math.max(1, availableParallelism());
  return {
    out: "out",
    prefix: "sc:",
    delayMs: 1000,
    politenessMarginMs: 50,
    maxCrawlDelayMs: 300_000,
    robotsBackoffBaseMs: 60_000,
    robotsBackoffMaxMs: 6 * 3600_000,
    robotsOutageMaxMs: 30 * 24 * 3600_000,
    maxDeferWaitMs: 120_000,
    fromHeader: "",
    hostConcurrency: 1,
    politenessKey: "domain",
    excludeFile: "",
    ipConcurrency: 0,
    userAgent: DEFAULT_USER_AGENT,
    connectTo: [],
    resolve: [],
    dnsServers: [],
    dnsMinTtlMs: 30_000,
    dnsMaxTtlMs: 3600_000,
    dnsConcurrency: 64,
    allowPrivate: false,
    scope: "domains",
    maxPageBytes: 2 * 1024 * 1024,
    cutDrainBytes: 512 * 1024,
    maxDecodedBytes: 8 * 1024 * 1024,
    // Roughly the reference shape (9 fetchers : 6 parsers per 16 vCPU), never fewer than one each.
    fetchers: Math.max(1, Math.round(cores * 0.5)),
    parsers: Math.max(1, Math.round(cores * 0.4)),
    // Parsing on each parser's main thread costs less CPU per page than a one-thread pool
    // (no task and result cloning, no thread wake-ups; CHANGELOG.md, third pass): scale with parsers instead.
    parserThreads: 0,
    fetcherConcurrency: 256,
    timeouts: { connectMs: 10_000, headersMs: 15_000, bodyMs: 15_000, totalMs: 60_000 },
    leaseTtlMs: 120_000,
    expectedUrls: 10_000_000,
    falsePositiveRate: 0.01,
    parseQueueMax: 256,
    parseQueueMaxBytes: 256 * 1024 * 1024,
    maxRedirects: 5,
    maxUrlLength: 2048,
    maxLinksPerPage: 10_000,
    honourNofollow: true,
    warcMaxFileBytes: 1024 * 1024 * 1024,
    // Level 1: half the CPU of level 6 for ~13% more WARC bytes (htmlparser-benchmark pages: 157 vs
    // 80 MB/s, 24.5% vs 21.6% of raw size).
    warcGzipLevel: 1,
    derivatives: [],
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
    retryMaxAttempts: 3,
    retryBaseMs: 1000,
    retryCapMs: 60_000,
    maxRetryAfterMs: 300_000,
    aimdFloor: 1,
    aimdIncrease: 0.1,
    aimdDecrease: 0.5,
    aimdLatencyFactor: 5,
    aimdLatencyMinMs: 2000,
    aimdProbeMs: 60_000,
    aimdMaxDelayMultiplier: 16,
    leaseTtlPercentile: 0.99,
    leaseTtlFloorMs: 15_000,
    maxQueuedPerHost: 1_000_000,
    maxQueuedTotal: 100_000_000,
    shedMode: "drop",
    redisMemoryBudgetBytes: 0,
    // Trap defences on by default: a host's budget is far above what a polite crawl fetches from
    // one host in a day (about 1,200 pages at 70 s), and real sites rarely have 1,000 hostnames
    // under one registrable domain that is not a public suffix (PSL-listed hosting platforms are).
    hostPageBudget: 100_000,
    maxHostsPerDomain: 1_000,
    stripParams: [...DEFAULT_STRIP_PARAMS],
    urlFilters: ["max-path-depth=32", "max-repeated-segment=4", "max-query-params=12"],
    globalConcurrency: 0,
    upstreamLimitHeader: "",
    upstreamQuotaHeader: "",
    targetPagesPerSec: 0,
    acceptedWaitMs: 2000,
    typicalPageBytes: 256 * 1024,
    writeBufferBytes: 64 * 1024 * 1024,
    redisDir: "",
    // Room for what is fetched but not written yet (parse stage bytes, write buffers) and the
    // Redis AOF when it shares the disk; 2% of a 3.75 TB NVMe is 75 GB.
    minFreeDisk: "2%",
    onFileClosed: "",
    deleteShipped: false,
    priorityRules: [],
    logLevel: "info",
    logMaxBytes: 10 * 1024 * 1024,
    logFiles: 5,
  };
}

/** Checks a config for values that cannot work, with messages that name the key. */
export function validateConfig(c: NodeConfig): string[] {
  const errors: string[] = [];
  const positiveInts: Array<keyof NodeConfig> = [
    "hostConcurrency", "fetchers", "parsers", "fetcherConcurrency", "maxPageBytes",
    "maxDecodedBytes", "leaseTtlMs", "expectedUrls", "parseQueueMax", "maxUrlLength", "maxLinksPerPage",
    "warcMaxFileBytes", "outboxMaxFileBytes", "outboxDedupEntries", "outboxMaxFileAgeMs", "inboxPollMs",
    "acceptedWaitMs", "typicalPageBytes", "writeBufferBytes",
  ];
  for (const k of positiveInts) {
    const v = c[k];
    if (typeof v !== "number" || !Number.isInteger(v) || v < 1) errors.push(`${k}: expected a positive integer, got ${JSON.stringify(v)}`);
  }
  if (!Number.isInteger(c.parserThreads) || c.parserThreads < 0) errors.push(`parserThreads: expected an integer >= 0, got ${JSON.stringify(c.parserThreads)}`);
  if (!Number.isFinite(c.politenessMarginMs) || c.politenessMarginMs < 0) errors.push(`politenessMarginMs: expected milliseconds >= 0, got ${c.politenessMarginMs}`);
  if (!Number.isFinite(c.delayMs) || c.delayMs < 0) errors.push(`delay: expected milliseconds >= 0, got ${c.delayMs}`);
  if (!Number.isSafeInteger(c.cutDrainBytes) || c.cutDrainBytes < 0) errors.push(`cutDrainBytes: expected an integer >= 0, got ${JSON.stringify(c.cutDrainBytes)}`);
  if (c.maxPages !== undefined && (!Number.isInteger(c.maxPages) || c.maxPages < 1)) errors.push(`max-pages: expected a positive integer, got ${c.maxPages}`);
  if (!(c.falsePositiveRate > 0 && c.falsePositiveRate < 0.5)) errors.push(`falsePositiveRate: expected 0 < p < 0.5, got ${c.falsePositiveRate}`);
  if (!["domains", "hosts", "any"].includes(c.scope)) errors.push(`scope: expected domains, hosts or any, got ${JSON.stringify(c.scope)}`);
  if (!c.userAgent.trim()) errors.push("user-agent: must not be empty");
  for (const k of ["robotsBackoffBaseMs", "robotsBackoffMaxMs", "robotsOutageMaxMs"] as const) {
    if (!Number.isSafeInteger(c[k]) || c[k] < 1) errors.push(`${k}: expected milliseconds >= 1, got ${JSON.stringify(c[k])}`);
  }
  if (!Number.isSafeInteger(c.maxDeferWaitMs) || c.maxDeferWaitMs < 0) errors.push(`maxDeferWaitMs: expected milliseconds >= 0, got ${JSON.stringify(c.maxDeferWaitMs)}`);
  if (c.robotsBackoffMaxMs < c.robotsBackoffBaseMs) errors.push(`robotsBackoffMaxMs (${c.robotsBackoffMaxMs}) must not be below robotsBackoffBaseMs (${c.robotsBackoffBaseMs})`);
  if (typeof c.fromHeader !== "string" || (c.fromHeader !== "" && !/^[^\s@<>]+@[^\s@<>]+$/.test(c.fromHeader.trim()))) errors.push(`from: expected an e-mail address, got ${JSON.stringify(c.fromHeader)}`);
  if (c.warcGzipLevel < 0 || c.warcGzipLevel > 9) errors.push(`warcGzipLevel: expected 0..9, got ${c.warcGzipLevel}`);
  if (!Array.isArray(c.derivatives) || c.derivatives.some((d) => !DERIVATIVES.includes(d))) errors.push(`derivatives: expected a list of ${DERIVATIVES.join(", ")}, got ${JSON.stringify(c.derivatives)}`);
  if (c.maxRedirects < 0) errors.push(`maxRedirects: expected >= 0, got ${c.maxRedirects}`);
  // A lease shorter than the slowest legitimate fetch would hand healthy work out twice.
  if (c.leaseTtlMs <= c.timeouts.totalMs) errors.push(`lease-ttl: must be longer than the fetch timeout (${c.timeouts.totalMs} ms), got ${c.leaseTtlMs}`);
  for (const k of ["retryMaxAttempts", "maxQueuedPerHost", "maxQueuedTotal", "aimdFloor", "aimdMaxDelayMultiplier", "leaseTtlFloorMs"] as const) {
    if (!Number.isInteger(c[k]) || c[k] < 1) errors.push(`${k}: expected a positive integer, got ${JSON.stringify(c[k])}`);
  }
  for (const k of ["targetPagesPerSec", "parseQueueMaxBytes", "retryBaseMs", "retryCapMs", "maxRetryAfterMs", "aimdLatencyFactor", "aimdLatencyMinMs", "aimdProbeMs", "redisMemoryBudgetBytes", "hostPageBudget", "maxHostsPerDomain", "globalConcurrency"] as const) {
    if (!Number.isFinite(c[k]) || c[k] < 0) errors.push(`${k}: expected a number >= 0, got ${JSON.stringify(c[k])}`);
  }
  if (!(c.aimdIncrease > 0)) errors.push(`aimdIncrease: expected > 0, got ${c.aimdIncrease}`);
  if (!(c.aimdDecrease > 0 && c.aimdDecrease < 1)) errors.push(`aimdDecrease: expected 0 < x < 1, got ${c.aimdDecrease}`);
  if (!(c.leaseTtlPercentile > 0 && c.leaseTtlPercentile <= 1)) errors.push(`leaseTtlPercentile: expected 0 < p <= 1, got ${c.leaseTtlPercentile}`);
  if (c.leaseTtlFloorMs > c.leaseTtlMs) errors.push(`leaseTtlFloorMs (${c.leaseTtlFloorMs}) must not exceed leaseTtlMs (${c.leaseTtlMs})`);
  if (!Number.isInteger(c.ipConcurrency) || c.ipConcurrency < 0) errors.push(`ipConcurrency: expected an integer >= 0, got ${JSON.stringify(c.ipConcurrency)}`);
  if (!["host", "domain"].includes(c.politenessKey)) errors.push(`politenessKey: expected host or domain, got ${JSON.stringify(c.politenessKey)}`);
  if (!["drop", "spill"].includes(c.shedMode)) errors.push(`shed: expected drop or spill, got ${JSON.stringify(c.shedMode)}`);
  if (!Array.isArray(c.urlFilters)) errors.push("urlFilters: expected a list of name=number strings");
  else {
    try {
      buildUrlFilters(c.urlFilters);
    } catch (err) {
      errors.push(`urlFilters: ${(err as Error).message}`);
    }
  }
  try {
    parseMinFreeDisk(c.minFreeDisk);
  } catch (err) {
    errors.push(`minFreeDisk: ${(err as Error).message}`);
  }
  if (c.deleteShipped && !c.onFileClosed) errors.push("deleteShipped: needs onFileClosed (--on-file-closed): only shipped files are removed");
  if (!Array.isArray(c.stripParams)) errors.push("stripParams: expected a list of parameter names");
  else {
    try {
      new ParamStripper(c.stripParams);
    } catch (err) {
      errors.push(`stripParams: ${(err as Error).message}`);
    }
  }
  errors.push(...checkPriorityRules(c.priorityRules).map((e) => `priorityRules: ${e}`));
  for (const [k, v] of Object.entries(c.timeouts)) {
    if (!(typeof v === "number" && v > 0)) errors.push(`timeouts.${k}: expected milliseconds > 0, got ${JSON.stringify(v)}`);
  }
  if (c.shard) errors.push(...validateShardConfig(c.shard));
  if (c.recrawl) errors.push(...validateRecrawlConfig(c.recrawl));
  errors.push(...validateLogSettings({ level: c.logLevel, maxBytes: c.logMaxBytes, files: c.logFiles }));
  errors.push(...checkDnsServers(c.dnsServers));
  if (!Number.isSafeInteger(c.dnsMinTtlMs) || c.dnsMinTtlMs < 0) errors.push(`dnsMinTtlMs: expected milliseconds >= 0, got ${JSON.stringify(c.dnsMinTtlMs)}`);
  if (!Number.isSafeInteger(c.dnsMaxTtlMs) || c.dnsMaxTtlMs < c.dnsMinTtlMs) errors.push(`dnsMaxTtlMs: expected milliseconds >= dnsMinTtlMs (${c.dnsMinTtlMs}), got ${JSON.stringify(c.dnsMaxTtlMs)}`);
  if (!Number.isSafeInteger(c.dnsConcurrency) || c.dnsConcurrency < 1) errors.push(`dnsConcurrency: expected an integer >= 1, got ${JSON.stringify(c.dnsConcurrency)}`);
  return errors;
}

export const CONFIG_ENV = "SHARDCRAWL_CONFIG";

/** Outputs derived from each WARC file: "wet" (text), "wat" (metadata JSON), "index" (Parquet capture index). */
export type Derivative = "wet" | "wat" | "index";
export const DERIVATIVES: readonly Derivative[] = ["wet", "wat", "index"];
