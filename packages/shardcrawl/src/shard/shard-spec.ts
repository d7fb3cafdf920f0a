// What one node knows about the cluster's sharding: all nodes (names, weights), which one it is,
// and the key kind. `ShardRouter` answers "who owns this host?" with a bounded cache, because a
// page's links mostly share a few hosts and each answer costs one SHA-256 per node.
import { ownerIndex, validateShardNodes, type ShardNode } from "./rendezvous.js";
import { isShardKeyKind, shardKeyOf, type ShardKeyKind } from "./shard-key.js";

export interface ShardConfig {
  /** This node's name (one of nodes[].name). */
  self: string;
  nodes: ShardNode[];
  key: ShardKeyKind;
}

export function validateShardConfig(s: ShardConfig): string[] {
  const errors = validateShardNodes(s.nodes).map((e) => `shard.${e}`);
  if (!isShardKeyKind(s.key)) errors.push(`shard.key: expected domain or host, got ${JSON.stringify(s.key)}`);
  if (!s.nodes.some((n) => n.name === s.self)) errors.push(`shard.self: ${JSON.stringify(s.self)} is not one of the nodes (${s.nodes.map((n) => n.name).join(", ")})`);
  return errors;
}

/** `--shard i/n`: n equal nodes named node0..node{n-1}; this is node{i}. */
export function parseShardFlag(text: string, key: ShardKeyKind = "domain"): ShardConfig {
  const m = /^(\d+)\/(\d+)$/.exec(text.trim());
  if (!m) throw new Error(`--shard: expected <index>/<count> such as 0/3, got ${JSON.stringify(text)}`);
  const i = Number(m[1]);
  const n = Number(m[2]);
  if (n < 1 || n > 4096) throw new Error(`--shard: node count must be 1..4096, got ${n}`);
  if (i >= n) throw new Error(`--shard: index must be below the count (0..${n - 1}), got ${i}`);
  return { self: `node${i}`, nodes: equalNodes(n), key };
}

export function equalNodes(n: number): ShardNode[] {
  return Array.from({ length: n }, (_, i) => ({ name: `node${i}`, weight: 1 }));
}

const CACHE_MAX = 100_000;

export class ShardRouter {
  private readonly cache = new Map<string, string>();
  private readonly names: string[];

  constructor(readonly spec: ShardConfig) {
    this.names = spec.nodes.map((n) => n.name);
  }

  /** Name of the node that owns this host. */
  ownerOfHost(host: string): string {
    let owner = this.cache.get(host);
    if (owner === undefined) {
      owner = this.names[ownerIndex(this.spec.nodes, shardKeyOf(host, this.spec.key))]!;
      // Bounded: when full, start over (cheap, and hot hosts come back at once).
      if (this.cache.size >= CACHE_MAX) this.cache.clear();
      this.cache.set(host, owner);
    }
    return owner;
  }

  ownsHost(host: string): boolean {
    return this.ownerOfHost(host) === this.spec.self;
  }
}
