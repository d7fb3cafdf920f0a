// `shardcrawl node --config <file>`: a YAML or JSON file whose keys are NodeConfig's (camelCase).
// The schema (node/config-schema.ts) checks it: an unknown key or a wrong type is an error naming
// the key path, never a silent default.
import { readFileSync } from "node:fs";
import { parse as parseYaml } from "yaml";
import { validateConfig, type NodeConfig } from "../node/config.js";
import { parseSettings } from "../node/config-schema.js";
import { UsageError } from "./flags.js";
import { recrawlConfigFromObject } from "../schedule/recrawl/continuous-config.js";
import { applyQueueSizing } from "../node/queue-sizing.js";
import type { ShardConfig } from "../shard/shard-spec.js";

export function nodeConfigFromObject(obj: unknown, source: string): NodeConfig {
  if (typeof obj !== "object" || obj === null || Array.isArray(obj)) throw new UsageError(`${source}: expected a mapping of settings at the top level`);
  const given = obj as Record<string, unknown>;
  const { value, errors } = parseSettings(given);
  if (!value) throw new UsageError(errors.map((e) => `${source}: ${e}`).join("\n"));
  const { recrawl, shard, ...settings } = value;
  const config = settings as NodeConfig;
  if (shard !== undefined) config.shard = shard as unknown as ShardConfig;
  // A node from a file is long-lived unless the file says otherwise.
  config.exitWhenDone = given.exitWhenDone === true;
  const problems: string[] = [];
  if (recrawl !== undefined) {
    try {
      const recrawl = recrawlConfigFromObject(given.recrawl);
      if (recrawl) config.recrawl = recrawl;
    } catch (err) {
      problems.push((err as Error).message);
    }
  }
  // Bounds the file sets are explicit; the others may be derived from targetPagesPerSec.
  try {
    applyQueueSizing(config, new Set(Object.keys(given)));
  } catch (err) {
    problems.push((err as Error).message);
  }
  problems.push(...validateConfig(config));
  if (problems.length) throw new UsageError(problems.map((e) => `${source}: ${e}`).join("\n"));
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
