// Cluster flags of `shardcrawl crawl` (--shard i/n, --shard-key): membership of n equal nodes
// without a cluster file.
import { parseShardFlag, type ShardConfig } from "../shard/shard-spec.js";
import { isShardKeyKind } from "../shard/shard-key.js";
import { UsageError } from "./flags.js";

export const SHARD_FLAGS = [
  { flag: "shard", arg: "i>/<n", help: "crawl only the shard node<i> owns among n equal nodes (rendezvous hashing); links owned by other nodes go to <out>/outbox/<node>/ for exchange" },
  { flag: "shard-key", arg: "domain|host", help: "shard by registrable domain (default) or by host" },
] as const;

/** The shard config the flags ask for (none without --shard). */
export function shardFromFlags(shardText: string | undefined, key: string | undefined): ShardConfig | undefined {
  if (key !== undefined && !isShardKeyKind(key)) throw new UsageError(`--shard-key: expected domain or host, got ${JSON.stringify(key)}`);
  if (shardText === undefined) {
    if (key !== undefined) throw new UsageError("--shard-key needs --shard <i>/<n>");
    return undefined;
  }
  try {
    return parseShardFlag(shardText, key === "host" ? "host" : "domain");
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}
