// Weighted rendezvous (highest-random-weight) hashing: every node scores every key and the highest
// score owns it. Adding a node moves only the keys the new node now wins (its weight's share), and
// removing one moves only its own keys.
//
// Stability: the score depends only on the node's NAME, its weight and the key, hashed with
// SHA-256 (node:crypto, identical on every machine, process and Node version). Never change the
// hash input layout or the score formula: a test pins known assignments, and a change would move
// most domains between nodes in a running cluster.
//
// Score (Schindelhauer & Schomaker's weighted form, as in Resch's "logarithmic method"):
//   u = (first 53 bits of SHA-256(name NUL key) + 0.5) / 2^53, in (0, 1)
//   score = -weight / ln(u)
// so P(node wins) = weight / sum(weights) exactly, for any number of nodes.
import { createHash } from "node:crypto";

export interface ShardNode {
  /** Stable node name: it, not a list position, is what the hash sees. */
  name: string;
  /** Relative capacity (> 0); a node of weight 2 owns twice the keys of a node of weight 1. */
  weight: number;
}

const TWO_POW_53 = 2 ** 53;

/** A uniform number in (0, 1) from name and key; exported for the pinning test. */
export function unitHash(name: string, key: string): number {
  const d = createHash("sha256").update(name).update("\0").update(key).digest();
  // 21 bits from the first word, 32 from the second: 53 bits, exact in a double.
  const hi = d.readUInt32BE(0) >>> 11;
  const lo = d.readUInt32BE(4);
  return (hi * 2 ** 32 + lo + 0.5) / TWO_POW_53;
}

export function score(node: ShardNode, key: string): number {
  return -node.weight / Math.log(unitHash(node.name, key));
}

/** Index (into `nodes`) of the owner of `key`. Ties (practically impossible) go to the smaller name. */
export function ownerIndex(nodes: readonly ShardNode[], key: string): number {
  if (nodes.length === 0) throw new Error("rendezvous: no nodes");
  let best = 0;
  let bestScore = -Infinity;
  for (let i = 0; i < nodes.length; i++) {
    const s = score(nodes[i]!, key);
    if (s > bestScore || (s === bestScore && nodes[i]!.name < nodes[best]!.name)) {
      best = i;
      bestScore = s;
    }
  }
  return best;
}

export function validateShardNodes(nodes: readonly ShardNode[]): string[] {
  const errors: string[] = [];
  if (nodes.length === 0) errors.push("expected at least one node");
  const names = new Set<string>();
  nodes.forEach((n, i) => {
    if (typeof n.name !== "string" || !/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/.test(n.name)) errors.push(`nodes[${i}].name: expected 1-63 letters, digits, '.', '_' or '-', got ${JSON.stringify(n.name)}`);
    else if (names.has(n.name)) errors.push(`nodes[${i}].name: duplicate node name ${JSON.stringify(n.name)}`);
    names.add(n.name);
    if (typeof n.weight !== "number" || !Number.isFinite(n.weight) || n.weight <= 0) errors.push(`nodes[${i}].weight: expected a number > 0, got ${JSON.stringify(n.weight)}`);
  });
  return errors;
}
