// `shardcrawl node --config <file>`: a YAML or JSON file whose keys are NodeConfig's (camelCase).
// Unknown keys and wrong types get an error naming the key, not a silent default.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { defaultConfig, validateConfig, type NodeConfig } from "../node/config.js";
import { UsageError } from "./flags.js";
import { recrawlConfigFromObject } from "../schedule/recrawl/continuous-config.js";
import { applyQueueSizing } from "../node/queue-sizing.js";

export function nodeConfigFromObject(obj: unknown, source: string): NodeConfig {
  if (typeof obj !== "object" || obj === null || Array.isArray(obj)) throw new UsageError(`${source}: expected a mapping of settings at the top level`);
  const c = defaultConfig() as unknown as Record<string, unknown>;
  const errors: string[] = [];
  for (const [k, v] of Object.entries(obj)) {
    if (!(k in c) && !["seeds", "redis", "maxPages", "caFile", "shard", "recrawl"].includes(k)) {
      errors.push(`${source}: unknown key "${k}"`);
      continue;
    }
    if (k === "recrawl") {
      try {
        c.recrawl = recrawlConfigFromObject(v);
      } catch (err) {
        errors.push(`${source}: ${(err as Error).message}`);
      }
      continue;
    }
    const expected = c[k];
    if (expected !== undefined && expected !== null && typeof expected !== typeof v) {
      errors.push(`${source}: key "${k}" expects a ${Array.isArray(expected) ? "list" : typeof expected}, got ${JSON.stringify(v)}`);
      continue;
    }
    c[k] = k === "timeouts" ? { ...(c.timeouts as object), ...(v as object) } : v;
  }
  const config = c as unknown as NodeConfig;
  config.exitWhenDone = (obj as Record<string, unknown>).exitWhenDone === true;
  // Bounds the file sets are explicit; the others may be derived from targetPagesPerSec.
  if (errors.length === 0) {
    try {
      applyQueueSizing(config, new Set(Object.keys(obj)));
    } catch (err) {
      errors.push(`${source}: ${(err as Error).message}`);
    }
  }
  errors.push(...validateConfig(config).map((e) => `${source}: ${e}`));
  if (errors.length) throw new UsageError(errors.join("\n"));
  return config;
}

export function loadNodeConfigFile(path: string): NodeConfig {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new UsageError(`cannot read config file ${path}: ${(err as Error).message}`);
  }
  let obj: unknown;
  try {
    obj = path.endsWith(".json") ? JSON.parse(text) : parseYaml(text);
  } catch (err) {
    throw new UsageError(`${path}: not valid ${path.endsWith(".json") ? "JSON" : "YAML"}: ${(err as Error).message}`);
  }
  return nodeConfigFromObject(obj, path);
}
