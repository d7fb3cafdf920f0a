// Which node `shardcrawl inspect` looks at, and a connection to its Redis. A running node's Redis
// (found through <out>/redis/connection.json) is used as it is and left running; a stopped node's
// is started on its AOF for the inspection and stopped again, like `ingest` and `rehome` do.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "../../shared/cjs-ioredis.js";
import { defaultConfig, type NodeConfig } from "../../node/config.js";
import { startNodeRedis } from "../../node/redis-server.js";
import { ShardRouter } from "../../shard/shard-spec.js";
import { loadClusterFile } from "../cluster-file.js";
import { UsageError } from "../flags.js";
import { readNodeConfig as readSavedNodeConfig } from "../ingest-command.js";

export interface TargetFlags {
  out?: string;
  redis?: string;
  cluster?: string;
}

export interface NodeTarget {
  /** The node's name and how it was chosen ("cluster" = the shard function picked it). */
  node: string;
  chosenBy: "cluster" | "out" | "redis";
  /** The node's config (from its node-config.json or the cluster file; defaults when neither). */
  config: NodeConfig;
  /** Output folder, when known (page log, spill files). */
  out?: string;
  /** Cluster only: how many nodes share the crawl and the shard key kind. */
  cluster?: { file: string; nodes: number; key: string };
  redis: Redis;
  close(): Promise<void>;
}

/** The config the node last ran with (written by the supervisor at start), over today's defaults for keys it predates. */
function readNodeConfig(out: string): NodeConfig | null {
  const saved = readSavedNodeConfig(out);
  return saved ? { ...defaultConfig(), ...saved } : null;
}

async function reachable(url: string): Promise<boolean> {
  const r = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1000 });
  r.on("error", () => undefined); // "not reachable" is an answer here, not an error
  try {
    await r.connect();
    await r.ping();
    return true;
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

function connect(url: string, owned: { stop(): Promise<void> } | null): { redis: Redis; close(): Promise<void> } {
  // Every command has a timeout: an inspection must never hang on a stuck server.
  const redis = new Redis(url, { maxRetriesPerRequest: 1, commandTimeout: 30_000, connectTimeout: 5000, connectionName: "inspect" });
  return {
    redis,
    close: async () => {
      redis.disconnect();
      await owned?.stop();
    },
  };
}

/** Connects to the Redis of the node in `out` (or `redisUrl`), starting it when the node is stopped. */
async function openNodeRedis(out: string | undefined, redisUrl: string | undefined): Promise<{ redis: Redis; close(): Promise<void> }> {
  if (redisUrl) return connect(redisUrl, null);
  if (!out) throw new UsageError("inspect: give --out <dir>, --redis <url> or --cluster <file>");
  if (!existsSync(out)) throw new UsageError(`inspect: no such output folder ${out}`);
  const connFile = join(out, "redis", "connection.json");
  if (existsSync(connFile)) {
    const c = JSON.parse(readFileSync(connFile, "utf8")) as { port: number; password: string };
    const url = `redis://:${c.password}@127.0.0.1:${c.port}`;
    if (await reachable(url)) return connect(url, null);
  }
  if (!existsSync(join(out, "redis"))) throw new Error(`inspect: ${out} holds no node Redis (no redis/ folder); give --redis <url> if the node used an external one`);
  const handle = await startNodeRedis(out);
  return connect(handle.url, handle);
}

/**
 * Picks the node: with --cluster, the owner of `host` by the cluster's shard function (its output
 * folder must be local); else the node in --out and/or at --redis.
 */
export async function openTarget(flags: TargetFlags, host: string): Promise<NodeTarget> {
  if (flags.cluster) {
    const spec = loadClusterFile(flags.cluster);
    const first = spec.nodes[0]!;
    const owner = new ShardRouter(first.config.shard!).ownerOfHost(host);
    const node = spec.nodes.find((n) => n.name === owner)!;
    const conn = await openNodeRedis(node.out, flags.redis ?? node.config.redis);
    return {
      node: owner, chosenBy: "cluster", config: readNodeConfig(node.out) ?? node.config, out: node.out,
      cluster: { file: flags.cluster, nodes: spec.nodes.length, key: spec.shardKey }, ...conn,
    };
  }
  const config = (flags.out ? readNodeConfig(flags.out) : null) ?? { ...defaultConfig(), ...(flags.out ? { out: flags.out } : {}) };
  const conn = await openNodeRedis(flags.out, flags.redis ?? (flags.out ? config.redis : undefined));
  return { node: config.nodeName, chosenBy: flags.out ? "out" : "redis", config, ...(flags.out ? { out: flags.out } : {}), ...conn };
}
