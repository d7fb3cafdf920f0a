// `shardcrawl node`: a long-lived node from a config file, or one node of a cluster file.
import { runNode } from "../node/supervisor.js";
import { exitCodeFor } from "../node/exit-codes.js";
import { loadClusterFile } from "./cluster-file.js";
import { loadNodeConfigFile } from "./config-file.js";
import { UsageError } from "./flags.js";

export async function runNodeCommand(v: { config?: string; cluster?: string; name?: string }): Promise<number> {
  if (v.cluster) {
    // One cluster file for every node (docker-compose, systemd): pick this node by name.
    if (!v.name) throw new UsageError("node: --cluster <file> needs --name <node>");
    const node = loadClusterFile(v.cluster).nodes.find((n) => n.name === v.name);
    if (!node) throw new UsageError(`node: ${v.cluster} has no node named ${JSON.stringify(v.name)}`);
    return exitCodeFor((await runNode(node.config)).reason);
  }
  if (!v.config) throw new UsageError("node: --config <file> (or --cluster <file> --name <node>) is required");
  return exitCodeFor((await runNode(loadNodeConfigFile(v.config))).reason);
}
