// `shardcrawl shard`: splits a seed list by owner, one file per node, and prints the balance.
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { readSeedFile } from "../node/seeds.js";
import { ShardRouter, equalNodes, type ShardConfig } from "../shard/shard-spec.js";
import { isShardKeyKind } from "../shard/shard-key.js";
import { hostOf } from "../url/normalize.js";
import { loadClusterFile } from "./cluster-file.js";
import { UsageError } from "./flags.js";

export const SHARD_USAGE = `usage: shardcrawl shard (--nodes <n> | --cluster <file>) --seeds <file> --out <dir> [--shard-key domain|host]

Writes <dir>/<node>.txt with the seeds each node owns (rendezvous hashing over the shard key) and
prints how many each got. Nodes of --nodes n are named node0..node<n-1> with weight 1.
`;

export const SHARD_OPTIONS = { nodes: { type: "string" }, cluster: { type: "string" }, seeds: { type: "string" }, out: { type: "string" }, "shard-key": { type: "string" }, help: { type: "boolean", short: "h" } } as const;

export function runShardCommand(argv: string[]): number {
  let v;
  try {
    v = parseArgs({ args: argv, strict: true, options: SHARD_OPTIONS }).values;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (v.help) {
    process.stdout.write(SHARD_USAGE);
    return 0;
  }
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
