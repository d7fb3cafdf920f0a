// The cluster file (YAML): nodes, weights, per-node overrides, shared settings. One file drives
// `shardcrawl status --cluster`, `shardcrawl cluster plan` (which scripts/cluster.sh reads) and the
// per-node configs. Every mistake is reported with the key path and what was expected.
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
import { isShardKeyKind, type ShardKeyKind } from "../shard/shard-key.js";
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

const TOP_KEYS = new Set(["name", "shardKey", "seeds", "outRoot", "defaults", "nodes"]);
const NODE_KEYS = new Set(["name", "weight", "host", "statusPort", "out", "config"]);

function isMap(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function clusterFromObject(obj: unknown, file: string): ClusterSpec {
  const errors: string[] = [];
  const err = (path: string, msg: string) => errors.push(`${file}: ${path}: ${msg}`);
  if (!isMap(obj)) throw new UsageError(`${file}: expected a mapping at the top level (name, shardKey, seeds, defaults, nodes)`);
  for (const k of Object.keys(obj)) if (!TOP_KEYS.has(k)) err(k, `unknown key (expected one of ${[...TOP_KEYS].join(", ")})`);
  const base = dirname(resolve(file));
  const path = (p: string) => (isAbsolute(p) ? p : join(base, p));
  const name = obj.name === undefined ? "cluster" : obj.name;
  if (typeof name !== "string") err("name", `expected a string, got ${JSON.stringify(name)}`);
  const shardKey = obj.shardKey ?? "domain";
  if (!isShardKeyKind(shardKey)) err("shardKey", `expected domain or host, got ${JSON.stringify(shardKey)}`);
  if (obj.seeds !== undefined && typeof obj.seeds !== "string") err("seeds", `expected a file path, got ${JSON.stringify(obj.seeds)}`);
  const outRoot = obj.outRoot ?? "out/cluster";
  if (typeof outRoot !== "string") err("outRoot", `expected a directory path, got ${JSON.stringify(outRoot)}`);
  const defaults = obj.defaults ?? {};
  if (!isMap(defaults)) err("defaults", "expected a mapping of node settings");
  if (!Array.isArray(obj.nodes) || obj.nodes.length === 0) {
    err("nodes", "expected a non-empty list of nodes (each with at least a name)");
    throw new UsageError(errors.join("\n"));
  }
  const raw = obj.nodes as unknown[];
  const shardNodes = raw.map((n, i) => {
    if (!isMap(n)) {
      err(`nodes[${i}]`, "expected a mapping with name, weight, host, statusPort, out, config");
      return { name: `?${i}`, weight: 1 };
    }
    for (const k of Object.keys(n)) if (!NODE_KEYS.has(k)) err(`nodes[${i}].${k}`, `unknown key (expected one of ${[...NODE_KEYS].join(", ")})`);
    return { name: n.name as string, weight: (n.weight ?? 1) as number };
  });
  for (const e of validateShardNodes(shardNodes)) errors.push(`${file}: ${e}`);
  if (errors.length) throw new UsageError(errors.join("\n"));

  const ports = new Map<string, string>();
  const nodes: ClusterNode[] = [];
  raw.forEach((n0, i) => {
    const n = n0 as Record<string, unknown>;
    const nodeName = n.name as string;
    const host = n.host ?? "127.0.0.1";
    if (typeof host !== "string" || !host) err(`nodes[${i}].host`, `expected a host name or address, got ${JSON.stringify(host)}`);
    const statusPort = n.statusPort ?? 0;
    if (typeof statusPort !== "number" || !Number.isInteger(statusPort) || statusPort < 0 || statusPort > 65535) err(`nodes[${i}].statusPort`, `expected a port 0..65535, got ${JSON.stringify(statusPort)}`);
    else if (statusPort > 0) {
      const where = `${host as string}:${statusPort}`;
      if (ports.has(where)) err(`nodes[${i}].statusPort`, `${where} is already used by ${ports.get(where)}`);
      ports.set(where, nodeName);
    }
    const out = n.out ?? join(outRoot as string, nodeName);
    if (typeof out !== "string") err(`nodes[${i}].out`, `expected a directory path, got ${JSON.stringify(out)}`);
    const overrides = n.config ?? {};
    if (!isMap(overrides)) {
      err(`nodes[${i}].config`, "expected a mapping of node settings");
      return;
    }
    const shard: ShardConfig = { self: nodeName, nodes: shardNodes, key: shardKey as ShardKeyKind };
    const merged: Record<string, unknown> = {
      ...(isMap(defaults) ? defaults : {}), ...overrides,
      out: path(out as string), nodeName, statusPort, shard,
    };
    if (typeof obj.seeds === "string" && merged.seeds === undefined) merged.seeds = path(obj.seeds);
    if (typeof merged.caFile === "string") merged.caFile = path(merged.caFile);
    try {
      const config = nodeConfigFromObject(merged, `${file}: nodes[${i}] (${nodeName})`);
      nodes.push({ name: nodeName, weight: (n.weight ?? 1) as number, host: host as string, statusPort: Number(statusPort), out: config.out, config });
    } catch (e) {
      errors.push((e as Error).message);
    }
  });
  if (errors.length) throw new UsageError(errors.join("\n"));
  return { file, name: name as string, shardKey: shardKey as ShardKeyKind, ...(typeof obj.seeds === "string" ? { seeds: path(obj.seeds) } : {}), nodes };
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
