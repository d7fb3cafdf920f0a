// The supervisor's structured log: <out>/logs/supervisor.<n>.log (children open theirs in child-runtime.ts).
import { join } from "node:path";
import type { NodeConfig } from "./config.js";
import { openNodeLogger, type NodeLogger } from "./node-logger.js";

export function openSupervisorLog(config: NodeConfig): NodeLogger {
  const log = openNodeLogger({
    dir: join(config.out, "logs"), file: "supervisor", level: config.logLevel, maxBytes: config.logMaxBytes, files: config.logFiles,
    bindings: { node: config.nodeName, role: "supervisor" },
  });
  // A log that cannot be opened (read-only folder) must not stop the crawl: the terminal still has the messages.
  log.ready.catch((err: unknown) => process.stderr.write(`shardcrawl: cannot open the supervisor log: ${(err as Error).message}\n`));
  log.logger.info({ out: config.out, fetchers: config.fetchers, parsers: config.parsers, shard: config.shard?.self ?? null }, "node starting");
  return log;
}
