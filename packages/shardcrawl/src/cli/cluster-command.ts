// `shardcrawl cluster plan --cluster <file> [--write]`: the process topology of a cluster file, one
// line per node (tab-separated: name, host, statusPort, out, config file, seed file or -), for scripts/cluster.sh.
// --write also writes each node's full config to <out>/node.json for `shardcrawl node --config`.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { loadClusterFile } from "./cluster-file.js";
import { UsageError } from "./flags.js";

export const CLUSTER_USAGE = `usage: shardcrawl cluster plan --cluster <file> [--write] [--json]

Prints each node of the cluster file as: name<TAB>host<TAB>statusPort<TAB>out<TAB>config-file<TAB>seeds
(--json: the whole resolved cluster). --write writes <out>/node.json for every node, the config
that \`shardcrawl node --config <out>/node.json\` runs with.
`;

export function runClusterCommand(argv: string[]): number {
  const [sub, ...rest] = argv;
  if (sub === "--help" || sub === "-h" || sub === undefined) {
    process.stdout.write(CLUSTER_USAGE);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== "plan") throw new UsageError(`cluster: unknown subcommand ${JSON.stringify(sub)} (expected plan)`);
  let v;
  try {
    v = parseArgs({ args: rest, strict: true, options: { cluster: { type: "string" }, write: { type: "boolean" }, json: { type: "boolean" }, help: { type: "boolean", short: "h" } } }).values;
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
      writeFileSync(cfg, JSON.stringify(n.config, null, 2));
    }
    process.stdout.write(`${n.name}\t${n.host}\t${n.statusPort}\t${n.out}\t${cfg}\t${n.config.seeds ?? "-"}\n`);
  }
  return 0;
}
