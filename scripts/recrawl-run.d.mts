// Types of recrawl-run.mjs (the tests import it from TypeScript).

export const USER_AGENT: string;

export const LISTINGS_WORLD: { seed: number; hosts: number; simConfig: Record<string, unknown> };

export function listingRules(revisitMs: number): { listings: Array<{ pattern: string; item: string; revisitMs: number }> };

/** One line of simweb's request log. */
export interface RequestLogLine {
  ts: number;
  end?: number;
  host: string;
  scheme: string;
  method: string;
  path: string;
  status: number;
  sim?: number;
}

export interface ContinuousRun {
  /** The run's folder (simweb config, seeds, files, the node's out/). */
  dir: string;
  /** The simweb flags that describe the world (for `simweb seeds`, verify). */
  configArgs: string[];
  logFile: string;
  /** simweb's request log, in time order. */
  log: RequestLogLine[];
  /** The node's /metrics just before it was stopped. */
  metrics: string;
  code: number | null;
  signal: string | null;
  stderr: string;
  /** When the node's first fetch was seen, and when it was signalled (epoch ms). */
  startedAt: number;
  stoppedAt: number;
  redis: { url: string; stop(): Promise<void> };
}

export function runContinuousNode(opts: {
  seed: number;
  hosts: number;
  simConfig: Record<string, unknown>;
  /** Simulated ms per real ms (default 3600: a simulated hour per second). */
  scale?: number;
  nodeArgs: string[];
  files?: Record<string, unknown>;
  runMs: number;
  keepRedis?: boolean;
  redisUrl?: string;
}): Promise<ContinuousRun>;
