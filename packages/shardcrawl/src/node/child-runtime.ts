// What every child process (fetcher, parser) shares: its config, its Redis, and the stop protocol.
// "stop" from the supervisor = finish or return what you hold, then exit 0. A closed IPC channel
// means the supervisor died: exit at once; the next node start recovers leases and in-flight pages.
import { join } from "node:path";
import { Redis } from "../shared/cjs-ioredis.js";
import type { Logger } from "pino";
import { CONFIG_ENV } from "./config-env.js";
import type { NodeConfig } from "./config.js";
import type { ChildMessage } from "./children.js";
import { logFileName, openNodeLogger, type NodeLogger } from "./node-logger.js";

export interface ChildContext {
  config: NodeConfig;
  redis: Redis;
  role: string;
  index: number;
  /** Started again by the supervisor after an exit, not with the node. */
  restarted: boolean;
  /** Resolves when the supervisor asks this process to stop. */
  stopRequested: Promise<void>;
  isStopping(): boolean;
  send(msg: ChildMessage): void;
  /** A problem worth an operator's attention: a warn line in the process's log, echoed on stderr. */
  log(msg: string): void;
  /** This process's structured log (<out>/logs/<role>-<index>.<n>.log). */
  logger: Logger;
}

let processLog: NodeLogger | null = null;

/** For a child's last words (main().catch): an error line in its log (when open) and on stderr, then exit. */
export function exitFatal(role: string, err: unknown): never {
  const text = (err as Error)?.stack ?? String(err);
  processLog?.logger.fatal({ err }, `fatal: ${(err as Error)?.message ?? String(err)}`);
  processLog?.close();
  process.stderr.write(`[${role}] fatal: ${text}\n`);
  process.exit(1);
}

export function childContext(): ChildContext {
  const raw = process.env[CONFIG_ENV];
  const url = process.env.SHARDCRAWL_REDIS_URL;
  if (!raw || !url) {
    console.error("this is a shardcrawl child process; start it through `shardcrawl crawl` or `shardcrawl node`");
    process.exit(2);
  }
  const config = JSON.parse(raw) as NodeConfig;
  const role = process.env.SHARDCRAWL_ROLE ?? "child";
  const index = Number(process.env.SHARDCRAWL_INDEX ?? 0);
  processLog = openNodeLogger({
    dir: join(config.out, "logs"), file: logFileName(role, index), level: config.logLevel ?? "info",
    maxBytes: config.logMaxBytes ?? 10 * 1024 * 1024, files: config.logFiles ?? 5,
    bindings: { node: config.nodeName, role, index },
  });
  const log = processLog;
  log.ready.catch((err: unknown) => process.stderr.write(`[${role} ${index}] cannot open its log file: ${(err as Error).message}\n`));
  // Every way out of the process writes the buffered lines first.
  process.on("exit", () => log.close());
  log.logger.info({ supervisor: Number(process.env.SHARDCRAWL_SUPERVISOR_PID ?? process.ppid) }, `${role} ${index} started`);
  // Commands wait while Redis restarts (AOF replay) instead of failing the crawl step.
  const redis = new Redis(url, { maxRetriesPerRequest: null, enableAutoPipelining: true, connectionName: `${role}-${index}` });
  let stopping = false;
  let resolveStop!: () => void;
  const stopRequested = new Promise<void>((r) => (resolveStop = r));
  process.on("message", (m: { type?: string }) => {
    if (m?.type === "stop" && !stopping) {
      stopping = true;
      log.logger.info("stop requested by the supervisor");
      resolveStop();
    }
  });
  process.on("disconnect", () => process.exit(0));
  // The supervisor may have died before this handler existed (a kill right after the fork): then
  // no "disconnect" event comes. Check the channel now, and the parent's pid every second.
  const parent = Number(process.env.SHARDCRAWL_SUPERVISOR_PID ?? process.ppid);
  if (!process.connected || process.ppid !== parent) process.exit(0);
  setInterval(() => {
    if (process.ppid !== parent) process.exit(0);
  }, 1000).unref();
  process.on("SIGTERM", () => {
    if (!stopping) {
      stopping = true;
      resolveStop();
    }
  });
  // The terminal's Ctrl-C reaches the whole process group; the supervisor decides, children wait for it.
  process.on("SIGINT", () => undefined);
  return {
    config,
    redis,
    role,
    index,
    restarted: process.env.SHARDCRAWL_RESTARTED === "1",
    stopRequested,
    isStopping: () => stopping,
    send(msg) {
      if (process.connected) process.send?.(msg, undefined, undefined, () => undefined);
    },
    log(msg) {
      log.logger.warn(msg);
      process.stderr.write(`[${role} ${index}] ${msg}\n`);
    },
    logger: log.logger,
  };
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}
