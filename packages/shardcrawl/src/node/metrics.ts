// Prometheus exposition of the node's state. Names follow Prometheus conventions (unit suffixes,
// _total for counters); the snapshot comes from Redis, which is the node's single source of truth.
// Flow-control pressure (issue 5): queue depth, capacity and age of the oldest item, blocked time,
// rejections (dropped, filtered), retries and the retry ratio, shed/spilled/re-admitted counts,
// in-flight and current limit of the top hosts by pressure, Redis memory against its budget.
import type { HostPressure } from "../frontier/index.js";
import type { NodeStats } from "./open-frontier.js";

interface Snapshot {
  node?: string;
  stats?: NodeStats;
}

const COUNTERS: Array<[keyof NodeStats, string, string]> = [
  ["fetched", "shardcrawl_pages_fetched_total", "Pages fetched (any HTTP status)."],
  ["parsed", "shardcrawl_pages_parsed_total", "Pages parsed and written to WARC."],
  ["failed", "shardcrawl_fetch_failures_total", "Fetches that ended without a response."],
  ["robotsDisallowed", "shardcrawl_robots_disallowed_total", "URLs refused by robots.txt."],
  ["discovered", "shardcrawl_urls_discovered_total", "New URLs added to the frontier."],
  ["outOfScope", "shardcrawl_links_out_of_scope_total", "Links dropped as out of scope."],
];

const GAUGES: Array<[keyof NodeStats, string, string]> = [
  ["queued", "shardcrawl_frontier_urls", "URLs queued in the frontier."],
  ["hostsQueued", "shardcrawl_frontier_hosts", "Hosts with queued URLs."],
  ["leases", "shardcrawl_fetch_leases", "URLs leased to fetchers (in flight)."],
  ["parseQueue", "shardcrawl_parse_queue_pages", "Pages waiting in the parse queue."],
  ["parseInFlight", "shardcrawl_parse_in_flight_pages", "Pages taken by parsers, not yet acknowledged."],
];

/** Counter families built from stats counters with a prefix: [prefix, metric, help, label, scale]. */
const LABELLED: Array<[string, string, string, string, number]> = [
  ["retry:", "shardcrawl_fetch_retries_total", "Retries scheduled, by reason (http-429, reset, ...).", "reason", 1],
  ["blockedMs:", "shardcrawl_fetch_blocked_seconds_total", "Fetcher time spent unable to lease, by reason (parse-full, global-full, upstream, quota).", "reason", 0.001],
  ["dropped:", "shardcrawl_frontier_rejected_total", "New URLs refused by a queue cap or the host page budget, by reason.", "reason", 1],
  ["filtered:", "shardcrawl_frontier_filtered_total", "URLs refused by the spider-trap URL filter chain, by reason.", "reason", 1],
];

const PLAIN: Array<[string, string, string]> = [
  ["shed", "shardcrawl_frontier_shed_total", "Queued lower-priority URLs dropped to make room for better ones."],
  ["spilled", "shardcrawl_frontier_spilled_total", "Queued lower-priority URLs spilled to disk to make room for better ones."],
  ["readmitted", "shardcrawl_frontier_readmitted_total", "Spilled URLs re-admitted to the frontier."],
  ["aimd:decrease", "shardcrawl_host_limit_decreases_total", "Multiplicative decreases of a host's adaptive limit."],
  ["upstream:paused", "shardcrawl_upstream_pauses_total", "Pauses of all fetching asked for by our upstream plan."],
  ["reaped", "shardcrawl_leases_expired_total", "Leases that expired and were returned to their queues."],
  ["conn:opened", "shardcrawl_connections_opened_total", "TCP connections opened by fetchers (HTTP and HTTPS)."],
  ["tls:handshakes", "shardcrawl_tls_handshakes_total", "Full TLS handshakes (no session resumed)."],
  ["tls:resumed", "shardcrawl_tls_session_reuses_total", "TLS handshakes that resumed a cached session."],
];

function esc(v: string): string {
  return v.replace(/["\\\n]/g, "_");
}

export function renderMetrics(snap: Snapshot): string {
  const out: string[] = [];
  const s = snap.stats;
  const label = `node="${esc(snap.node ?? "node0")}"`;
  const family = (name: string, type: "counter" | "gauge", help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  for (const [k, name, help] of COUNTERS) {
    family(name, "counter", help);
    out.push(`${name}{${label}} ${Number(s?.[k] ?? 0)}`);
  }
  for (const [k, name, help] of GAUGES) {
    family(name, "gauge", help);
    out.push(`${name}{${label}} ${Number(s?.[k] ?? 0)}`);
  }
  const c = s?.counters ?? {};
  for (const [prefix, name, help, lname, scale] of LABELLED) {
    family(name, "counter", help);
    for (const [k, v] of Object.entries(c)) {
      if (k.startsWith(prefix)) out.push(`${name}{${label},${lname}="${esc(k.slice(prefix.length))}"} ${v * scale}`);
    }
  }
  for (const [k, name, help] of PLAIN) {
    family(name, "counter", help);
    out.push(`${name}{${label}} ${c[k] ?? 0}`);
  }
  const retries = c.retries ?? 0;
  const attempts = retries + (c.fetched ?? 0) + (c.failed ?? 0);
  family("shardcrawl_fetch_retry_ratio", "gauge", "Retries over all attempts since the crawl started.");
  out.push(`shardcrawl_fetch_retry_ratio{${label}} ${attempts > 0 ? retries / attempts : 0}`);
  const p = s?.pressure;
  if (p) {
    const g = (name: string, help: string, v: number) => {
      family(name, "gauge", help);
      out.push(`${name}{${label}} ${v}`);
    };
    g("shardcrawl_parse_queue_capacity_pages", "Parse queue bound (fetchers stop leasing at it).", p.parseQueueMax);
    g("shardcrawl_parse_stage_bytes", "Body bytes queued for or being parsed (bounded by parseQueueMaxBytes).", s?.counters.parseBytes ?? 0);
    g("shardcrawl_parse_queue_oldest_age_seconds", "Age of the oldest page waiting in the parse queue.", p.parseQueueOldestAgeMs / 1000);
    g("shardcrawl_redis_memory_used_bytes", "Redis used_memory.", p.redisUsedBytes);
    g("shardcrawl_redis_memory_budget_bytes", "Redis memory budget (0 = none).", p.redisBudgetBytes);
    g("shardcrawl_frontier_total_cap_urls", "Total queue cap set by the memory governor (0 = the configured cap applies).", p.totalCap ?? 0);
    g("shardcrawl_spill_waiting_urls", "Shed URLs in Redis waiting to be written to disk.", p.spillWaiting);
    g("shardcrawl_spill_on_disk_urls", "Shed URLs in spill files waiting to be re-admitted.", p.spillOnDisk);
    g("shardcrawl_hosts_under_backoff", "Hosts whose adaptive limit is below the hard limit or whose delay is multiplied.", p.hostsUnderBackoff);
    g("shardcrawl_fetch_stopped", "1 when fetching stopped because our upstream quota is exhausted.", p.stopped ? 1 : 0);
    const perHost: Array<[string, string, (h: HostPressure) => number]> = [
      ["shardcrawl_host_in_flight_requests", "Requests in flight to a host (top hosts by pressure).", (h) => h.inFlight],
      ["shardcrawl_host_concurrency_limit", "Current adaptive concurrency limit of a host (top hosts by pressure).", (h) => h.limit],
      ["shardcrawl_host_delay_multiplier", "Current delay multiplier of a host (top hosts by pressure).", (h) => h.delayMultiplier],
      ["shardcrawl_host_pressure_ratio", "Hard limit over current limit, times the delay multiplier (top hosts).", (h) => h.pressure],
      ["shardcrawl_host_retry_ratio", "Retries over attempts of a host (top hosts by pressure).", (h) => h.retryRatio],
    ];
    for (const [name, help, get] of perHost) {
      family(name, "gauge", help);
      for (const h of p.hosts) out.push(`${name}{${label},host="${esc(h.host)}"} ${get(h)}`);
    }
  }
  return out.join("\n") + "\n";
}
