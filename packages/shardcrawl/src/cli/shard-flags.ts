// Cluster flags of `shardcrawl crawl` (--shard i/n, --shard-key), taken off the argument list
// before the crawl flags are parsed, so the crawl's own flag parser stays as it is.
import { parseShardFlag, type ShardConfig } from "../shard/shard-spec.js";
import { isShardKeyKind } from "../shard/shard-key.js";
import { UsageError } from "./flags.js";

export const SHARD_FLAGS_USAGE = `cluster flags:
  --shard <i>/<n>             crawl only the shard node<i> owns among n equal nodes (rendezvous hashing);
                              links owned by other nodes go to <out>/outbox/<node>/ for exchange
  --shard-key <domain|host>   shard by registrable domain (default) or by host
`;

/** The cluster flags as a parseArgs options object, for shell completion and "did you mean". */
export const SHARD_FLAG_OPTIONS = { shard: { type: "string" }, "shard-key": { type: "string" } } as const;

/** Removes the shard flags from argv; returns the rest and the shard config (if any). */
export function takeShardFlags(argv: string[]): { rest: string[]; shard?: ShardConfig } {
  const rest: string[] = [];
  let shardText: string | undefined;
  let key: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    const eq = a.indexOf("=");
    const name = eq > 0 ? a.slice(0, eq) : a;
    if (name.startsWith("--") && Object.hasOwn(SHARD_FLAG_OPTIONS, name.slice(2))) {
      const value = eq > 0 ? a.slice(eq + 1) : argv[++i];
      if (value === undefined) throw new UsageError(`${name}: a value is required`);
      if (name === "--shard") shardText = value;
      else key = value;
      continue;
    }
    rest.push(a);
  }
  if (key !== undefined && !isShardKeyKind(key)) throw new UsageError(`--shard-key: expected domain or host, got ${JSON.stringify(key)}`);
  if (shardText === undefined) {
    if (key !== undefined) throw new UsageError("--shard-key needs --shard <i>/<n>");
    return { rest };
  }
  try {
    return { rest, shard: parseShardFlag(shardText, key === "host" ? "host" : "domain") };
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
}
