// The one description of a node's configuration: every key's type, default, bounds, the text users
// read, and the crawl flag that sets it. The NodeConfig type, config-file validation (with key
// paths), the crawl flags, the generated docs tables (docs/reference/) and the JSON Schema for YAML
// files (schema/*.schema.json) are all read from here.
//
// Adding a setting is one entry below: `key: setting(z.<type>().default(..), "what it does", flag(...))`
// (leave out flag() for a config-file-only key), then `pnpm docs:gen`.
//
// zod 4, because it gives the TypeScript type, defaults, validation with paths and JSON Schema
// (z.toJSONSchema) from one definition; metadata the CLI needs rides in a registry of our own.
import { z } from "zod";
import { availableParallelism } from "node:os";
import { DEFAULT_STRIP_PARAMS } from "../url/strip-params.js";

export const DEFAULT_USER_AGENT = "shardcrawl/0.1 (+https://github.com/shardcrawl/shardcrawl)";

/** Where a flag is listed in `crawl --help` and docs/reference/flags.md. */
export type FlagGroup = "crawl" | "flow control" | "logs" | "continuous re-crawl";

export interface FlagMeta {
  /** The crawl flag, without "--". */
  flag: string;
  /** Placeholder of the value in help ("ms", "n"); none for a boolean switch. */
  arg?: string;
  group: FlagGroup;
  /** Repeatable: each use adds one value. */
  multiple?: boolean;
  /** The flag's text to the config value, when it is not a plain integer, number or string. */
  parse?: (raw: string | string[], defaultValue: unknown) => unknown;
  /** Default as users should read it, when the value itself says it badly (machine-dependent, huge). */
  defaultText?: string;
}

/** Each setting's flag, looked up by its schema. */
export const FLAG_META = z.registry<FlagMeta>();

function setting<S extends z.ZodType>(schema: S, doc: string, flag?: FlagMeta): S {
  const described = schema.describe(doc);
  if (flag) FLAG_META.add(described, flag);
  return described;
}
const flag = (name: string, group: FlagGroup, arg?: string, more: Omit<FlagMeta, "flag" | "group" | "arg"> = {}): FlagMeta =>
  ({ flag: name, group, ...(arg === undefined ? {} : { arg }), ...more });

const int = (min = 0) => z.number().int().min(min);
const ms = (min = 0) => z.number().int().min(min);
const cores = () => Math.max(1, availableParallelism());
const DERIVATIVE_NAMES = ["wet", "wat", "index"] as const;
export type Derivative = (typeof DERIVATIVE_NAMES)[number];
export const DERIVATIVES: readonly Derivative[] = DERIVATIVE_NAMES;
export const LOG_LEVEL_NAMES = ["trace", "debug", "info", "warn", "error", "fatal", "silent"] as const;

/** "wet,wat,index", "all" or "none". */
export function parseDerivatives(value: string): Derivative[] {
  const v = value.trim().toLowerCase();
  if (v === "none" || v === "") return [];
  if (v === "all") return [...DERIVATIVES];
  const out: Derivative[] = [];
  for (const part of v.split(",").map((p) => p.trim())) {
    if (!DERIVATIVES.includes(part as Derivative)) throw new Error(`expected a list of ${DERIVATIVES.join(", ")} (or all, none), got ${JSON.stringify(value)}`);
    if (!out.includes(part as Derivative)) out.push(part as Derivative);
  }
  return out;
}

const timeouts = z.strictObject({
  connectMs: ms(1).default(10_000).describe("TCP (and TLS) connect"),
  headersMs: ms(1).default(15_000).describe("until the response headers"),
  bodyMs: ms(1).default(15_000).describe("body idle: longest gap between two body chunks"),
  totalMs: ms(1).default(60_000).describe("the whole fetch"),
});

/** The keys of a node config, in the order of `crawl --help`; config-file-only keys follow. */
export const NODE_CONFIG_SHAPE = {
  seeds: setting(z.string().optional(), "seed URLs, one per line (blank lines and # comments ignored)", flag("seeds", "crawl", "file")),
  out: setting(z.string().min(1).default("out"), "output folder (warc/, pages/, redis/); reuse it to resume a crawl", flag("out", "crawl", "dir")),
  maxPages: setting(int(1).optional(), "stop after n pages have been fetched", flag("max-pages", "crawl", "n")),
  delayMs: setting(ms().default(1000), "minimum gap between two requests to one host (ms)", flag("delay", "crawl", "ms")),
  hostConcurrency: setting(int(1).default(1), "requests in flight per host", flag("host-concurrency", "crawl", "n")),
  politenessKey: setting(z.enum(["host", "domain"]).default("domain"), "one delay clock and in-flight limit per registrable domain across its hosts, or per host", flag("politeness-key", "crawl", "host|domain")),
  ipConcurrency: setting(int().default(0), "requests in flight to one IP address (the address connected to) across all hosts and domains of the node; 0 = no limit", flag("ip-concurrency", "crawl", "n")),
  excludeFile: setting(z.string().default(""), "the site owners' opt-out list loaded at start: \"<domain|host|url-prefix> [reason]\" per line (see `shardcrawl exclude`; kept in the node's Redis); \"\" = none", flag("exclude-file", "crawl", "file")),
  maxCrawlDelayMs: setting(ms().default(300_000), "honour robots.txt Crawl-delay up to this (ms); a host asking for more is skipped, its URLs refused as crawl-delay-too-long", flag("max-crawl-delay", "crawl", "ms")),
  userAgent: setting(z.string().trim().min(1).default(DEFAULT_USER_AGENT), "sent on every request; its product token selects the robots.txt group; must hold your contact (an http(s) URL or e-mail address), else exit 78", flag("user-agent", "crawl", "string")),
  fromHeader: setting(z.union([z.literal(""), z.string().trim().regex(/^[^\s@<>]+@[^\s@<>]+$/, "expected an e-mail address")]).default(""), "send a From header with this address; \"\" = none", flag("from", "crawl", "e-mail")),
  robotsBackoffBaseMs: setting(ms(1).default(60_000), "robots.txt outage: first wait before trying robots.txt again (ms)", flag("robots-backoff-base", "crawl", "ms")),
  robotsBackoffMaxMs: setting(ms(1).default(6 * 3600_000), "... doubling up to this (ms); Retry-After is honoured", flag("robots-backoff-max", "crawl", "ms", { defaultText: "21600000 (6 h)" })),
  robotsOutageMaxMs: setting(ms(1).default(30 * 24 * 3600_000), "after robots.txt was unreachable this long, use the last cached copy if any (RFC 9309 2.3.1.4); else keep waiting", flag("robots-outage-max", "crawl", "ms", { defaultText: "2592000000 (30 days)" })),
  robotsCacheMaxBytes: setting(int().default(0), "bound on the robots.txt cache in Redis (bytes); the oldest entries are evicted and fetched again when needed (0: 256 MiB, or a quarter of --redis-memory-budget if that is less)", flag("robots-cache-max-bytes", "crawl", "b")),
  maxDeferWaitMs: setting(ms().default(120_000), "when only hosts waiting for robots.txt are left, end after this long with them reported as deferred (exit 0; rerun to continue them)", flag("max-defer-wait", "crawl", "ms")),
  connectTo: setting(z.array(z.string()).default([]), "curl's meaning (H1:P1:H2:P2); empty H1 or P1 matches any", flag("connect-to", "crawl", "H1:P1:H2:P2", { multiple: true })),
  resolve: setting(z.array(z.string()).default([]), "static DNS answer (host:port:addr)", flag("resolve", "crawl", "host:port:addr", { multiple: true })),
  dnsServers: setting(z.array(z.string()).default([]), "ask this DNS server (ip or ip:port) instead of the system resolver; empty = system", flag("dns-server", "crawl", "ip[:port]", { multiple: true })),
  dnsMinTtlMs: setting(ms().default(30_000), "shortest time a DNS answer is kept, whatever its record TTL (ms)", flag("dns-min-ttl", "crawl", "ms")),
  dnsMaxTtlMs: setting(ms().default(3600_000), "longest time a DNS answer is kept (ms); without a DNS server there is no record TTL and answers are kept 5 minutes", flag("dns-max-ttl", "crawl", "ms")),
  dnsConcurrency: setting(int(1).default(64), "DNS lookups in flight per fetcher; more wait in a bounded queue", flag("dns-concurrency", "crawl", "n")),
  allowPrivate: setting(z.boolean().default(false), "permit loopback and private destinations (refused by default)", flag("allow-private", "crawl")),
  scope: setting(z.enum(["domains", "hosts", "any"]).default("domains"), "stay inside the seeds' registrable domains, hosts, or go anywhere", flag("scope", "crawl", "domains|hosts|any")),
  caFile: setting(z.string().optional(), "an extra trusted CA (PEM file)", flag("ca-file", "crawl", "pem")),
  maxPageBytes: setting(int(1).default(2 * 1024 * 1024), "cut larger bodies while streaming and mark them truncated", flag("max-page-bytes", "crawl", "n")),
  cutDrainBytes: setting(int().default(512 * 1024), "after a cut, read and drop up to n more bytes to keep the connection (hosts with a delay under the 4 s keep-alive only; 0: close)", flag("cut-drain-bytes", "crawl", "n")),
  warcGzipLevel: setting(int().max(9).default(1), "WARC gzip level 0-9 (6 writes ~12% fewer bytes for ~2x the CPU)", flag("warc-gzip-level", "crawl", "0-9")),
  derivatives: setting(z.array(z.enum(DERIVATIVE_NAMES)).default([]), "files written beside each WARC file: wet, wat, index (Parquet); as a flag also \"all\" or \"none\" (docs/outputs.md)", flag("derivatives", "crawl", "list", { parse: (raw) => parseDerivatives(raw as string), defaultText: "none" })),
  timeouts: setting(timeouts.default({ connectMs: 10_000, headersMs: 15_000, bodyMs: 15_000, totalMs: 60_000 }), "fetch timeouts (ms): connectMs, headersMs, bodyMs (idle), totalMs; the flag sets totalMs and caps the others by it", flag("fetch-timeout", "crawl", "ms", {
    parse: (raw, d) => {
      const total = Number(raw);
      const t = d as z.output<typeof timeouts>;
      // Not a number: handed on as is, so the schema reports it against the key.
      if (!/^\d+$/.test(String(raw).trim())) return { ...t, totalMs: raw };
      return { connectMs: Math.min(t.connectMs, total), headersMs: Math.min(t.headersMs, total), bodyMs: Math.min(t.bodyMs, total), totalMs: total };
    },
    defaultText: "60000",
  })),
  // Roughly the reference shape (9 fetchers : 6 parsers per 16 vCPU), never fewer than one each.
  fetchers: setting(int(1).default(() => Math.max(1, Math.round(cores() * 0.5))), "fetcher processes", flag("fetchers", "crawl", "n", { defaultText: "half the cores" })),
  parsers: setting(int(1).default(() => Math.max(1, Math.round(cores() * 0.4))), "parser processes", flag("parsers", "crawl", "n", { defaultText: "0.4 x the cores" })),
  // Parsing on each parser's main thread costs less CPU per page than a one-thread pool (no task
  // and result cloning, no thread wake-ups; BENCHMARKS.md): scale with parsers instead.
  parserThreads: setting(int().default(0), "worker threads per parser process (0: parse on the main thread)", flag("parser-threads", "crawl", "n")),
  fetcherConcurrency: setting(int(1).default(256), "requests in flight per fetcher process", flag("fetcher-concurrency", "crawl", "n")),
  redis: setting(z.string().optional(), "use this Redis (URL) instead of starting one under the output folder", flag("redis", "crawl", "url")),
  leaseTtlMs: setting(ms(1).default(120_000), "a leased URL returns to its queue if not done by then (ms); must be longer than the fetch timeout", flag("lease-ttl", "crawl", "ms")),
  expectedUrls: setting(int(1).default(10_000_000), "Seen filter design capacity; past it the filter grows", flag("expected-urls", "crawl", "n")),
  statusPort: setting(int().max(65535).default(0), "/metrics and /status port (0: any free port)", flag("status-port", "crawl", "n")),
  progress: setting(z.enum(["auto", "on", "off"]).default("auto"), "live progress (auto: only on a terminal)", flag("progress", "crawl", "auto|on|off")),
  nodeName: setting(z.string().min(1).default("node0"), "node name in output file names and the shard hash", flag("name", "crawl", "node")),

  seenCacheEntries: setting(int(2).default(1_048_576 /* frontier/seen-cache.ts DEFAULT_SEEN_CACHE_ENTRIES */), "per parser process: URLs remembered as already in the seen filter, so their repeats on later pages never reach Redis (16 bytes each); a crawl's repeated links (every host's navigation) should fit", flag("seen-cache-entries", "flow control", "n")),
  parseQueueMax: setting(int(1).default(256), "parse queue bound in pages; fetchers stop leasing when it is full", flag("parse-queue-max", "flow control", "n")),
  parseQueueMaxBytes: setting(int().default(256 * 1024 * 1024), "parse stage bound in body bytes (queued or being parsed; 0 = none)", flag("parse-queue-max-bytes", "flow control", "b")),
  retryMaxAttempts: setting(int(1).default(3), "attempts per URL, first included (1 = no retries)", flag("retry-max-attempts", "flow control", "n")),
  retryBaseMs: setting(ms().default(1000), "retry back-off base (ms): full jitter in [0, min(cap, base x 2^attempt)]", flag("retry-base", "flow control", "ms")),
  maxRetryAfterMs: setting(ms().default(300_000), "honour Retry-After up to this (ms)", flag("max-retry-after", "flow control", "ms")),
  aimdProbeMs: setting(ms().default(60_000), "after a back-off, retry the limit that failed only after this (ms)", flag("aimd-probe", "flow control", "ms")),
  leaseTtlPercentile: setting(z.number().gt(0).max(1).default(0.99), "lease TTL from this percentile of fetch times x 2", flag("lease-ttl-percentile", "flow control", "p")),
  maxQueuedPerHost: setting(int(1).default(1_000_000), "URLs queued per host", flag("max-queued-per-host", "flow control", "n")),
  maxQueuedTotal: setting(int(1).default(100_000_000), "URLs queued in the frontier", flag("max-queued-total", "flow control", "n")),
  shedMode: setting(z.enum(["drop", "spill"]).default("drop"), "past a cap, drop lowest-priority URLs (counted) or spill them to out/spill/ and re-admit them later", flag("shed", "flow control", "drop|spill")),
  redisMemoryBudgetBytes: setting(int().default(0), "keep Redis used_memory under this many bytes (0 = none)", flag("redis-memory-budget", "flow control", "b")),
  // Trap defences on by default: a host's budget is far above what a polite crawl fetches from one
  // host in a day (about 1,200 pages at 70 s), and real sites rarely have 1,000 hostnames under one
  // registrable domain that is not a public suffix (PSL-listed hosting platforms are).
  hostPageBudget: setting(int().default(100_000), "URLs ever admitted per host; 0 = none", flag("host-page-budget", "flow control", "n")),
  maxHostsPerDomain: setting(int().default(1_000), "hosts admitted per registrable domain (wildcard-DNS farms); 0 = none", flag("max-hosts-per-domain", "flow control", "n")),
  stripParams: setting(z.array(z.string()).default([...DEFAULT_STRIP_PARAMS]), "URL parameters removed in normalization: names, prefix*, name:token (only session-like values); as a flag comma-separated, \"none\" for none (docs/traps.md)", flag("strip-params", "flow control", "list", {
    parse: (raw) => ((raw as string).trim() === "none" ? [] : (raw as string).split(",").map((x) => x.trim()).filter((x) => x !== "")),
    defaultText: "utm_*, gclid, fbclid, msclkid, jsessionid, phpsessid, sid:token, ...",
  })),
  urlFilters: setting(z.array(z.string()).default(["max-path-depth=32", "max-repeated-segment=4", "max-query-params=12"]), "spider-trap filters name=n (max-path-depth, max-repeated-segment, max-query-params, max-url-length); the flag is repeatable and replaces the defaults; \"none\" for no filters", flag("url-filter", "flow control", "name=n", {
    multiple: true,
    parse: (raw) => ((raw as string[]).includes("none") ? [] : raw),
  })),
  globalConcurrency: setting(int().default(0), "requests in flight across the node: our upstream plan's cap (0 = none)", flag("global-concurrency", "flow control", "n")),
  upstreamLimitHeader: setting(z.string().default(""), "a 429 carrying this header is our upstream plan's limit: pause all fetching (\"\" = none)", flag("upstream-limit-header", "flow control", "h")),
  upstreamQuotaHeader: setting(z.string().default(""), "a response carrying this header means our quota is exhausted: stop fetching (the crawl then ends with exit code 75; rerun with the same output folder to continue; \"\" = none)", flag("upstream-quota-header", "flow control", "h")),
  targetPagesPerSec: setting(z.number().min(0).default(0), "derive queue bounds as rate x accepted wait (parse queue pages and bytes, write buffers); explicit bounds still win (0 = off)", flag("target-pages-per-sec", "flow control", "r")),
  acceptedWaitMs: setting(ms(1).default(2000), "how long a page may wait in a queue at that rate (ms)", flag("accepted-wait", "flow control", "ms")),
  typicalPageBytes: setting(int(1).default(256 * 1024), "typical body size for the byte bounds", flag("typical-page-bytes", "flow control", "b")),
  // Room for what is fetched but not written yet (parse stage bytes, write buffers) and the Redis
  // AOF when it shares the disk; 2% of a 3.75 TB NVMe is 75 GB.
  minFreeDisk: setting(z.string().default("2%"), "pause leasing below this free space on the output disk: \"5%\" or bytes (\"2G\"); resumes at 1.5x; \"0\" = only when a write fails", flag("min-free-disk", "flow control", "p|b")),
  onFileClosed: setting(z.string().default(""), "run \"<cmd> <path>\" for each closed WARC, CDXJ and page-log file; exit 0 marks it shipped (out/shipped.log); failures retried with back-off (\"\" = none)", flag("on-file-closed", "flow control", "cmd")),
  deleteShipped: setting(z.boolean().default(false), "remove a file once the on-file-closed command shipped it", flag("delete-shipped", "flow control")),
  warcMaxFileBytes: setting(int(1).default(1024 * 1024 * 1024), "WARC and page-log files are closed (and shipped) at this size", flag("warc-max-file-bytes", "flow control", "b")),
  redisDir: setting(z.string().default(""), "data folder of the node's own redis-server (own volume); out/redis links to it (\"\" = out/redis)", flag("redis-dir", "flow control", "dir")),
  writeBufferBytes: setting(int(1).default(64 * 1024 * 1024), "per parser: output not yet on disk; past it the parser takes no new page", flag("write-buffer-bytes", "flow control", "b")),
  priorityRules: setting(z.array(z.strictObject({ pattern: z.string(), priority: z.number().int() })).default([]), "URLs matching the regular expression get priority tier t (0 = first, 3 = shed first); first match wins, before the depth/shape heuristic; the flag is t:regex and repeatable", flag("priority-rule", "flow control", "t:re", { multiple: true })),

  logLevel: setting(z.enum(LOG_LEVEL_NAMES).default("info"), "log level (JSON lines, pino, in <out>/logs/<role>[-<index>].<n>.log)", flag("log-level", "logs", "level")),
  logMaxBytes: setting(int(1).default(10 * 1024 * 1024), "roll a process's log file at this size", flag("log-max-bytes", "logs", "b")),
  logFiles: setting(int().default(5), "rotated files kept per process besides the active one", flag("log-files", "logs", "n")),

  // Config-file-only keys.
  prefix: setting(z.string().default("sc:"), "key prefix in Redis, so a shared Redis could hold several crawls"),
  politenessMarginMs: setting(z.number().min(0).default(50), "added to every politeness gap: timers fire late on busy machines and a server may log a response's end after the bytes left it, so the gap the server sees stays >= the delay (ms)"),
  maxDecodedBytes: setting(int(1).default(8 * 1024 * 1024), "cap on a body after content decoding (gzip, br)"),
  falsePositiveRate: setting(z.number().gt(0).lt(0.5).default(0.01), "Seen filter false-positive rate"),
  maxRedirects: setting(int().default(5), "redirects followed per URL"),
  maxUrlLength: setting(int(1).default(2048), "longer URLs are refused"),
  maxLinksPerPage: setting(int(1).default(10_000), "links taken from one page"),
  honourNofollow: setting(z.boolean().default(true), "skip links marked rel=nofollow and pages with a nofollow robots meta tag"),
  exitWhenDone: setting(z.boolean().default(true), "exit when the frontier drains (crawl) or keep running (default for `node --config` files: false)"),
  statusBind: setting(z.string().default("127.0.0.1"), "address /metrics and /status listen on (other than loopback needs SHARDCRAWL_STATUS_TOKEN)"),
  outboxMaxFileBytes: setting(int(1).default(64 * 1024 * 1024), "outbox files rotate beyond this many compressed bytes"),
  outboxMaxFileAgeMs: setting(ms(1).default(300_000), "outbox files are finished (made exchangeable) at the latest this long after they were opened (ms)"),
  outboxDedupEntries: setting(int(1).default(500_000), "entries per generation of each parser's outbox duplicate filter"),
  outboxGroupCommitMs: setting(ms().default(50), "a parser gathers each other node's links this long and writes them as one outbox member; its pages are acknowledged when that is written (ms; 0 = a write per page and node)"),
  inboxPollMs: setting(ms(1).default(2000), "how often a running node looks for files in out/inbox/ to ingest (ms)"),
  redisMaxMemoryBytes: setting(int().default(0), "maxmemory of the Redis the node starts itself (0 = no limit); keep it well under RAM"),
  retryCapMs: setting(ms().default(60_000), "retry back-off cap (ms)"),
  aimdFloor: setting(int(1).default(1), "per-host AIMD: lowest in-flight limit"),
  aimdIncrease: setting(z.number().gt(0).default(0.1), "per-host AIMD: additive increase per window"),
  aimdDecrease: setting(z.number().gt(0).lt(1).default(0.5), "per-host AIMD: multiplicative decrease"),
  aimdLatencyFactor: setting(z.number().min(0).default(5), "per-host AIMD: a response this many times slower than usual is a back-off signal"),
  aimdLatencyMinMs: setting(ms().default(2000), "per-host AIMD: ... and at least this slow (ms)"),
  aimdMaxDelayMultiplier: setting(int(1).default(16), "per-host AIMD: the delay grows at most this many times"),
  leaseTtlFloorMs: setting(ms(1).default(15_000), "the adaptive lease TTL never goes below this (ms)"),
};

/**
 * Continuous re-crawl (docs/recrawl.md): the `recrawl` section of a node config file, and the crawl
 * flags that fill it (they need --continuous). The rules files are loaded and checked by
 * schedule/recrawl/continuous-config.ts.
 */
export const RECRAWL_SHAPE = {
  continuous: setting(z.boolean().default(true), "keep fetched pages in a re-crawl schedule and revisit them within a budget; the node runs until stopped (SIGINT/SIGTERM)", flag("continuous", "continuous re-crawl", undefined, { defaultText: "off; on in a config file with a recrawl section" })),
  budget: setting(z.number().gt(0).default(1), "re-crawl budget, in the unit below (discovery, revisits, sitemaps, feeds, listings and robots.txt all spend it)", flag("recrawl-budget", "continuous re-crawl", "n")),
  unit: setting(z.enum(["fetches/s", "bytes/day", "credits/day"]).default("fetches/s"), "unit of the re-crawl budget", flag("recrawl-unit", "continuous re-crawl", "unit")),
  cycleMs: setting(ms(100).default(900_000), "re-crawl planning cycle (ms)", flag("recrawl-cycle", "continuous re-crawl", "ms")),
  objective: setting(z.enum(["freshness", "changes"]).default("freshness"), "keep copies fresh, or capture every change (fast-changing pages get more visits, bounded by politeness)", flag("recrawl-objective", "continuous re-crawl", "freshness|changes")),
  valueRules: setting(z.string().optional(), "JSON file {\"rules\":[{\"pattern\":\"re\",\"tier\":0}],\"defaultTier\":1,\"weights\":[4,2,1]}: value tiers of pages", flag("value-rules", "continuous re-crawl", "file")),
  contentRules: setting(z.string().optional(), "JSON file {\"strip\":[\"re\", ...]}: removed from the text before change detection", flag("content-rules", "continuous re-crawl", "file")),
  listingRules: setting(z.string().optional(), "JSON file {\"listings\":[{\"pattern\":\"re on the listing URL\",\"item\":\"re with (?<link>) and (?<summary>)\" or \"itemSelector\"/\"summarySelector\",\"revisitMs\":n}]}: listing pages read as change detectors; only items whose summary changed are fetched early", flag("listing-rules", "continuous re-crawl", "file")),
};

/** Parts of a node config with their own modules' validation (shard membership, continuous mode). */
const EXTERNAL_PARTS = {
  shard: z.looseObject({}).optional().describe("cluster membership {self, nodes, key}; set by --shard or the cluster file"),
  recrawl: z.strictObject(RECRAWL_SHAPE).optional().describe("continuous re-crawl (docs/recrawl.md): the recrawl.* keys"),
};

/** A node config as written in a file: every key optional (defaults fill the rest), no unknown keys. */
export const NODE_CONFIG_SCHEMA = z.strictObject({ ...NODE_CONFIG_SHAPE, ...EXTERNAL_PARTS });

/** The keys the schema itself holds (the rest of NodeConfig is added by other modules). */
export type SchemaConfig = z.output<z.ZodObject<typeof NODE_CONFIG_SHAPE>>;

const SETTINGS_ONLY = z.strictObject(NODE_CONFIG_SHAPE);
/** A complete config of defaults. */
export function schemaDefaults(): SchemaConfig {
  return SETTINGS_ONLY.parse({});
}

export interface SettingInfo {
  key: string;
  description: string;
  schema: z.ZodType;
  flag?: FlagMeta;
}

/** Every setting in order, with its flag if it has one; the recrawl section's keys as recrawl.<key>. */
export function settings(): SettingInfo[] {
  const info = (key: string, schema: z.ZodType): SettingInfo => {
    const flag = FLAG_META.get(schema);
    return { key, description: schema.description ?? "", schema, ...(flag ? { flag } : {}) };
  };
  return [
    ...Object.entries(NODE_CONFIG_SHAPE).map(([key, schema]) => info(key, schema)),
    ...Object.entries(RECRAWL_SHAPE).map(([key, schema]) => info(`recrawl.${key}`, schema)),
  ];
}

/** A setting's default as users should read it ("" when it has none). */
export function defaultTextOf(s: SettingInfo): string {
  if (s.flag?.defaultText) return s.flag.defaultText;
  const r = s.schema.safeParse(undefined);
  const v: unknown = r.success ? r.data : undefined;
  if (v === undefined || v === "" || (Array.isArray(v) && v.length === 0)) return "";
  if (Array.isArray(v)) return v.join(", ");
  return typeof v === "object" ? JSON.stringify(v) : String(v as string | number | boolean);
}

/** The schema of a setting without its default/optional wrappers: what kind of value it takes. */
export function valueKind(schema: z.ZodType): "integer" | "number" | "string" | "boolean" | "list" | "mapping" | "choice" {
  let s = schema as z.ZodType & { def: { type: string; innerType?: z.ZodType } };
  while ((s.def.type === "default" || s.def.type === "optional") && s.def.innerType) s = s.def.innerType as typeof s;
  switch (s.def.type) {
    case "number": return (s as unknown as z.ZodNumber).format?.includes("int") || (s as unknown as z.ZodNumber).isInt ? "integer" : "number";
    case "boolean": return "boolean";
    case "array": return "list";
    case "object": return "mapping";
    case "enum": return "choice";
    default: return "string";
  }
}

const oneOf = (values: readonly unknown[]) => {
  const v = values.map(String);
  return v.length > 1 ? `${v.slice(0, -1).join(", ")} or ${v[v.length - 1]}` : (v[0] ?? "");
};
const shown = (v: unknown) => (v === undefined ? "nothing" : JSON.stringify(v));

/** What a user reads for one zod issue (the input, reported by safeParse, shows what was given). */
function issueText(issue: z.core.$ZodIssue): string {
  const got = `got ${shown(issue.input)}`;
  switch (issue.code) {
    case "invalid_type": return `expected ${issue.expected === "array" ? "a list" : issue.expected === "object" ? "a mapping" : `a ${issue.expected}`}, ${got}`;
    case "invalid_value": return `expected ${oneOf(issue.values)}, ${got}`;
    case "too_small": return issue.origin === "array" ? issue.message : `expected ${issue.inclusive === false ? ">" : ">="} ${String(issue.minimum)}, ${got}`;
    case "too_big": return issue.origin === "array" ? issue.message : `expected ${issue.inclusive === false ? "<" : "<="} ${String(issue.maximum)}, ${got}`;
    case "invalid_union": return `${issue.message}, ${got}`;
    default: return `${issue.message.replace(/^Invalid input: /, "")}${issue.input === undefined ? "" : `, ${got}`}`;
  }
}

/** A zod issue as one line naming the key path ("timeouts.totalMs: ..."). */
export function formatIssue(issue: z.core.$ZodIssue, nameOf: (path: string) => string = (p) => p): string {
  const path = issue.path.map((p, i) => (typeof p === "number" ? `[${p}]` : `${i ? "." : ""}${String(p)}`)).join("");
  if (issue.code === "unrecognized_keys") {
    return issue.keys.map((k) => `unknown key "${path ? `${path}.` : ""}${k}"`).join("\n");
  }
  return `${path ? `${nameOf(path)}: ` : ""}${issueText(issue)}`;
}

/**
 * Checks a node config object (a file's, or the flags' values) against the schema and fills the
 * defaults. `nameOf` renames a key path in messages (the crawl flags name the flag, not the key).
 */
export function parseSettings(input: unknown, nameOf?: (path: string) => string): { value?: SchemaConfig & { shard?: unknown; recrawl?: unknown }; errors: string[] } {
  const r = NODE_CONFIG_SCHEMA.safeParse(input, { reportInput: true });
  if (r.success) return { value: r.data, errors: [] };
  return { errors: r.error.issues.flatMap((i) => formatIssue(i, nameOf).split("\n")) };
}
