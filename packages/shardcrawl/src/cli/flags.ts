// `shardcrawl crawl` flags -> NodeConfig. The flags are read from the config schema
// (node/config-schema.ts): each setting with a flag becomes one commander option, its value is
// converted by the setting's kind and checked by the schema, so flags, config keys and the docs
// tables cannot drift apart. The flag names are a contract outside tests rely on.
import { type Command, CommanderError, Option } from "commander";
import { CliCommand } from "./cli-command.js";
import { type NodeConfig, validateConfig } from "../node/config.js";
import { defaultTextOf, parseSettings, settings, valueKind, type FlagGroup, type SettingInfo } from "../node/config-schema.js";
import { RecrawlConfigError, recrawlConfigFromObject } from "../schedule/recrawl/continuous-config.js";
import { applyQueueSizing } from "../node/queue-sizing.js";
import { parsePriorityRuleFlag } from "../schedule/priority.js";
import { shardFromFlags, SHARD_FLAGS } from "./shard-flags.js";

/** A command line that cannot be understood: exit 2 with the reason (and a suggestion, if any). */
export class UsageError extends Error {}

const collect = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];
const HELP_GROUPS: Record<FlagGroup, string> = {
  crawl: "Crawl options:",
  "flow control": "Flow control options:",
  logs: "Logs options:",
  "continuous re-crawl": "Continuous re-crawl options (docs/recrawl.md):",
};

/** The settings that have a crawl flag, in help order. */
export function flagSettings(): SettingInfo[] {
  return settings().filter((s) => s.flag);
}

/** Adds every crawl flag to a command (the program's `crawl`, or a stand-alone parser). */
export function addCrawlOptions(cmd: Command): Command {
  for (const s of flagSettings()) {
    const f = s.flag!;
    const d = s.key === "out" ? "" : defaultTextOf(s);
    const o = new Option(`--${f.flag}${f.arg ? ` <${f.arg}>` : ""}`, `${s.description}${d ? ` (default ${d})` : ""}`).helpGroup(HELP_GROUPS[f.group]);
    if (f.multiple) o.argParser(collect);
    cmd.addOption(o);
  }
  for (const f of SHARD_FLAGS) cmd.addOption(new Option(`--${f.flag} <${f.arg}>`, f.help).helpGroup("Cluster options:"));
  return cmd;
}

/** A flag's text as the value its setting takes. */
function flagValue(s: SettingInfo, raw: unknown, defaultValue: unknown): unknown {
  const f = s.flag!;
  if (f.parse) {
    try {
      return f.parse(raw as string | string[], defaultValue);
    } catch (err) {
      throw new UsageError(`--${f.flag}: ${(err as Error).message}`);
    }
  }
  if (s.key === "priorityRules") return (raw as string[]).map((r) => {
    try {
      return parsePriorityRuleFlag(r);
    } catch (err) {
      throw new UsageError(`--priority-rule: ${(err as Error).message}`);
    }
  });
  const kind = valueKind(s.schema);
  if (kind === "integer") {
    if (!/^\d+$/.test(String(raw).trim())) throw new UsageError(`--${f.flag}: expected a non-negative integer, got ${JSON.stringify(raw)}`);
    return Number(raw);
  }
  if (kind === "number") {
    const n = Number(raw);
    if (String(raw).trim() === "" || !Number.isFinite(n)) throw new UsageError(`--${f.flag}: expected a number, got ${JSON.stringify(raw)}`);
    return n;
  }
  return raw;
}

/** The node config from a parsed `crawl` command's option values (commander's camelCase names). */
export function crawlConfigFromOptions(cmd: Command): NodeConfig {
  const opts = cmd.opts<Record<string, unknown>>();
  const given = (flagName: string) => {
    const o = cmd.options.find((x) => x.long === `--${flagName}`);
    return o ? opts[o.attributeName()] : undefined;
  };
  if (given("out") === undefined) throw new UsageError("--out <dir> is required");
  const all = settings();
  const defaults = Object.fromEntries(all.map((s) => [s.key, (s.schema as { safeParse(v: unknown): { data?: unknown } }).safeParse(undefined).data]));
  const input: Record<string, unknown> = {};
  const flagOf = new Map<string, string>();
  for (const s of flagSettings()) {
    flagOf.set(s.key, s.flag!.flag);
    const raw = given(s.flag!.flag);
    if (raw === undefined) continue;
    // A section's key (recrawl.budget) goes into its mapping.
    const [section, key] = s.key.includes(".") ? (s.key.split(".") as [string, string]) : [undefined, s.key];
    const into = section === undefined ? input : ((input[section] as Record<string, unknown> | undefined) ?? (input[section] = {}) as Record<string, unknown>);
    into[key] = flagValue(s, raw, defaults[s.key]);
  }
  const nameOf = (path: string) => {
    const f = flagOf.get(path) ?? flagOf.get(path.split(/[.[]/)[0]!);
    return f ? `--${f}` : path;
  };
  const { value, errors } = parseSettings(input, nameOf);
  if (!value) throw new UsageError(errors.join("\n"));
  const c = value as NodeConfig;
  // The adaptive lease lifetime lives between a floor and --lease-ttl: a short cap lowers the floor.
  if (input.leaseTtlMs !== undefined) c.leaseTtlFloorMs = Math.min(c.leaseTtlFloorMs, c.leaseTtlMs);
  const recrawl = input.recrawl as Record<string, unknown> | undefined;
  if (recrawl) {
    if (recrawl.continuous !== true) throw new UsageError("the --recrawl-*, --value-rules, --content-rules and --listing-rules flags need --continuous");
    try {
      c.recrawl = recrawlConfigFromObject(recrawl);
    } catch (err) {
      // The file flags' errors name the flag (--value-rules: ...); the rest were checked above.
      if (err instanceof RecrawlConfigError) throw new UsageError(err.message);
      throw err;
    }
    c.exitWhenDone = false; // a continuous node runs until stopped
  }
  const shard = shardFromFlags(given("shard") as string | undefined, given("shard-key") as string | undefined);
  if (shard) {
    c.shard = shard;
    // The node name is what the shard hash and the outbox directories see.
    if (given("name") === undefined) c.nodeName = shard.self;
    else if (c.nodeName !== shard.self) throw new UsageError(`--name ${c.nodeName} does not match --shard (this node is ${shard.self})`);
  }
  try {
    applyQueueSizing(c, new Set(Object.keys(input)));
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const more = validateConfig(c);
  if (more.length) throw new UsageError(more.join("\n"));
  return c;
}

/** Parses crawl flags (without the command name) on their own, as the program's `crawl` does. */
export function parseCrawlFlags(argv: string[]): NodeConfig {
  const cmd = addCrawlOptions(new CliCommand("crawl")).exitOverride().configureOutput({ writeErr: () => {}, writeOut: () => {} });
  try {
    cmd.parse(argv, { from: "user" });
  } catch (err) {
    if (err instanceof CommanderError) throw new UsageError(err.message.replace(/^error: /, ""));
    throw err;
  }
  return crawlConfigFromOptions(cmd);
}
