// `shardcrawl rehome --out <dir> (--cluster <file> --name <node> | --shard i/n)`: on a STOPPED node,
// after the cluster changed, moves the queued URLs of hosts this node no longer owns to its outbox
// for their new owners (then `scripts/cluster.sh exchange` delivers them). See README "Rebalancing".
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { Redis } from "../shared/cjs-ioredis.js";
import { defaultConfig, type NodeConfig } from "../node/config.js";
import { openFrontier } from "../node/open-frontier.js";
import { startNodeRedis } from "../node/redis-server.js";
import { OutboxWriter } from "../shard/outbox-writer.js";
import { rehomeQueues } from "../shard/rehome.js";
import { ShardRouter, parseShardFlag, type ShardConfig } from "../shard/shard-spec.js";
import { loadClusterFile } from "./cluster-file.js";
import { UsageError } from "./flags.js";
import { readNodeConfig } from "./ingest-command.js";
import { runningNodePid } from "../node/running-node.js";

export async function runRehomeCommand(v: { out?: string; cluster?: string; name?: string; shard?: string; redis?: string }): Promise<number> {
  if (!v.out) throw new UsageError("rehome: --out <dir> is required");
  let shard: ShardConfig;
  if (v.cluster) {
    if (!v.name) throw new UsageError("rehome: --cluster needs --name <node>");
    const node = loadClusterFile(v.cluster).nodes.find((n) => n.name === v.name);
    if (!node) throw new UsageError(`rehome: ${v.cluster} has no node named ${JSON.stringify(v.name)}`);
    shard = node.config.shard!;
  } else if (v.shard) {
    try {
      shard = parseShardFlag(v.shard);
    } catch (e) {
      throw new UsageError((e as Error).message);
    }
  } else throw new UsageError("rehome: give --cluster <file> --name <node> or --shard <i>/<n>");
  if (!v.redis && runningNodePid(v.out) !== null) throw new Error(`rehome: the node in ${v.out} is running; stop it first (scripts/cluster.sh down)`);
  const previous = readNodeConfig(v.out);
  const config: NodeConfig = { ...defaultConfig(), ...(previous ?? {}), out: v.out, shard, nodeName: shard.self };
  const handle = v.redis ? null : await startNodeRedis(v.out);
  const redis = new Redis(v.redis ?? handle!.url, { maxRetriesPerRequest: null });
  const outbox = new OutboxWriter({ out: v.out, writer: `${shard.self}-rehome`, maxFileBytes: config.outboxMaxFileBytes, dedupEntries: config.outboxDedupEntries });
  try {
    const frontier = await openFrontier(redis, config);
    const recovered = await frontier.recoverAll();
    const report = await rehomeQueues(redis, config.prefix, new ShardRouter(shard), outbox);
    await outbox.close();
    if (previous) writeFileSync(join(v.out, "node-config.json"), JSON.stringify(config, null, 2));
    process.stdout.write(`${JSON.stringify({ node: shard.self, recovered, ...report })}\n`);
  } finally {
    redis.disconnect();
    await handle?.stop();
  }
  return 0;
}
