// The cluster file (YAML): nodes, weights, per-node overrides, shared settings. One file drives
// `shardcrawl status --cluster`, `shardcrawl cluster plan` (which scripts/cluster.sh reads) and the
// per-node configs. CLUSTER_FILE_SCHEMA checks it: every mistake is reported with the key path.
//
//   name: demo                 # optional, for display
//   shardKey: domain           # domain (default) or host
//   seeds: seeds.txt           # the whole cluster's seed list (every node reads it; relative to the file)
//   outRoot: out/cluster       # default output root; a node's out defaults to <outRoot>/<name>
//   defaults: { ... }          # NodeConfig keys (camelCase, as in node/config.ts) for every node
//   nodes:
//     - name: node0            # stable: the shard hash sees the name, never the list position
//       weight: 1              # relative capacity (default 1)
//       host: 127.0.0.1        # where its /status answers (and ssh goes, for the fleet)
//       statusPort: 9101
//       out: out/cluster/node0 # optional
//       config: { ... }        # NodeConfig overrides for this node
import { readFileSync } from "node:fs";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { parse as parseYaml } from "yaml";
import type { NodeConfig } from "../node/config.js";
import { z } from "zod";
import type { ShardKeyKind } from "../shard/shard-key.js";
import { formatIssue, NODE_CONFIG_SCHEMA } from "../node/config-schema.js";
import type { ShardConfig } from "../shard/shard-spec.js";
import { validateShardNodes } from "../shard/rendezvous.js";
import { nodeConfigFromObject } from "./config-file.js";
import { UsageError } from "./flags.js";

export interface ClusterNode {
  name: string;
  weight: number;
  host: string;
  statusPort: number;
  out: string;
  config: NodeConfig;
}

export interface ClusterSpec {
  file: string;
  name: string;
  shardKey: ShardKeyKind;
  seeds?: string;
  nodes: ClusterNode[];
}

/** One node of a cluster file. */
const CLUSTER_NODE_SCHEMA = z.strictObject({
  name: z.string().min(1).describe("stable node name: the shard hash sees the name, never the list position"),
  weight: z.number().positive().default(1).describe("relative capacity"),
  host: z.string().min(1).default("127.0.0.1").describe("where its /status answers (and ssh goes, for the fleet)"),
  statusPort: z.number().int().min(0).max(65535).default(0).describe("its /status and /metrics port (0: any free port)"),
  out: z.string().optional().describe("output folder (default <outRoot>/<name>)"),
  config: NODE_CONFIG_SCHEMA.optional().describe("node settings for this node, over the defaults"),
});

/** The cluster file; its node settings are the node config schema's. */
export const CLUSTER_FILE_SCHEMA = z.strictObject({
  name: z.string().default("cluster").describe("for display"),
  shardKey: z.enum(["domain", "host"]).default("domain").describe("shard by registrable domain or by host"),
  seeds: z.string().optional().describe("the whole cluster's seed list (every node reads it; relative to the file)"),
  outRoot: z.string().default("out/cluster").describe("default output root; a node's out defaults to <outRoot>/<name>"),
  defaults: NODE_CONFIG_SCHEMA.optional().describe("node settings for every node"),
  nodes: z.array(CLUSTER_NODE_SCHEMA).min(1, "expected a non-empty list of nodes (each with at least a name)").describe("the nodes (each with at least a name)"),
});

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function clusterFromObject(obj: unknown, file: string): ClusterSpec {
  const errors: string[] = [];
  const err = (path: string, msg: string) => errors.push(`${file}: ${path}: ${msg}`);
  if (!isMap(obj)) throw new UsageError(`${file}: expected a mapping at the top level (name, shardKey, seeds, defaults, nodes)`);
  const checked = CLUSTER_FILE_SCHEMA.safeParse(obj, { reportInput: true });
  if (!checked.success) throw new UsageError(checked.error.issues.flatMap((i) => formatIssue(i).split("\n")).map((e) => `${file}: ${e}`).join("\n"));
  const spec = checked.data;
  const base = dirname(resolve(file));
  const path = (p: string) => (isAbsolute(p) ? p : join(base, p));
  const { name, shardKey, outRoot } = spec;
  // Settings are merged as written (not with the schema's defaults filled), so a node's own file
  // semantics hold: explicit queue bounds stay explicit, exitWhenDone stays as written.
  const defaults = isMap(obj.defaults) ? obj.defaults : {};
  const raw = obj.nodes as Record<string, unknown>[];
  const shardNodes = spec.nodes.map((n) => ({ name: n.name, weight: n.weight }));
  for (const e of validateShardNodes(shardNodes)) errors.push(`${file}: ${e}`);
  if (errors.length) throw new UsageError(errors.join("\n"));

  const ports = new Map<string, string>();
  const nodes: ClusterNode[] = [];
  spec.nodes.forEach((n, i) => {
    const nodeName = n.name;
    const { host, statusPort } = n;
    if (statusPort > 0) {
      const where = `${host}:${statusPort}`;
      if (ports.has(where)) err(`nodes[${i}].statusPort`, `${where} is already used by ${ports.get(where)}`);
      ports.set(where, nodeName);
    }
    const out = n.out ?? join(outRoot, nodeName);
    const overrides = raw[i]!.config ?? {};
    const shard: ShardConfig = { self: nodeName, nodes: shardNodes, key: shardKey as ShardKeyKind };
    const merged: Record<string, unknown> = { ...defaults, ...(overrides as object), out: path(out), nodeName, statusPort, shard };
    if (spec.seeds !== undefined && merged.seeds === undefined) merged.seeds = path(spec.seeds);
    if (typeof merged.caFile === "string") merged.caFile = path(merged.caFile);
    try {
      const config = nodeConfigFromObject(merged, `${file}: nodes[${i}] (${nodeName})`);
      nodes.push({ name: nodeName, weight: n.weight, host, statusPort, out: config.out, config });
    } catch (e) {
      errors.push((e as Error).message);
    }
  });
  if (errors.length) throw new UsageError(errors.join("\n"));
  return { file, name, shardKey, ...(spec.seeds !== undefined ? { seeds: path(spec.seeds) } : {}), nodes };
}

export function loadClusterFile(file: string): ClusterSpec {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (e) {
    throw new UsageError(`cannot read cluster file ${file}: ${(e as Error).message}`);
  }
  let obj: unknown;
  try {
    obj = parseYaml(text);
  } catch (e) {
    throw new UsageError(`${file}: not valid YAML: ${(e as Error).message}`);
  }
  return clusterFromObject(obj, file);
}
