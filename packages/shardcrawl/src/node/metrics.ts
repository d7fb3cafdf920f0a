// Prometheus exposition of the node's state. Names follow Prometheus conventions (unit suffixes,
// _total for counters); the snapshot comes from Redis, which is the node's single source of truth.
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

export function renderMetrics(snap: Snapshot): string {
  const out: string[] = [];
  const s = snap.stats;
  const label = `node="${(snap.node ?? "node0").replace(/["\\\n]/g, "_")}"`;
  for (const [k, name, help] of COUNTERS) {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} counter`, `${name}{${label}} ${Number(s?.[k] ?? 0)}`);
  }
  for (const [k, name, help] of GAUGES) {
    out.push(`# HELP ${name} ${help}`, `# TYPE ${name} gauge`, `${name}{${label}} ${Number(s?.[k] ?? 0)}`);
  }
  return out.join("\n") + "\n";
}
