// `shardcrawl crawl` flags -> NodeConfig. The flag names are a contract outside tests rely on.
import { parseArgs } from "node:util";
import { defaultConfig, type Derivative, DERIVATIVES, validateConfig, type NodeConfig, type Scope } from "../node/config.js";
import { RECRAWL_OPTIONS, RECRAWL_USAGE, RecrawlConfigError, recrawlConfigFromFlags } from "../schedule/recrawl/continuous-config.js";
import { applyQueueSizing } from "../node/queue-sizing.js";
import { parsePriorityRuleFlag } from "../schedule/priority.js";

export class UsageError extends Error {}

export const CRAWL_USAGE = `usage: shardcrawl crawl --seeds <file> --out <dir> [flags]

  --seeds <file>              seed URLs, one per line (blank lines and # comments ignored)
  --out <dir>                 output folder (warc/, pages/, redis/); reuse it to resume a crawl
  --max-pages <n>             stop after n pages have been fetched
  --delay <ms>                minimum gap between two requests to one host (default 1000)
  --host-concurrency <n>      requests in flight per host (default 1)
  --politeness-key <host|domain>  one delay clock and in-flight limit per registrable domain across
                              its hosts (default domain), or per host
  --ip-concurrency <n>        requests in flight to one IP address (the address connected to) across all
                              hosts and domains of the node (default 0: no limit)
  --exclude-file <file>       the site owners' opt-out list loaded at start: "<domain|host|url-prefix> [reason]"
                              per line (see "shardcrawl exclude"; kept in the node's Redis)
  --max-crawl-delay <ms>      honour robots.txt Crawl-delay up to this (default 300000); a host asking
                              for more is skipped, its URLs refused as crawl-delay-too-long
  --user-agent <string>       sent on every request; its product token selects the robots.txt group;
                              must hold your contact (an http(s) URL or e-mail address), else exit 78
  --from <e-mail>             send a From header with this address (default: none)
  --robots-backoff-base <ms>  robots.txt outage: first wait before trying robots.txt again (default 60000)
  --robots-backoff-max <ms>   ... doubling up to this (default 21600000 = 6 h); Retry-After is honoured
  --robots-outage-max <ms>    after robots.txt was unreachable this long, use the last cached copy if
                              any (RFC 9309 2.3.1.4; default 2592000000 = 30 days); else keep waiting
  --max-defer-wait <ms>       when only hosts waiting for robots.txt are left, end after this long with
                              them reported as deferred (exit 0; rerun to continue them; default 120000)
  --connect-to <H1:P1:H2:P2>  curl's meaning, repeatable; empty H1 or P1 matches any
  --resolve <host:port:addr>  static DNS answer, repeatable
  --dns-server <ip[:port]>    ask this DNS server instead of the system resolver, repeatable
  --dns-min-ttl <ms>          shortest time a DNS answer is kept, whatever its record TTL (default 30000)
  --dns-max-ttl <ms>          longest time a DNS answer is kept (default 3600000); without --dns-server
                              there is no record TTL and answers are kept 5 minutes
  --dns-concurrency <n>       DNS lookups in flight per fetcher; more wait in a bounded queue (default 64)
  --allow-private             permit loopback and private destinations (refused by default)
  --scope <domains|hosts|any> stay inside the seeds' registrable domains (default), hosts, or go anywhere
  --ca-file <pem>             an extra trusted CA
  --max-page-bytes <n>        cut larger bodies while streaming and mark them truncated
  --cut-drain-bytes <n>       after a cut, read and drop up to n more bytes to keep the connection
                              (hosts with a delay under the 4 s keep-alive only; 0: close; default 524288)
  --warc-gzip-level <0-9>     WARC gzip level (default 1; 6 writes ~12% fewer bytes for ~2x the CPU)
  --derivatives <list>        files written beside each WARC file: wet,wat,index (Parquet), "all" or
                              "none" (default none; docs/outputs.md)
  --fetch-timeout <ms>        total time cap of one fetch (default 60000; connect, headers and
                              body-idle timeouts are capped by it too)
  --fetchers <n>              fetcher processes (default from the core count)
  --parsers <n>               parser processes (default from the core count)
  --parser-threads <n>        worker threads per parser process (default 0: parse on the main thread)
  --fetcher-concurrency <n>   requests in flight per fetcher process (default 256)
  --redis <url>               use this Redis instead of starting one under --out
  --lease-ttl <ms>            a leased URL returns to its queue if not done by then (default 120000)
  --expected-urls <n>         Seen filter design capacity; past it the filter grows (default 10000000)
  --status-port <n>           /metrics and /status on 127.0.0.1 (default: any free port)
  --progress <auto|on|off>    live progress (auto: only on a terminal)
  --name <node>               node name in output file names (default node0)

flow control:
  --parse-queue-max <n>       parse queue bound in pages; fetchers stop leasing when it is full (default 256)
  --parse-queue-max-bytes <b> parse stage bound in body bytes (default 268435456)
  --retry-max-attempts <n>    attempts per URL, first included (default 3; 1 = no retries)
  --retry-base <ms>           retry back-off base: full jitter in [0, min(cap, base x 2^attempt)] (default 1000)
  --max-retry-after <ms>      honour Retry-After up to this (default 300000)
  --aimd-probe <ms>           after a back-off, retry the limit that failed only after this (default 60000)
  --lease-ttl-percentile <p>  lease TTL from this percentile of fetch times x 2 (default 0.99)
  --max-queued-per-host <n>   URLs queued per host (default 1000000)
  --max-queued-total <n>      URLs queued in the frontier (default 100000000)
  --shed <drop|spill>         past a cap, drop lowest-priority URLs or spill them to out/spill/ (default drop)
  --redis-memory-budget <b>   keep Redis used_memory under this many bytes (default: none)
  --host-page-budget <n>      URLs ever admitted per host; 0 = none (default 100000)
  --max-hosts-per-domain <n>  hosts admitted per registrable domain (wildcard-DNS farms); 0 = none (default 1000)
  --strip-params <list>       comma-separated URL parameters removed in normalization: names, prefix*,
                              name:token (only session-like values); "none" for none (default: utm_*,
                              gclid, fbclid, msclkid, jsessionid, phpsessid, sid:token, ...; see docs/traps.md)
  --url-filter <name=n>       spider-trap filter, repeatable, replaces the defaults; "none" for no filters
                              (max-path-depth, max-repeated-segment, max-query-params, max-url-length)
  --global-concurrency <n>    requests in flight across the node: our upstream plan's cap (default: none)
  --upstream-limit-header <h> a 429 carrying this header is our upstream plan's limit: pause all fetching
  --upstream-quota-header <h> a response carrying this header means our quota is exhausted: stop fetching
                              (the crawl then ends with exit code 75; rerun with the same --out to continue)
  --target-pages-per-sec <r>  derive queue bounds as rate x accepted wait (parse queue pages and bytes,
                              write buffers); explicit bounds still win (default: off)
  --accepted-wait <ms>        how long a page may wait in a queue at that rate (default 2000)
  --typical-page-bytes <b>    typical body size for the byte bounds (default 262144)
  --min-free-disk <p|b>       pause leasing below this free space on the output disk: "5%" or bytes
                              ("2G"); resumes at 1.5x; "0" = only when a write fails (default 2%)
  --on-file-closed <cmd>      run "<cmd> <path>" for each closed WARC, CDXJ and page-log file; exit 0
                              marks it shipped (out/shipped.log); failures retried with back-off
  --delete-shipped            remove a file once --on-file-closed shipped it
  --warc-max-file-bytes <b>   WARC and page-log files are closed (and shipped) at this size (default 1073741824)
  --redis-dir <dir>           data folder of the node's own redis-server (own volume); out/redis links to it
  --write-buffer-bytes <b>    per parser: output not yet on disk; past it the parser takes no new page (default 67108864)
  --priority-rule <t>:<re>    URLs matching the regular expression get priority tier t (0 = first, 3 = shed first);
                              repeatable, first match wins, before the depth/shape heuristic

logs (JSON lines, pino, in <out>/logs/<role>[-<index>].<n>.log):
  --log-level <level>         trace, debug, info, warn, error, fatal or silent (default info)
  --log-max-bytes <b>         roll a process's log file at this size (default 10485760)
  --log-files <n>             rotated files kept per process besides the active one (default 5)
${RECRAWL_USAGE}`;

function int(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v.trim())) throw new UsageError(`--${name}: expected a non-negative integer, got ${JSON.stringify(v)}`);
  return Number(v);
}

/** The crawl flags; the parser below, shell completion and "did you mean" all read them from here. */
export const CRAWL_OPTIONS = {
  seeds: { type: "string" },
  out: { type: "string" },
  "max-pages": { type: "string" },
  delay: { type: "string" },
  "host-concurrency": { type: "string" },
  "politeness-key": { type: "string" },
  "exclude-file": { type: "string" },
  "ip-concurrency": { type: "string" },
  "max-crawl-delay": { type: "string" },
  from: { type: "string" },
  "robots-backoff-base": { type: "string" },
  "robots-backoff-max": { type: "string" },
  "robots-outage-max": { type: "string" },
  "max-defer-wait": { type: "string" },
  "user-agent": { type: "string" },
  "connect-to": { type: "string", multiple: true },
  resolve: { type: "string", multiple: true },
  "dns-server": { type: "string", multiple: true },
  "dns-min-ttl": { type: "string" },
  "dns-max-ttl": { type: "string" },
  "dns-concurrency": { type: "string" },
  "allow-private": { type: "boolean" },
  scope: { type: "string" },
  "ca-file": { type: "string" },
  "max-page-bytes": { type: "string" },
  "cut-drain-bytes": { type: "string" },
  "warc-gzip-level": { type: "string" },
  derivatives: { type: "string" },
  "fetch-timeout": { type: "string" },
  fetchers: { type: "string" },
  parsers: { type: "string" },
  "parser-threads": { type: "string" },
  "fetcher-concurrency": { type: "string" },
  redis: { type: "string" },
  "lease-ttl": { type: "string" },
  "expected-urls": { type: "string" },
  "status-port": { type: "string" },
  progress: { type: "string" },
  name: { type: "string" },
  "parse-queue-max": { type: "string" },
  "parse-queue-max-bytes": { type: "string" },
  "retry-max-attempts": { type: "string" },
  "retry-base": { type: "string" },
  "max-retry-after": { type: "string" },
  "aimd-probe": { type: "string" },
  "lease-ttl-percentile": { type: "string" },
  "max-queued-per-host": { type: "string" },
  "max-queued-total": { type: "string" },
  shed: { type: "string" },
  "redis-memory-budget": { type: "string" },
  "host-page-budget": { type: "string" },
  "max-hosts-per-domain": { type: "string" },
  "strip-params": { type: "string" },
  "min-free-disk": { type: "string" },
  "on-file-closed": { type: "string" },
  "delete-shipped": { type: "boolean" },
  "warc-max-file-bytes": { type: "string" },
  "redis-dir": { type: "string" },
  "url-filter": { type: "string", multiple: true },
  "global-concurrency": { type: "string" },
  "upstream-limit-header": { type: "string" },
  "upstream-quota-header": { type: "string" },
  "target-pages-per-sec": { type: "string" },
  "accepted-wait": { type: "string" },
  "typical-page-bytes": { type: "string" },
  "write-buffer-bytes": { type: "string" },
  "priority-rule": { type: "string", multiple: true },
  "log-level": { type: "string" },
  "log-max-bytes": { type: "string" },
  "log-files": { type: "string" },
  help: { type: "boolean", short: "h" },
  ...RECRAWL_OPTIONS,
} as const;

export function parseCrawlFlags(argv: string[]): NodeConfig {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: CRAWL_OPTIONS,
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const v = parsed.values;
  if (v.help) throw new UsageError("");
  if (!v.out) throw new UsageError("--out <dir> is required");
  const c = defaultConfig();
  c.out = v.out;
  if (v.seeds !== undefined) c.seeds = v.seeds;
  if (v.redis !== undefined) c.redis = v.redis;
  const maxPages = int("max-pages", v["max-pages"]);
  if (maxPages !== undefined) c.maxPages = maxPages;
  c.delayMs = int("delay", v.delay) ?? c.delayMs;
  c.hostConcurrency = int("host-concurrency", v["host-concurrency"]) ?? c.hostConcurrency;
  if (v["exclude-file"] !== undefined) c.excludeFile = v["exclude-file"];
  c.ipConcurrency = int("ip-concurrency", v["ip-concurrency"]) ?? c.ipConcurrency;
  if (v["politeness-key"] !== undefined) {
    if (v["politeness-key"] !== "host" && v["politeness-key"] !== "domain") throw new UsageError(`--politeness-key: expected host or domain, got ${JSON.stringify(v["politeness-key"])}`);
    c.politenessKey = v["politeness-key"];
  }
  c.maxCrawlDelayMs = int("max-crawl-delay", v["max-crawl-delay"]) ?? c.maxCrawlDelayMs;
  if (v["user-agent"] !== undefined) c.userAgent = v["user-agent"];
  if (v.from !== undefined) c.fromHeader = v.from;
  c.robotsBackoffBaseMs = int("robots-backoff-base", v["robots-backoff-base"]) ?? c.robotsBackoffBaseMs;
  c.robotsBackoffMaxMs = int("robots-backoff-max", v["robots-backoff-max"]) ?? c.robotsBackoffMaxMs;
  c.robotsOutageMaxMs = int("robots-outage-max", v["robots-outage-max"]) ?? c.robotsOutageMaxMs;
  c.maxDeferWaitMs = int("max-defer-wait", v["max-defer-wait"]) ?? c.maxDeferWaitMs;
  c.connectTo = v["connect-to"] ?? [];
  c.resolve = v.resolve ?? [];
  c.dnsServers = v["dns-server"] ?? [];
  c.dnsMinTtlMs = int("dns-min-ttl", v["dns-min-ttl"]) ?? c.dnsMinTtlMs;
  c.dnsMaxTtlMs = int("dns-max-ttl", v["dns-max-ttl"]) ?? c.dnsMaxTtlMs;
  c.dnsConcurrency = int("dns-concurrency", v["dns-concurrency"]) ?? c.dnsConcurrency;
  c.allowPrivate = v["allow-private"] ?? false;
  if (v.scope !== undefined) c.scope = v.scope as Scope;
  if (v["ca-file"] !== undefined) c.caFile = v["ca-file"];
  c.maxPageBytes = int("max-page-bytes", v["max-page-bytes"]) ?? c.maxPageBytes;
  c.cutDrainBytes = int("cut-drain-bytes", v["cut-drain-bytes"]) ?? c.cutDrainBytes;
  c.warcGzipLevel = int("warc-gzip-level", v["warc-gzip-level"]) ?? c.warcGzipLevel;
  if (v.derivatives !== undefined) c.derivatives = parseDerivatives(v.derivatives);
  const total = int("fetch-timeout", v["fetch-timeout"]);
  if (total !== undefined) {
    const t = c.timeouts;
    c.timeouts = { connectMs: Math.min(t.connectMs, total), headersMs: Math.min(t.headersMs, total), bodyMs: Math.min(t.bodyMs, total), totalMs: total };
  }
  c.fetchers = int("fetchers", v.fetchers) ?? c.fetchers;
  c.parsers = int("parsers", v.parsers) ?? c.parsers;
  c.parserThreads = int("parser-threads", v["parser-threads"]) ?? c.parserThreads;
  c.fetcherConcurrency = int("fetcher-concurrency", v["fetcher-concurrency"]) ?? c.fetcherConcurrency;
  c.expectedUrls = int("expected-urls", v["expected-urls"]) ?? c.expectedUrls;
  c.leaseTtlMs = int("lease-ttl", v["lease-ttl"]) ?? c.leaseTtlMs;
  // The adaptive lease lifetime lives between a floor and --lease-ttl: a short cap lowers the floor.
  c.leaseTtlFloorMs = Math.min(c.leaseTtlFloorMs, c.leaseTtlMs);
  c.statusPort = int("status-port", v["status-port"]) ?? c.statusPort;
  if (v.progress !== undefined) {
    if (!["auto", "on", "off"].includes(v.progress)) throw new UsageError(`--progress: expected auto, on or off, got ${JSON.stringify(v.progress)}`);
    c.progress = v.progress as NodeConfig["progress"];
  }
  if (v.name !== undefined) c.nodeName = v.name;
  c.parseQueueMax = int("parse-queue-max", v["parse-queue-max"]) ?? c.parseQueueMax;
  c.parseQueueMaxBytes = int("parse-queue-max-bytes", v["parse-queue-max-bytes"]) ?? c.parseQueueMaxBytes;
  c.retryMaxAttempts = int("retry-max-attempts", v["retry-max-attempts"]) ?? c.retryMaxAttempts;
  c.retryBaseMs = int("retry-base", v["retry-base"]) ?? c.retryBaseMs;
  c.maxRetryAfterMs = int("max-retry-after", v["max-retry-after"]) ?? c.maxRetryAfterMs;
  c.aimdProbeMs = int("aimd-probe", v["aimd-probe"]) ?? c.aimdProbeMs;
  if (v["lease-ttl-percentile"] !== undefined) {
    const p = Number(v["lease-ttl-percentile"]);
    if (!(p > 0 && p <= 1)) throw new UsageError(`--lease-ttl-percentile: expected 0 < p <= 1, got ${JSON.stringify(v["lease-ttl-percentile"])}`);
    c.leaseTtlPercentile = p;
  }
  c.maxQueuedPerHost = int("max-queued-per-host", v["max-queued-per-host"]) ?? c.maxQueuedPerHost;
  c.maxQueuedTotal = int("max-queued-total", v["max-queued-total"]) ?? c.maxQueuedTotal;
  if (v.shed !== undefined) {
    if (v.shed !== "drop" && v.shed !== "spill") throw new UsageError(`--shed: expected drop or spill, got ${JSON.stringify(v.shed)}`);
    c.shedMode = v.shed;
  }
  c.redisMemoryBudgetBytes = int("redis-memory-budget", v["redis-memory-budget"]) ?? c.redisMemoryBudgetBytes;
  c.hostPageBudget = int("host-page-budget", v["host-page-budget"]) ?? c.hostPageBudget;
  c.maxHostsPerDomain = int("max-hosts-per-domain", v["max-hosts-per-domain"]) ?? c.maxHostsPerDomain;
  if (v["strip-params"] !== undefined) c.stripParams = v["strip-params"].trim() === "none" ? [] : v["strip-params"].split(",").map((x) => x.trim()).filter((x) => x !== "");
  if (v["url-filter"] !== undefined) c.urlFilters = v["url-filter"].includes("none") ? [] : v["url-filter"];
  c.globalConcurrency = int("global-concurrency", v["global-concurrency"]) ?? c.globalConcurrency;
  if (v["upstream-limit-header"] !== undefined) c.upstreamLimitHeader = v["upstream-limit-header"];
  if (v["upstream-quota-header"] !== undefined) c.upstreamQuotaHeader = v["upstream-quota-header"];
  try {
    const recrawl = recrawlConfigFromFlags(v);
    if (recrawl) {
      c.recrawl = recrawl;
      c.exitWhenDone = false; // a continuous node runs until stopped
    }
  } catch (err) {
    if (err instanceof RecrawlConfigError) throw new UsageError(err.message);
    throw err;
  }
  if (v["target-pages-per-sec"] !== undefined) {
    const r = Number(v["target-pages-per-sec"]);
    if (!(r > 0)) throw new UsageError(`--target-pages-per-sec: expected a rate > 0, got ${JSON.stringify(v["target-pages-per-sec"])}`);
    c.targetPagesPerSec = r;
  }
  c.acceptedWaitMs = int("accepted-wait", v["accepted-wait"]) ?? c.acceptedWaitMs;
  c.typicalPageBytes = int("typical-page-bytes", v["typical-page-bytes"]) ?? c.typicalPageBytes;
  c.writeBufferBytes = int("write-buffer-bytes", v["write-buffer-bytes"]) ?? c.writeBufferBytes;
  if (v["min-free-disk"] !== undefined) c.minFreeDisk = v["min-free-disk"];
  if (v["on-file-closed"] !== undefined) c.onFileClosed = v["on-file-closed"];
  if (v["delete-shipped"] !== undefined) c.deleteShipped = v["delete-shipped"];
  if (v["redis-dir"] !== undefined) c.redisDir = v["redis-dir"];
  c.warcMaxFileBytes = int("warc-max-file-bytes", v["warc-max-file-bytes"]) ?? c.warcMaxFileBytes;
  try {
    c.priorityRules = (v["priority-rule"] ?? []).map(parsePriorityRuleFlag);
  } catch (err) {
    throw new UsageError(`--priority-rule: ${(err as Error).message}`);
  }
  const explicit = new Set<string>();
  for (const [flag, key] of [["parse-queue-max", "parseQueueMax"], ["parse-queue-max-bytes", "parseQueueMaxBytes"], ["write-buffer-bytes", "writeBufferBytes"]] as const) {
    if (v[flag] !== undefined) explicit.add(key);
  }
  try {
    applyQueueSizing(c, explicit);
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  if (v["log-level"] !== undefined) c.logLevel = v["log-level"] as NodeConfig["logLevel"];
  c.logMaxBytes = int("log-max-bytes", v["log-max-bytes"]) ?? c.logMaxBytes;
  c.logFiles = int("log-files", v["log-files"]) ?? c.logFiles;
  const errors = validateConfig(c);
  if (errors.length) throw new UsageError(errors.join("\n"));
  return c;
}

/** "wet,wat,index", "all" or "none". */
export function parseDerivatives(value: string): Derivative[] {
  const v = value.trim().toLowerCase();
  if (v === "none" || v === "") return [];
  if (v === "all") return [...DERIVATIVES];
  const out: Derivative[] = [];
  for (const part of v.split(",").map((p) => p.trim())) {
    if (!DERIVATIVES.includes(part as Derivative)) throw new UsageError(`--derivatives: expected a list of ${DERIVATIVES.join(", ")} (or all, none), got ${JSON.stringify(value)}`);
    if (!out.includes(part as Derivative)) out.push(part as Derivative);
  }
  return out;
}
