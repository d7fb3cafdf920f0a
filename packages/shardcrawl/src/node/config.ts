// The configuration of one node, from CLI flags or a config file. Everything a child process needs
// travels to it as this JSON (in an environment variable), so children never re-parse flags.
import { ParamStripper } from "../url/strip-params.js";
import { schemaDefaults, type SchemaConfig } from "./config-schema.js";
import { parseMinFreeDisk } from "./disk-space.js";
import { validateShardConfig, type ShardConfig } from "../shard/shard-spec.js";
import { buildUrlFilters } from "../admit/index.js";
import { validateRecrawlConfig, type RecrawlNodeConfig } from "../schedule/recrawl/continuous-config.js";
import type { QueueSizing } from "./queue-sizing.js";
import { checkPriorityRules, type PriorityRule } from "../schedule/priority.js";
import { validateLogSettings } from "./node-logger.js";
import { checkDnsServers } from "../fetch/dns-servers.js";

export type Scope = "domains" | "hosts" | "any";

/**
 * A node's configuration. Its keys, types and defaults come from the schema (node/config-schema.ts);
 * shard membership, continuous mode and the queue-sizing record are filled by their own modules.
 */
export type NodeConfig = SchemaConfig & {
  /**
   * Cluster membership: when set, this node crawls only hosts whose shard key it owns; seeds of
   * other nodes are counted and skipped (every node reads the same seed list), and links owned by
   * other nodes go to out/outbox/<node>/ for exchange.
   */
  shard?: ShardConfig;
  /** Continuous mode (node/recrawl-config.ts): revisit fetched pages within a budget. */
  recrawl?: RecrawlNodeConfig;
  /** Where each queue bound came from (set when the config is built; shown in summary.json and /status). */
  queueSizing?: QueueSizing;
  priorityRules: PriorityRule[];
};

export { DEFAULT_USER_AGENT } from "./config-schema.js";

export function defaultConfig(): NodeConfig {
  return schemaDefaults();
}

/**
 * Checks what the schema cannot see key by key: values that depend on each other, and values whose
 * rules live with the module that uses them. Messages name the key.
 */
export function validateConfig(c: NodeConfig): string[] {
  const errors: string[] = [];
  if (c.robotsBackoffMaxMs < c.robotsBackoffBaseMs) errors.push(`robotsBackoffMaxMs (${c.robotsBackoffMaxMs}) must not be below robotsBackoffBaseMs (${c.robotsBackoffBaseMs})`);
  // A lease shorter than the slowest legitimate fetch would hand healthy work out twice.
  if (c.leaseTtlMs <= c.timeouts.totalMs) errors.push(`lease-ttl: must be longer than the fetch timeout (${c.timeouts.totalMs} ms), got ${c.leaseTtlMs}`);
  if (c.leaseTtlFloorMs > c.leaseTtlMs) errors.push(`leaseTtlFloorMs (${c.leaseTtlFloorMs}) must not exceed leaseTtlMs (${c.leaseTtlMs})`);
  if (c.dnsMaxTtlMs < c.dnsMinTtlMs) errors.push(`dnsMaxTtlMs: expected milliseconds >= dnsMinTtlMs (${c.dnsMinTtlMs}), got ${JSON.stringify(c.dnsMaxTtlMs)}`);
  try {
    buildUrlFilters(c.urlFilters);
  } catch (err) {
    errors.push(`urlFilters: ${(err as Error).message}`);
  }
  try {
    parseMinFreeDisk(c.minFreeDisk);
  } catch (err) {
    errors.push(`minFreeDisk: ${(err as Error).message}`);
  }
  if (c.deleteShipped && !c.onFileClosed) errors.push("deleteShipped: needs onFileClosed (--on-file-closed): only shipped files are removed");
  try {
    new ParamStripper(c.stripParams);
  } catch (err) {
    errors.push(`stripParams: ${(err as Error).message}`);
  }
  errors.push(...checkPriorityRules(c.priorityRules).map((e) => `priorityRules: ${e}`));
  if (c.shard) errors.push(...validateShardConfig(c.shard));
  if (c.recrawl) errors.push(...validateRecrawlConfig(c.recrawl));
  errors.push(...validateLogSettings({ level: c.logLevel, maxBytes: c.logMaxBytes, files: c.logFiles }));
  errors.push(...checkDnsServers(c.dnsServers));
  return errors;
}

export { DERIVATIVES, type Derivative } from "./config-schema.js";
