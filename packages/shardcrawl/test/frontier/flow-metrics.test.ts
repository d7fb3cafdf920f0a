// The pressure metrics render as clean Prometheus text: valid names, counters end in _total,
// every sample's family has HELP and TYPE, label values escaped, per-host gauges for the top hosts.
// (test/observe.test.ts runs promtool on a real node's scrape.)
import { describe, expect, it } from "vitest";
import { renderMetrics } from "../../src/node/metrics.js";
import type { NodeStats } from "../../src/node/open-frontier.js";

const stats: NodeStats = {
  fetched: 10, parsed: 9, failed: 1, errors: 1, robotsDisallowed: 0, discovered: 30, outOfScope: 2, queued: 20, hostsQueued: 3,
  readyHosts: 2, dueHosts: 1, leases: 4, parseQueue: 5, parseInFlight: 1,
  counters: { retries: 5, "retry:http-429": 3, "retry:reset": 2, "blockedMs:parse-full": 2500, "dropped:frontier-full": 7, "filtered:path-depth": 1, shed: 2, spilled: 4, readmitted: 4, fetched: 10, failed: 1, parseBytes: 5000 },
  pressure: {
    hosts: [{ host: 'we"ird\\host', pressure: 4, inFlight: 1, limit: 2, delayMultiplier: 2, queued: 9, retryRatio: 0.25 }],
    hostsUnderBackoff: 1, redisUsedBytes: 1_000_000, redisBudgetBytes: 2_000_000, parseQueueMax: 16, parseQueueOldestAgeMs: 1500,
    spillWaiting: 0, spillOnDisk: 3,
  },
};

describe("pressure metrics", () => {
  it("are valid Prometheus text with the flow-control families", async () => {
    const text = await renderMetrics({ node: "n1", stats });
    const types = new Map<string, string>();
    for (const line of text.trim().split("\n")) {
      const t = /^# TYPE (\S+) (counter|gauge)$/.exec(line);
      if (t) types.set(t[1]!, t[2]!);
      if (line.startsWith("#")) continue;
      if (line === "") continue;
      const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)\{((?:[a-zA-Z_][a-zA-Z0-9_]*="(?:[^"\\\n]|\\["\\n])*",?)+)\} (-?[0-9.e+-]+)$/.exec(line);
      expect(m, line).not.toBeNull();
      const type = types.get(m![1]!);
      expect(type, `TYPE for ${m![1]}`).toBeDefined();
      if (type === "counter") expect(m![1]).toMatch(/_total$/);
    }
    expect(text).toContain('shardcrawl_fetch_retries_total{node="n1",reason="http-429"} 3');
    expect(text).toContain('shardcrawl_fetch_blocked_seconds_total{node="n1",reason="parse-full"} 2.5');
    expect(text).toContain('shardcrawl_fetch_retry_ratio{node="n1"} 0.3125');
    expect(text).toContain('shardcrawl_host_concurrency_limit{node="n1",host="we\\"ird\\\\host"} 2');
    expect(text).toContain('shardcrawl_redis_memory_budget_bytes{node="n1"} 2000000');
    expect(text).toContain('shardcrawl_frontier_spilled_total{node="n1"} 4');
    expect(text).toContain('shardcrawl_parse_queue_oldest_age_seconds{node="n1"} 1.5');
    // Counters straight from the stats hash, by label, and the derived pages by outcome.
    expect(text).toContain('shardcrawl_pages_fetched_total{node="n1"} 10');
    expect(text).toContain('shardcrawl_frontier_rejected_total{node="n1",reason="frontier-full"} 7');
  });

  it("render pages and bytes by outcome, errors by class, TLS, processes, loop lag and the bottleneck", async () => {
    const text = await renderMetrics({
      node: "n1",
      stats: { ...stats, counters: { ...stats.counters, "page:2xx": 8, "page:robots-disallowed": 2, "pageBytes:2xx": 8000, "err:dns": 1, "parseErr:decode-bomb": 1, "tls:handshakes": 4, "tls:resumed": 3, "conn:opened": 9, "dns:lookups": 12, "dns:hits": 30, "dnsFail:nxdomain": 2, "dnsFail:transient": 1, "dns:lookupMs": 600 } },
      processes: [{ process: "fetcher-0", pid: 10, cpuSeconds: 1.25, rssBytes: 5e7 }],
      eventLoop: [{ process: "supervisor", meanSeconds: 0.001, maxSeconds: 0.02 }],
      restarts: 2, fetchCapacity: 512, bottleneck: { stage: "parse" },
    });
    for (const line of [
      'shardcrawl_pages_total{node="n1",outcome="2xx"} 8', 'shardcrawl_pages_total{node="n1",outcome="robots-disallowed"} 2',
      'shardcrawl_page_bytes_total{node="n1",outcome="2xx"} 8000', 'shardcrawl_fetch_errors_total{node="n1",class="dns"} 1',
      'shardcrawl_parse_errors_total{node="n1",class="decode-bomb"} 1', 'shardcrawl_tls_handshakes_total{node="n1"} 4',
      'shardcrawl_tls_session_reuses_total{node="n1"} 3', 'shardcrawl_connections_opened_total{node="n1"} 9', 'shardcrawl_process_cpu_seconds_total{node="n1",process="fetcher-0"} 1.25',
      'shardcrawl_process_resident_memory_bytes{node="n1",process="fetcher-0"} 50000000', 'shardcrawl_event_loop_lag_max_seconds{node="n1",process="supervisor"} 0.02',
      'shardcrawl_child_restarts_total{node="n1"} 2', 'shardcrawl_dns_lookups_total{node="n1"} 12', 'shardcrawl_dns_cache_hits_total{node="n1"} 30',
      'shardcrawl_dns_failures_total{node="n1",class="nxdomain"} 2', 'shardcrawl_dns_failures_total{node="n1",class="transient"} 1', 'shardcrawl_dns_lookup_seconds_total{node="n1"} 0.6', 'shardcrawl_fetch_capacity_requests{node="n1"} 512', 'shardcrawl_bottleneck_stage{node="n1",stage="parse"} 1',
    ]) expect(text).toContain(line);
  });
});
