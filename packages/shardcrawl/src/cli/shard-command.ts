// `shardcrawl shard`: splits a seed list by owner, one file per node, and prints the balance.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readSeedFile } from "../node/seeds.js";
import { ShardRouter, equalNodes, type ShardConfig } from "../shard/shard-spec.js";
import { isShardKeyKind } from "../shard/shard-key.js";
import { hostOf } from "../url/normalize.js";
import { loadClusterFile } from "./cluster-file.js";
import { UsageError } from "./flags.js";

export function runShardCommand(v: { nodes?: string; cluster?: string; seeds?: string; out?: string; "shard-key"?: string }): number {
  if (!v.seeds || !v.out) throw new UsageError("shard: --seeds <file> and --out <dir> are required");
  if ((v.nodes === undefined) === (v.cluster === undefined)) throw new UsageError("shard: give exactly one of --nodes <n> or --cluster <file>");
  let spec: ShardConfig;
  if (v.cluster) {
    const c = loadClusterFile(v.cluster);
    spec = { self: c.nodes[0]!.name, nodes: c.nodes.map((n) => ({ name: n.name, weight: n.weight })), key: c.shardKey };
  } else {
    const n = Number(v.nodes);
    if (!Number.isInteger(n) || n < 1 || n > 4096) throw new UsageError(`--nodes: expected 1..4096, got ${JSON.stringify(v.nodes)}`);
    const key = v["shard-key"] ?? "domain";
    if (!isShardKeyKind(key)) throw new UsageError(`--shard-key: expected domain or host, got ${JSON.stringify(key)}`);
    spec = { self: "node0", nodes: equalNodes(n), key };
  }
  const router = new ShardRouter(spec);
  const seeds = readSeedFile(v.seeds, 2048);
  const byNode = new Map<string, string[]>(spec.nodes.map((n) => [n.name, []]));
  for (const url of seeds.accepted) byNode.get(router.ownerOfHost(hostOf(url) ?? ""))!.push(url);
  mkdirSync(v.out, { recursive: true });
  for (const [name, urls] of byNode) {
    writeFileSync(join(v.out, `${name}.txt`), urls.length ? `${urls.join("\n")}\n` : "");
    process.stdout.write(`${name}\t${urls.length}\t${join(v.out, `${name}.txt`)}\n`);
  }
  if (seeds.rejected.length) process.stderr.write(`${seeds.rejected.length} seed lines rejected (first: line ${seeds.rejected[0]!.line}: ${seeds.rejected[0]!.reason})\n`);
  return 0;
}
