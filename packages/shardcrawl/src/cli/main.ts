#!/usr/bin/env node
// shardcrawl's command line. `crawl` runs one node until its frontier drains; `node` runs the same
// engine as a long-lived node from a config file.
import { CRAWL_USAGE, UsageError, parseCrawlFlags } from "./flags.js";
import { loadNodeConfigFile } from "./config-file.js";
import { runNode } from "../node/supervisor.js";
import { exitCodeFor } from "../node/exit-codes.js";
import { SHARD_FLAGS_USAGE, takeShardFlags } from "./shard-flags.js";
import { SHARD_USAGE, runShardCommand } from "./shard-command.js";
import { INGEST_USAGE, runIngestCommand } from "./ingest-command.js";
import { STATUS_USAGE, runStatusCommand } from "./status-command.js";
import { CLUSTER_USAGE, runClusterCommand } from "./cluster-command.js";
import { loadClusterFile } from "./cluster-file.js";
import { REHOME_USAGE, runRehomeCommand } from "./rehome-command.js";
import { INSPECT_USAGE, runInspectCommand } from "./inspect-command.js";

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
  help [command]                             show help

run "shardcrawl crawl --help" for the crawl flags.
`;

function usageOf(cmd: string | undefined): string {
  switch (cmd) {
    case "crawl": return CRAWL_USAGE + SHARD_FLAGS_USAGE;
    case "shard": return SHARD_USAGE;
    case "ingest": return INGEST_USAGE;
    case "status": return STATUS_USAGE;
    case "cluster": return CLUSTER_USAGE;
    case "rehome": return REHOME_USAGE;
    case "inspect": return INSPECT_USAGE;
    default: return USAGE;
  }
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case "crawl": {
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
      const arg = (flag: string) => {
        const i = rest.indexOf(flag);
        return i >= 0 ? rest[i + 1] : undefined;
      };
      const file = arg("--config");
      const clusterFile = arg("--cluster");
      if (clusterFile) {
        // One cluster file for every node (docker-compose, systemd): pick this node by name.
        const name = arg("--name");
        if (!name) throw new UsageError("node: --cluster <file> needs --name <node>");
        const node = loadClusterFile(clusterFile).nodes.find((n) => n.name === name);
        if (!node) throw new UsageError(`node: ${clusterFile} has no node named ${JSON.stringify(name)}`);
        return exitCodeFor((await runNode(node.config)).reason);
      }
      if (!file) throw new UsageError("node: --config <file> (or --cluster <file> --name <node>) is required");
      return exitCodeFor((await runNode(loadNodeConfigFile(file))).reason);
    }
    case "shard":
      return runShardCommand(rest);
    case "ingest":
      return runIngestCommand(rest);
    case "status":
      return runStatusCommand(rest);
    case "cluster":
      return runClusterCommand(rest);
    case "rehome":
      return runRehomeCommand(rest);
    case "inspect":
      return runInspectCommand(rest);
    case "help":
    case "--help":
    case "-h":
    case undefined:
      process.stdout.write(usageOf(rest[0]));
      return cmd === undefined ? 2 : 0;
    default:
      throw new UsageError(`unknown command ${JSON.stringify(cmd)}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof UsageError) {
      if (err.message) process.stderr.write(`shardcrawl: ${err.message}\n\n`);
      process.stderr.write(usageOf(process.argv[2]));
      process.exit(2);
    }
    process.stderr.write(`shardcrawl: ${(err as Error).message ?? String(err)}\n`);
    process.exit(1);
  },
);
