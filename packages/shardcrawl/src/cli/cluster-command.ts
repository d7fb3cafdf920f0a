// `shardcrawl cluster plan --cluster <file> [--write]`: the process topology of a cluster file, one
// line per node (tab-separated: name, host, statusPort, out, config file, seed file or -), for scripts/cluster.sh.
// --write also writes each node's full config to <out>/node.json for `shardcrawl node --config`.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { loadClusterFile } from "./cluster-file.js";
import { UsageError } from "./flags.js";
import { prometheusConfig } from "./prometheus-config.js";

export function runClusterPlan(v: { cluster?: string; write?: boolean; json?: boolean }): number {
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

export function runClusterPrometheus(v: { cluster?: string; out?: string; "token-file"?: string }): number {
  if (!v.cluster) throw new UsageError("cluster prometheus: --cluster <file> is required");
  const command = ["shardcrawl cluster prometheus --cluster", v.cluster, ...(v["token-file"] ? ["--token-file", v["token-file"]] : []), "--out <file>"].join(" ");
  const text = prometheusConfig(loadClusterFile(v.cluster), { command, ...(v["token-file"] ? { tokenFile: v["token-file"] } : {}) });
  if (v.out) writeFileSync(v.out, text);
  else process.stdout.write(text);
  return 0;
}
