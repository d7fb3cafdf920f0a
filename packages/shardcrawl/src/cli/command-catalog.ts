// Every command, its subcommands and its flags, read from the parseArgs options objects each command
// parses with (not a second, hand-kept list), so "did you mean" and shell completion cannot drift
// from the parsers. Loaders import a command's module only when asked, as main.ts does.

/** The shape of a node:util parseArgs options object, as far as completion and suggestions need it. */
export type OptionsObject = Readonly<Record<string, { readonly type: "string" | "boolean"; readonly short?: string; readonly multiple?: boolean }>>;
type Loader = () => Promise<OptionsObject>;

export interface CommandSpec {
  /** Flags of the command itself (a command without subcommands, or flags shared by all of them). */
  options?: Loader;
  /** Subcommand -> its flags. */
  subcommands?: Record<string, Loader>;
}

/** `shardcrawl node`: a config file, or a cluster file and the node's name in it. */
export const NODE_OPTIONS = { config: { type: "string" }, cluster: { type: "string" }, name: { type: "string" }, help: { type: "boolean", short: "h" } } as const;

const none: Loader = () => Promise.resolve({});
const crawl: Loader = async () => ({ ...(await import("./flags.js")).CRAWL_OPTIONS, ...(await import("./shard-flags.js")).SHARD_FLAG_OPTIONS });
const inspect: Loader = async () => (await import("./inspect-command.js")).INSPECT_OPTIONS;
const exclude: Loader = async () => (await import("./exclude-command.js")).EXCLUDE_OPTIONS;

export const COMMANDS: Record<string, CommandSpec> = {
  crawl: { options: crawl },
  node: { options: () => Promise.resolve(NODE_OPTIONS) },
  shard: { options: async () => (await import("./shard-command.js")).SHARD_OPTIONS },
  ingest: { options: async () => (await import("./ingest-command.js")).INGEST_OPTIONS },
  rehome: { options: async () => (await import("./rehome-command.js")).REHOME_OPTIONS },
  status: { options: async () => (await import("./status-command.js")).STATUS_OPTIONS },
  cluster: {
    subcommands: {
      plan: async () => (await import("./cluster-command.js")).CLUSTER_PLAN_OPTIONS,
      prometheus: async () => (await import("./cluster-command.js")).CLUSTER_PROMETHEUS_OPTIONS,
    },
  },
  inspect: { subcommands: { host: inspect, url: inspect } },
  exclude: { subcommands: { add: exclude, remove: exclude, list: exclude } },
  index: { subcommands: { merge: async () => (await import("./index-command.js")).INDEX_MERGE_OPTIONS } },
  completion: { subcommands: { bash: none, zsh: none } },
  help: {},
};
// `help <command>` completes the command names.
COMMANDS.help!.subcommands = Object.fromEntries(Object.keys(COMMANDS).filter((c) => c !== "help").map((c) => [c, none]));

/** The long flag names (with "--") a command (and subcommand, if known) accepts. */
export async function flagNamesOf(command: string, subcommand?: string): Promise<string[]> {
  const spec = COMMANDS[command];
  if (!spec) return [];
  const loaders: Loader[] = [];
  if (spec.options) loaders.push(spec.options);
  const subs = spec.subcommands ?? {};
  if (subcommand !== undefined && Object.hasOwn(subs, subcommand)) loaders.push(subs[subcommand]!);
  else loaders.push(...Object.values(subs));
  const names = new Set<string>();
  for (const load of loaders) for (const name of Object.keys(await load())) names.add(`--${name}`);
  return [...names];
}
