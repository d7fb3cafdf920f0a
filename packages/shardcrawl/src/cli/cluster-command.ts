// `shardcrawl cluster plan --cluster <file> [--write]`: the process topology of a cluster file, one
// line per node (tab-separated: name, host, statusPort, out, config file, seed file or -), for scripts/cluster.sh.
// --write also writes each node's full config to <out>/node.json for `shardcrawl node --config`.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadClusterFile } from "./cluster-file.js";
import { UsageError } from "./flags.js";
import { DEFAULT_TOKEN_FILE, prometheusConfig } from "./prometheus-config.js";

export const CLUSTER_USAGE = `usage: shardcrawl cluster plan --cluster <file> [--write] [--json]
       shardcrawl cluster prometheus --cluster <file> [--out <file>] [--token-file <path>]

Prints each node of the cluster file as: name<TAB>host<TAB>statusPort<TAB>out<TAB>config-file<TAB>seeds
(--json: the whole resolved cluster). --write writes <out>/node.json for every node, the config
that \`shardcrawl node --config <out>/node.json\` runs with.

prometheus prints (or writes to --out) the Prometheus configuration that scrapes every node's
/metrics, e.g. deploy/prometheus.yml from deploy/cluster.fleet.yaml; --token-file is where
Prometheus reads the nodes' bearer token (default ${DEFAULT_TOKEN_FILE}).
`;

export const CLUSTER_PLAN_OPTIONS = { cluster: { type: "string" }, write: { type: "boolean" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } } as const;
export const CLUSTER_PROMETHEUS_OPTIONS = { cluster: { type: "string" }, out: { type: "string" }, "token-file": { type: "string" }, help: { type: "boolean", short: "h" } } as const;

export function runClusterCommand(argv: string[]): number {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) {
    process.stdout.write(CLUSTER_USAGE);
    return sub === undefined ? 2 : 0;
  }
  if (sub === "prometheus") return runPrometheusCommand(rest);
  if (sub !== "plan") throw new UsageError(`cluster: unknown subcommand ${JSON.stringify(sub)} (expected plan or prometheus)`);
  let v;
  try {
    v = parseArgs({ args: rest, strict: true, options: CLUSTER_PLAN_OPTIONS }).values;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (v.help) {
    process.stdout.write(CLUSTER_USAGE);
    return 0;
  }
  if (!v.cluster) throw new UsageError("cluster plan: --cluster <file> is required");
  const cluster = loadClusterFile(v.cluster);
  if (v.json) {
    process.stdout.write(`${JSON.stringify(cluster, null, 2)}\n`);
    return 0;
  }
  for (const n of cluster.nodes) {
    const cfg = join(n.out, "node.json");
    if (v.write) {
      mkdirSync(n.out, { recursive: true });
      // queueSizing is a record of how bounds were derived, not a setting: the node re-derives it.
      const { queueSizing: _derived, ...settings } = n.config;
      writeFileSync(cfg, JSON.stringify(settings, null, 2));
    }
    process.stdout.write(`${n.name}\t${n.host}\t${n.statusPort}\t${n.out}\t${cfg}\t${n.config.seeds ?? "-"}\n`);
  }
  return 0;
}

function runPrometheusCommand(argv: string[]): number {
  let v;
  try {
    v = parseArgs({ args: argv, strict: true, options: CLUSTER_PROMETHEUS_OPTIONS }).values;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (v.help) {
    process.stdout.write(CLUSTER_USAGE);
    return 0;
  }
  if (!v.cluster) throw new UsageError("cluster prometheus: --cluster <file> is required");
  const command = ["shardcrawl cluster prometheus --cluster", v.cluster, ...(v["token-file"] ? ["--token-file", v["token-file"]] : []), "--out <file>"].join(" ");
  const text = prometheusConfig(loadClusterFile(v.cluster), { command, ...(v["token-file"] ? { tokenFile: v["token-file"] } : {}) });
  if (v.out) writeFileSync(v.out, text);
  else process.stdout.write(text);
  return 0;
}
