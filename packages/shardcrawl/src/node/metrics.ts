// Prometheus exposition of the node's state, rendered by prom-client. Names follow Prometheus
// conventions: a shardcrawl_ prefix, base units (seconds, bytes) and _total on counters; every
// series carries node="<name>" first. The snapshot comes from Redis (the node's single source of
// truth for counters, so they survive child restarts and resumed crawls), from /proc (CPU and
// memory per process) and from the children's IPC reports (event-loop lag).
// Flow-control pressure: queue depth, capacity and age of the oldest item, blocked time,
// rejections (dropped, filtered), retries and the retry ratio, shed/spilled/re-admitted counts,
// in-flight and current limit of the top hosts by pressure, Redis memory against its budget.
import { admissionTimings, refusalsByFilter } from "../admit/index.js";
import { Counter, Gauge, Registry } from "prom-client";
import type { HostPressure } from "../frontier/index.js";
import type { NodeStats } from "./open-frontier.js";
import type { RecrawlSnapshot } from "../schedule/recrawl/continuous-loop.js";
import { registerRecrawlMetrics } from "../schedule/recrawl/continuous-metrics.js";

/** CPU and memory of one process of the node, read from /proc. */
export interface ProcessSample {
  /** supervisor, fetcher-0, parser-1, redis, ... */
  process: string;
  pid: number;
  cpuSeconds: number;
  rssBytes: number;
}

/** Event-loop delay of one process over its last report interval. */
export interface EventLoopSample {
  process: string;
  meanSeconds: number;
  maxSeconds: number;
}

export interface MetricsSnapshot {
  node?: string;
  stats?: NodeStats;
  processes?: ProcessSample[];
  eventLoop?: EventLoopSample[];
  /** Child processes restarted after a crash. */
  restarts?: number;
  /** Requests the node's fetchers may have in flight (fetchers x fetcherConcurrency). */
  fetchCapacity?: number;
  /** The stage that limits throughput now (node/bottleneck.ts). */
  bottleneck?: { stage: string };
  /** Continuous mode (--continuous): the re-crawl schedule's families. */
  recrawl?: RecrawlSnapshot;
}

export const METRICS_CONTENT_TYPE = new Registry().contentType;

type Get = (s: NodeStats) => number;

const COUNTERS: Array<[string, string, Get]> = [
  ["shardcrawl_pages_fetched_total", "Pages fetched (any HTTP status).", (s) => s.fetched],
  ["shardcrawl_pages_parsed_total", "Pages parsed and written to WARC.", (s) => s.parsed],
  ["shardcrawl_fetch_failures_total", "Fetches that ended without a response.", (s) => s.failed],
  ["shardcrawl_robots_disallowed_total", "URLs refused by robots.txt.", (s) => s.robotsDisallowed],
  ["shardcrawl_urls_discovered_total", "New URLs added to the frontier.", (s) => s.discovered],
  ["shardcrawl_links_out_of_scope_total", "Links dropped as out of scope.", (s) => s.outOfScope],
];

const GAUGES: Array<[string, string, Get]> = [
  ["shardcrawl_frontier_urls", "URLs queued in the frontier.", (s) => s.queued],
  ["shardcrawl_frontier_hosts", "Hosts with queued URLs.", (s) => s.hostsQueued],
  ["shardcrawl_frontier_ready_hosts", "Hosts waiting in the ready schedule (queued, not at their concurrency limit).", (s) => s.readyHosts],
  ["shardcrawl_frontier_due_hosts", "Ready hosts whose politeness delay has passed (fetchable now).", (s) => s.dueHosts],
  ["shardcrawl_fetch_leases", "URLs leased to fetchers (in flight).", (s) => s.leases],
  ["shardcrawl_parse_queue_pages", "Pages waiting in the parse queue.", (s) => s.parseQueue],
  ["shardcrawl_parse_in_flight_pages", "Pages taken by parsers, not yet acknowledged.", (s) => s.parseInFlight],
];

/** Counter families built from stats counters with a prefix: [prefix, metric, help, label, scale]. */
const LABELLED: Array<[string, string, string, string, number]> = [
  ["page:", "shardcrawl_pages_total", "Page-log lines (every fetch attempt and refusal), by outcome: HTTP status class (2xx..5xx) or error class.", "outcome", 1],
  ["pageBytes:", "shardcrawl_page_bytes_total", "Body bytes received, by the outcome of the page-log line.", "outcome", 1],
  ["err:", "shardcrawl_fetch_errors_total", "URLs that failed for good, by error class (dns, connect, tls, robots-disallowed, ...).", "class", 1],
  ["parseErr:", "shardcrawl_parse_errors_total", "Pages parsed with an error, by class (decode-bomb, decode-error, ...).", "class", 1],
  ["retry:", "shardcrawl_fetch_retries_total", "Retries scheduled, by reason (http-429, reset, ...).", "reason", 1],
  ["blockedMs:", "shardcrawl_fetch_blocked_seconds_total", "Fetcher time spent unable to lease, by reason (parse-full, storage, global-full, upstream, quota, disk-full).", "reason", 0.001],
  ["dropped:", "shardcrawl_frontier_rejected_total", "New URLs refused by a queue cap, the host page budget or the hosts-per-domain cap, by reason.", "reason", 1],
  ["trap:", "shardcrawl_trap_defence_total", "Links changed by a spider-trap defence in normalization (params-stripped: session-id or tracking parameters removed).", "defence", 1],
  ["filtered:", "shardcrawl_frontier_filtered_total", "URLs refused by the spider-trap URL filter chain, by reason.", "reason", 1],
  ["dnsFail:", "shardcrawl_dns_failures_total", "Failed DNS resolver calls, by class (nxdomain: the name has no address; transient: SERVFAIL, timeout, busy).", "class", 1],
];

/** Plain counters straight from a stats field. */
const PLAIN: Array<[string, string, string]> = [
  ["shed", "shardcrawl_frontier_shed_total", "Queued lower-priority URLs dropped to make room for better ones."],
  ["spilled", "shardcrawl_frontier_spilled_total", "Queued lower-priority URLs spilled to disk to make room for better ones."],
  ["readmitted", "shardcrawl_frontier_readmitted_total", "Spilled URLs re-admitted to the frontier."],
  ["ipFull", "shardcrawl_fetch_ip_full_total", "Leased URLs handed back because their IP address had no free slot (--ip-concurrency)."],
  ["excluded", "shardcrawl_frontier_excluded_total", "Queued or leased URLs removed by the site owners' opt-out list (exclude add)."],
  ["excluded:refused", "shardcrawl_frontier_excluded_refused_total", "Links, redirects, seeds and inbox URLs refused at admission by the opt-out list."],
  ["aimd:decrease", "shardcrawl_host_limit_decreases_total", "Multiplicative decreases of a host's adaptive limit."],
  ["upstream:paused", "shardcrawl_upstream_pauses_total", "Pauses of all fetching asked for by our upstream plan."],
  ["robots:evicted", "shardcrawl_robots_cache_evicted_total", "robots.txt cache entries evicted to keep the cache under --robots-cache-max-bytes (fetched again when needed)."],
  ["reaped", "shardcrawl_leases_expired_total", "Leases that expired and were returned to their queues."],
  ["duplicates", "shardcrawl_urls_duplicate_total", "Discovered URLs already seen (Bloom filter)."],
  ["conn:opened", "shardcrawl_connections_opened_total", "TCP connections opened by fetchers (HTTP and HTTPS)."],
  ["tls:handshakes", "shardcrawl_tls_handshakes_total", "Full TLS handshakes (no session resumed)."],
  ["tls:resumed", "shardcrawl_tls_session_reuses_total", "TLS handshakes that resumed a cached session."],
  ["dns:lookups", "shardcrawl_dns_lookups_total", "DNS resolver calls made by fetchers (cache misses)."],
  ["dns:hits", "shardcrawl_dns_cache_hits_total", "DNS answers (positive or negative) served from the fetchers' caches."],
  ["outboxLinks", "shardcrawl_outbox_links_total", "Links owned by other nodes, written to the outbox (cluster)."],
  ["lowDiskPauses", "shardcrawl_low_disk_pauses_total", "Pauses of leasing because free space fell below --min-free-disk."],
  ["diskPauses", "shardcrawl_disk_pause_resumes_total", "Disk pauses that ended (space back above the resume level)."],
  ["ship:files", "shardcrawl_shipped_files_total", "Closed WARC, CDXJ and page-log files shipped by --on-file-closed."],
  ["ship:bytes", "shardcrawl_shipped_bytes_total", "Bytes of the files shipped by --on-file-closed."],
  ["ship:failures", "shardcrawl_ship_failures_total", "Runs of --on-file-closed that failed (retried with back-off)."],
];

const PER_HOST: Array<[string, string, (h: HostPressure) => number]> = [
  ["shardcrawl_host_in_flight_requests", "Requests in flight to a host (top hosts by pressure).", (h) => h.inFlight],
  ["shardcrawl_host_concurrency_limit", "Current adaptive concurrency limit of a host (top hosts by pressure).", (h) => h.limit],
  ["shardcrawl_host_delay_multiplier", "Current delay multiplier of a host (top hosts by pressure).", (h) => h.delayMultiplier],
  ["shardcrawl_host_pressure_ratio", "Hard limit over current limit, times the delay multiplier (top hosts).", (h) => h.pressure],
  ["shardcrawl_host_retry_ratio", "Retries over attempts of a host (top hosts by pressure).", (h) => h.retryRatio],
  ["shardcrawl_host_queued_urls", "URLs queued for a host (top hosts by pressure).", (h) => h.queued],
];

/** The whole exposition for one scrape. A fresh registry each time: the values are a snapshot, not state. */
export async function renderMetrics(snap: MetricsSnapshot): Promise<string> {
  const reg = new Registry();
  const node = snap.node ?? "node0";
  const s = snap.stats;
  const c = s?.counters ?? {};
  const counter = (name: string, help: string, labelNames: string[] = []) => new Counter({ name, help, labelNames: ["node", ...labelNames], registers: [reg] });
  const gauge = (name: string, help: string, labelNames: string[] = []) => new Gauge({ name, help, labelNames: ["node", ...labelNames], registers: [reg] });
  // Counters mirror absolute values; a negative or non-numeric one (a stats field a bug damaged) is
  // shown as 0 rather than failing the whole scrape.
  const inc = (m: Counter, v: number, labels: Record<string, string> = {}) => m.inc({ node, ...labels }, Number.isFinite(v) ? Math.max(0, v) : 0);
  // A field missing from an older or partial snapshot is shown as 0, not a failed scrape.
  const set = (name: string, help: string, v: number) => gauge(name, help).set({ node }, Number.isFinite(v) ? v : 0);

  for (const [name, help, get] of COUNTERS) inc(counter(name, help), s ? get(s) : 0);
  for (const [name, help, get] of GAUGES) set(name, help, s ? get(s) : 0);
  for (const [prefix, name, help, lname, scale] of LABELLED) {
    const m = counter(name, help, [lname]);
    for (const [k, v] of Object.entries(c)) if (k.startsWith(prefix)) inc(m, v * scale, { [lname]: k.slice(prefix.length) });
  }
  for (const [k, name, help] of PLAIN) inc(counter(name, help), c[k] ?? 0);
  // The admission chain (admit/): refusals by filter wherever decided, and sampled check times.
  const refused = counter("shardcrawl_admission_refused_total", "URLs refused by the admission chain, by filter (scope, shard: routed to its owner, exclusions, trap, host-budget, domain-hosts, robots, crawl-delay).", ["filter"]);
  for (const [filter, n] of refusalsByFilter(c)) inc(refused, n, { filter });
  const checkSeconds = counter("shardcrawl_admission_check_seconds_total", "Time in admission filters over sampled checks (1 in 256), by filter; over shardcrawl_admission_checks_sampled_total: the mean.", ["filter"]);
  const checks = counter("shardcrawl_admission_checks_sampled_total", "Admission checks timed (1 in 256), by filter.", ["filter"]);
  for (const [filter, t] of admissionTimings(c)) {
    inc(checkSeconds, t.seconds, { filter });
    inc(checks, t.checks, { filter });
  }
  inc(counter("shardcrawl_dns_lookup_seconds_total", "Time spent in DNS resolver calls (over shardcrawl_dns_lookups_total: the mean lookup time)."), (c["dns:lookupMs"] ?? 0) / 1000);
  const retries = c.retries ?? 0;
  const attempts = retries + (c.fetched ?? 0) + (c.failed ?? 0);
  set("shardcrawl_fetch_retry_ratio", "Retries over all attempts since the crawl started.", attempts > 0 ? retries / attempts : 0);
  set("shardcrawl_fetch_capacity_requests", "Requests the node's fetchers may have in flight (fetchers x fetcher concurrency).", snap.fetchCapacity ?? 0);
  inc(counter("shardcrawl_child_restarts_total", "Fetcher and parser processes restarted after they died."), snap.restarts ?? 0);

  const p = s?.pressure;
  if (p) {
    set("shardcrawl_parse_queue_capacity_pages", "Parse queue bound (fetchers stop leasing at it).", p.parseQueueMax);
    set("shardcrawl_parse_stage_bytes", "Body bytes queued for or being parsed (bounded by parseQueueMaxBytes).", c.parseBytes ?? 0);
    set("shardcrawl_parse_queue_oldest_age_seconds", "Age of the oldest page waiting in the parse queue.", p.parseQueueOldestAgeMs / 1000);
    set("shardcrawl_frontier_ready_lag_seconds", "How long the most overdue ready host has been due (fetchers falling behind the schedule).", (p.readyLagMs ?? 0) / 1000);
    set("shardcrawl_redis_memory_used_bytes", "Redis used_memory.", p.redisUsedBytes);
    set("shardcrawl_redis_memory_budget_bytes", "Redis memory budget (0 = none).", p.redisBudgetBytes);
    set("shardcrawl_frontier_total_cap_urls", "Total queue cap set by the memory governor (0 = the configured cap applies).", p.totalCap ?? 0);
    set("shardcrawl_spill_waiting_urls", "Shed URLs in Redis waiting to be written to disk.", p.spillWaiting);
    set("shardcrawl_spill_on_disk_urls", "Shed URLs in spill files waiting to be re-admitted.", p.spillOnDisk);
    set("shardcrawl_hosts_under_backoff", "Hosts whose adaptive limit is below the hard limit or whose delay is multiplied.", p.hostsUnderBackoff);
    set("shardcrawl_fetch_stopped", "1 when fetching stopped because our upstream quota is exhausted.", p.stopped ? 1 : 0);
    set("shardcrawl_disk_full_paused", "1 while fetching is paused because the output disk is full.", p.diskFull ? 1 : 0);
    if (p.bloom) {
      const b = p.bloom;
      set("shardcrawl_seen_filter_insertions", "URLs inserted into the seen filter (all stages).", b.insertions);
      set("shardcrawl_seen_filter_capacity_urls", "Design capacity of the seen filter's stages in use.", b.capacity);
      set("shardcrawl_seen_filter_stages", "Stages of the growing seen filter in use.", b.stages);
      set("shardcrawl_seen_filter_fill_ratio", "Estimated share of bits set in the newest stage of the seen filter.", b.fillRatio);
      set("shardcrawl_seen_filter_false_positive_rate", "Estimated rate at which a new URL is taken for seen now (all stages).", b.estimatedFalsePositiveRate);
      set("shardcrawl_seen_filter_false_positive_target", "Configured false-positive rate of the seen filter.", b.target);
      // Prometheus base units are bytes; bits per URL (the usual Bloom figure) is bytes per URL x 8.
      set("shardcrawl_seen_filter_size_bytes", "Bytes allocated to the seen filter (all stages in use).", b.bits / 8);
      set("shardcrawl_seen_filter_bytes_per_url", "Bytes of the seen filter per URL inserted (x 8 = bits per URL).", b.bitsPerUrl / 8);
      set("shardcrawl_seen_filter_warning", "1 when the estimated false-positive rate exceeds 1.2x the target (the filter ran past its planned stages).", b.warning);
    }
    for (const [name, help, get] of PER_HOST) {
      const g = gauge(name, help, ["host"]);
      for (const h of p.hosts) g.set({ node, host: h.host }, get(h));
    }
  }

  if (snap.processes) {
    const cpu = counter("shardcrawl_process_cpu_seconds_total", "User plus system CPU time of a process of the node (supervisor, fetcher-N, parser-N, redis).", ["process"]);
    const rss = gauge("shardcrawl_process_resident_memory_bytes", "Resident memory of a process of the node.", ["process"]);
    for (const pr of snap.processes) {
      inc(cpu, pr.cpuSeconds, { process: pr.process });
      rss.set({ node, process: pr.process }, pr.rssBytes);
    }
  }
  if (snap.eventLoop) {
    const mean = gauge("shardcrawl_event_loop_lag_seconds", "Mean event-loop delay of a process over its last report interval.", ["process"]);
    const max = gauge("shardcrawl_event_loop_lag_max_seconds", "Largest event-loop delay of a process over its last report interval.", ["process"]);
    for (const e of snap.eventLoop) {
      mean.set({ node, process: e.process }, e.meanSeconds);
      max.set({ node, process: e.process }, e.maxSeconds);
    }
  }
  if (snap.bottleneck) {
    gauge("shardcrawl_bottleneck_stage", "1 for the stage that limits throughput now (see the status page), else absent.", ["stage"]).set({ node, stage: snap.bottleneck.stage }, 1);
  }
  if (snap.recrawl) registerRecrawlMetrics(reg, node, snap.recrawl);
  return reg.metrics();
}
