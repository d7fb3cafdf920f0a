// The Prometheus configuration for a cluster, generated from its cluster file (the fleet
// inventory), so the scrape targets never drift from the nodes that run: one static target per
// node (host:statusPort) labelled with its cluster and node name, and the bearer token file when
// any node binds off loopback (node/status-server.ts asks for SHARDCRAWL_STATUS_TOKEN there).
import { stringify } from "yaml";
import type { ClusterSpec } from "./cluster-file.js";
import { UsageError } from "./flags.js";

export const DEFAULT_TOKEN_FILE = "/etc/prometheus/shardcrawl-status.token";
const LOOPBACK = new Set(["127.0.0.1", "::1", "localhost"]);

export interface PrometheusOptions {
  /** Where Prometheus reads SHARDCRAWL_STATUS_TOKEN from (deploy it with the config). */
  tokenFile?: string;
  scrapeInterval?: string;
  /** How the file was made, for its header comment. */
  command?: string;
}

export function prometheusConfig(cluster: ClusterSpec, opts: PrometheusOptions = {}): string {
  const missing = cluster.nodes.filter((n) => n.statusPort <= 0).map((n) => n.name);
  if (missing.length) throw new UsageError(`${cluster.file}: nodes ${missing.join(", ")} have no fixed statusPort; Prometheus needs one per node`);
  const needsToken = cluster.nodes.some((n) => !LOOPBACK.has(n.config.statusBind));
  const target = (host: string, port: number) => `${host.includes(":") ? `[${host}]` : host}:${port}`;
  const config = {
    global: { scrape_interval: opts.scrapeInterval ?? "15s", evaluation_interval: opts.scrapeInterval ?? "15s" },
    scrape_configs: [
      {
        job_name: "shardcrawl",
        metrics_path: "/metrics",
        scrape_timeout: "10s",
        ...(needsToken ? { authorization: { type: "Bearer", credentials_file: opts.tokenFile ?? DEFAULT_TOKEN_FILE } } : {}),
        static_configs: cluster.nodes.map((n) => ({ targets: [target(n.host, n.statusPort)], labels: { cluster: cluster.name, shardcrawl_node: n.name } })),
      },
    ],
  };
  const header = [
    `# Prometheus configuration for the shardcrawl cluster "${cluster.name}" (${cluster.nodes.length} nodes). Generated; do not edit:`,
    `#   ${opts.command ?? "shardcrawl cluster prometheus --cluster <file>"}`,
    ...(needsToken ? [`# The nodes bind off loopback: put their SHARDCRAWL_STATUS_TOKEN in ${opts.tokenFile ?? DEFAULT_TOKEN_FILE} (mode 0600).`] : []),
    "# Dashboards: deploy/grafana/shardcrawl.json (import it into Grafana with this Prometheus as its data source).",
  ];
  return `${header.join("\n")}\n${stringify(config, { lineWidth: 0 })}`;
}
