#!/usr/bin/env node
// shardcrawl's command line. `crawl` runs one node until its frontier drains; `node` runs the same
// engine as a long-lived node from a config file.
// Each command's module (and what it pulls in: the node engine, the status server, prom-client...)
// is imported only when that command runs, so a node process does not pay for the others at start.
import { parseArgs } from "node:util";
import { UsageError } from "./flags.js";
import { StartupError, exitCodeFor } from "../node/exit-codes.js";
import { UserAgentContactError } from "../node/user-agent-contact.js";

const USAGE = `usage: shardcrawl <command> [flags]

commands:
  crawl --seeds <file> --out <dir> [flags]   crawl until the frontier is empty or --max-pages is reached
  node --config <file>                       run a long-lived node from a YAML or JSON config file
  node --cluster <file> --name <node>        run one node of a cluster file
  shard (--nodes <n>|--cluster <f>) --seeds <file> --out <dir>
                                             split a seed list by owning node
  ingest --out <dir> <outbox files...>       add other nodes' outbox files to this node's frontier
  rehome --out <dir> --cluster <f> --name <n>  (stopped node) move queued URLs of hosts it no longer owns to its outbox
  status --cluster <file> [--serve]          pages/s, frontier, hosts, errors, disk of every node (--serve: the cluster page)
  cluster plan --cluster <file> [--write]    the nodes of a cluster file (for scripts/cluster.sh)
  inspect host <host> | url <url> (--out <dir>|--redis <url>|--cluster <file>) [--json]
                                             a host's queues, robots rules, limits and recent outcomes;
                                             a URL's owner and fate (fetched, queued, refused and why, shed)
  exclude add|remove|list [<domain|host|url-prefix>] [--reason <text>] (--out <dir>|--redis <url>)
                                             the site owner's opt-out list of a running or stopped node
  index merge --out <file> <dirs|files...>   merge capture index files (Parquet) into one sorted file
  completion bash|zsh                        print a shell completion script (source <(shardcrawl completion bash))
  help [command]                             show help

run "shardcrawl crawl --help" for the crawl flags.
`;

const NODE_USAGE = `usage: shardcrawl node --config <file>
       shardcrawl node --cluster <file> --name <node>

Runs a long-lived node: --config a YAML or JSON node config (its keys are the crawl flags' config
keys, in brackets in docs/crawling.md's flag list), or --cluster a cluster file and --name its node to run.
`;

async function usageOf(cmd: string | undefined): Promise<string> {
  switch (cmd) {
    case "crawl": return (await import("./flags.js")).CRAWL_USAGE + (await import("./shard-flags.js")).SHARD_FLAGS_USAGE;
    case "node": return NODE_USAGE;
    case "shard": return (await import("./shard-command.js")).SHARD_USAGE;
    case "ingest": return (await import("./ingest-command.js")).INGEST_USAGE;
    case "status": return (await import("./status-command.js")).STATUS_USAGE;
    case "cluster": return (await import("./cluster-command.js")).CLUSTER_USAGE;
    case "rehome": return (await import("./rehome-command.js")).REHOME_USAGE;
    case "inspect": return (await import("./inspect-command.js")).INSPECT_USAGE;
    case "exclude": return (await import("./exclude-command.js")).EXCLUDE_USAGE;
    case "index": return (await import("./index-command.js")).INDEX_USAGE;
    case "completion": return (await import("./completion-command.js")).COMPLETION_USAGE;
    default: return USAGE;
  }
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  // Asked-for help is an answer, not a mistake: stdout and exit 0, as every other command does.
  if ((cmd === "crawl" || cmd === "node") && rest.some((a) => a === "--help" || a === "-h")) {
    process.stdout.write(await usageOf(cmd));
    return 0;
  }
  switch (cmd) {
    case "crawl": {
      const { takeShardFlags } = await import("./shard-flags.js");
      const { parseCrawlFlags } = await import("./flags.js");
      const { runNode } = await import("../node/supervisor.js");
      const { rest: crawlArgs, shard } = takeShardFlags(rest);
      const config = parseCrawlFlags(crawlArgs);
      if (shard) {
        config.shard = shard;
        // The node name is what the shard hash and the outbox directories see.
        if (!crawlArgs.some((a) => a === "--name" || a.startsWith("--name="))) config.nodeName = shard.self;
        else if (config.nodeName !== shard.self) throw new UsageError(`--name ${config.nodeName} does not match --shard (this node is ${shard.self})`);
      }
      return exitCodeFor((await runNode(config)).reason);
    }
    case "node": {
      const { runNode } = await import("../node/supervisor.js");
      const { NODE_OPTIONS } = await import("./command-catalog.js");
      let v;
      try {
        v = parseArgs({ args: rest, strict: true, options: NODE_OPTIONS }).values;
      } catch (e) {
        throw new UsageError((e as Error).message);
      }
      const file = v.config;
      const clusterFile = v.cluster;
      if (clusterFile) {
        // One cluster file for every node (docker-compose, systemd): pick this node by name.
        const name = v.name;
        if (!name) throw new UsageError("node: --cluster <file> needs --name <node>");
        const { loadClusterFile } = await import("./cluster-file.js");
        const node = loadClusterFile(clusterFile).nodes.find((n) => n.name === name);
        if (!node) throw new UsageError(`node: ${clusterFile} has no node named ${JSON.stringify(name)}`);
        return exitCodeFor((await runNode(node.config)).reason);
      }
      if (!file) throw new UsageError("node: --config <file> (or --cluster <file> --name <node>) is required");
      const { loadNodeConfigFile } = await import("./config-file.js");
      return exitCodeFor((await runNode(loadNodeConfigFile(file))).reason);
    }
    case "shard":
      return (await import("./shard-command.js")).runShardCommand(rest);
    case "ingest":
      return (await import("./ingest-command.js")).runIngestCommand(rest);
    case "status":
      return (await import("./status-command.js")).runStatusCommand(rest);
    case "cluster":
      return (await import("./cluster-command.js")).runClusterCommand(rest);
    case "rehome":
      return (await import("./rehome-command.js")).runRehomeCommand(rest);
    case "inspect":
      return (await import("./inspect-command.js")).runInspectCommand(rest);
    case "exclude":
      return (await import("./exclude-command.js")).runExcludeCommand(rest);
    case "index":
      return (await import("./index-command.js")).runIndexCommand(rest);
    case "completion":
      return (await import("./completion-command.js")).runCompletionCommand(rest);
    case "help":
    case "--help":
    case "-h":
    case undefined:
      process.stdout.write(await usageOf(rest[0]));
      return cmd === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command ${JSON.stringify(cmd)}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  async (err: unknown) => {
    if (err instanceof StartupError) {
      process.stderr.write(`shardcrawl: ${err.message}\n  what to do: ${err.hint}\n`);
      process.exit(err.exitCode);
    }
    if (err instanceof UsageError) {
      const hint = err.message ? await (await import("./suggest.js")).suggestionFor(err.message, process.argv.slice(2)) : undefined;
      // The hint goes right under the error's first line (some messages carry their command's usage after it).
      const [first, ...more] = err.message.split("\n");
      if (err.message) process.stderr.write(`shardcrawl: ${[first, ...(hint ? [`  ${hint}`] : []), ...more].join("\n")}\n\n`);
      process.stderr.write(await usageOf(process.argv[2]));
      process.exit(2);
    }
    process.stderr.write(`shardcrawl: ${(err as Error).message ?? String(err)}\n`);
    // A refused configuration (e.g. a User-Agent without a contact) has its own exit code.
    const code = (err as { exitCode?: unknown } | null)?.exitCode;
    process.exit(err instanceof UserAgentContactError && typeof code === "number" ? code : 1);
  },
);
