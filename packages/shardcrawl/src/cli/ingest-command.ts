// `shardcrawl ingest --out <dir> <files...>`: adds outbox files from other nodes to this node's
// frontier. A running node (its supervisor alive) gets the files copied into <out>/inbox/ and
// ingests them itself within seconds; a stopped node's Redis is started, fed and stopped.
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync } from "node:fs";
import { basename, join } from "node:path";
import { Redis } from "../shared/cjs-ioredis.js";
import { defaultConfig, type NodeConfig } from "../node/config.js";
import { openFrontier } from "../node/open-frontier.js";
import { startNodeRedis } from "../node/redis-server.js";
import { emptyIngestReport, ingestFile } from "../shard/ingest.js";
import { inboxDir } from "../shard/outbox-format.js";
import { OutboxWriter } from "../shard/outbox-writer.js";
import { ShardRouter } from "../shard/shard-spec.js";
import { UsageError } from "./flags.js";
import { runningNodePid } from "../node/running-node.js";

/** The config the node last ran with (written by the supervisor), for its prefix and shard. */
export function readNodeConfig(out: string): NodeConfig | null {
  const p = join(out, "node-config.json");
  return existsSync(p) ? (JSON.parse(readFileSync(p, "utf8")) as NodeConfig) : null;
}

export async function runIngestCommand(v: { out?: string; redis?: string }, files: string[]): Promise<number> {
  if (!v.out) throw new UsageError("ingest: --out <dir> is required");
  for (const f of files) if (!existsSync(f)) throw new UsageError(`ingest: no such file ${f}`);
  if (!files.length) {
    process.stderr.write("ingest: no files given; nothing to do\n");
    return 0;
  }
  const pid = v.redis ? null : runningNodePid(v.out);
  if (pid) {
    mkdirSync(inboxDir(v.out), { recursive: true });
    // Copy under a temporary name, then rename, so the node never reads a half-copied file.
    for (const f of files) {
      const dest = join(inboxDir(v.out), basename(f));
      copyFileSync(f, `${dest}.copying`);
      renameSync(`${dest}.copying`, dest);
    }
    process.stdout.write(`${JSON.stringify({ queuedForRunningNode: pid, files: files.length, inbox: inboxDir(v.out) })}\n`);
    return 0;
  }
  const config: NodeConfig = { ...defaultConfig(), ...(readNodeConfig(v.out) ?? {}), out: v.out };
  const handle = v.redis ? null : await startNodeRedis(v.out);
  const redis = new Redis(v.redis ?? handle!.url, { maxRetriesPerRequest: null });
  const report = emptyIngestReport();
  const router = config.shard ? new ShardRouter(config.shard) : undefined;
  const outbox = router ? new OutboxWriter({ out: v.out, writer: `${config.nodeName}-ingest-cli`, maxFileBytes: config.outboxMaxFileBytes, dedupEntries: config.outboxDedupEntries }) : undefined;
  try {
    const frontier = await openFrontier(redis, config);
    for (const f of files) await ingestFile({ frontier, exclusions: frontier.exclusions, urlFilters: config.urlFilters, maxUrlLength: config.maxUrlLength, ...(router ? { router } : {}), ...(outbox ? { outbox } : {}) }, f, report);
  } finally {
    await outbox?.close();
    redis.disconnect();
    await handle?.stop();
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
  return report.problems.length ? 1 : 0;
}
