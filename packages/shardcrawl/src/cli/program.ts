// Every command, subcommand, argument and flag of shardcrawl, on commander. Commander because it
// gives what users expect of a CLI (help on every command that exits 0, "did you mean" for unknown
// flags and commands, option groups in help) with no dependencies of its own, is the most used and
// steadily released of the candidates, and lets us keep each command's module lazy: the
// definitions here are cheap, and an action imports its module only when it runs, so a node
// process does not pay for the others at start. Shell completion (completion-command.ts) is
// generated from this same tree.
import { Command, Option } from "commander";
import { CliCommand } from "./cli-command.js";
import { addCrawlOptions, crawlConfigFromOptions, UsageError } from "./flags.js";
import { exitCodeFor } from "../node/exit-codes.js";

/** The exit code of the command that ran (commander's actions cannot return one). */
export interface ProgramResult {
  code: number;
}

type Values = Record<string, string | boolean | undefined>;

/** The parsed flags keyed by their long names without "--" (as the command modules read them). */
function flagValues(cmd: Command): Values {
  const opts = cmd.opts<Values>();
  return Object.fromEntries(cmd.options.filter((o) => o.long).map((o) => [o.long!.slice(2), opts[o.attributeName()]]));
}

const NODE_HELP = `
Runs a long-lived node: --config a YAML or JSON node config (its keys: docs/reference/config.md,
checked by schema/node.schema.json), or --cluster a cluster file and --name its node to run.`;

const INSPECT_HELP = `
Which node: --cluster picks the node that owns the host by the cluster's shard function (its output
folder must be on this machine); --out is one node's output folder; --redis a node's Redis (add
--out for its page log). A stopped node's Redis is started for the inspection and stopped again.`;

const INSPECT_URL_CODES = `
Exit codes:
  0 fetched        (HTTP status, time, WARC file and offset)
  3 queued/leased/parsing  (tier and position / being fetched now / fetched, not yet parsed)
  4 refused        reason robots | out-of-scope | trap:<filter> | host-budget | excluded (the opt-out list, with reason and time)
  5 shed           reason shed:<cap> (dropped from its queue) | dropped:<cap> (refused for room) | spilled
  6 failed         reason: the fetch error class
  7 seen           in the seen filter, no other record (fetched before the page-log window, or shed long ago)
  8 not-seen       never discovered by this node
  9 other-node     (--out) another node of the cluster owns it
  1 error, 2 usage error.`;

const EXCLUDE_HELP = `
The site owner's opt-out list of one node (scripts/cluster.sh exclude ... for every node of a cluster).
A name ("example.com", "shop.example.com") excludes that host and every host under it; an http(s)
URL excludes the URLs that start with it. Within about a second of "add" returning, the node starts
no new request to it; its queued URLs are removed (counted as "excluded") before "add" returns, and
links, redirects, seeds and inbox URLs to it are refused from then on. Kept in the node's Redis: it
survives restarts. A stopped node's Redis is started for the change and stopped again.

Exit codes: 0 done; 1 error; 2 usage error; 3 remove: the pattern was not in the list.`;

const STATUS_HELP = `
Shows each node's pages/s, pages fetched, frontier size, hosts, error rate and disk use from its
/status endpoint, and the cluster's totals. A node whose statusPort is 0 is found through
<out>/status.json (local nodes only). Nodes bound off loopback are asked with the bearer token
in SHARDCRAWL_STATUS_TOKEN.

--serve runs the cluster page (live charts, every node's bottleneck, the hosts pushing back
hardest) until interrupted, on 127.0.0.1 and --port (default: any free port; the URL is printed).
Binding elsewhere needs SHARDCRAWL_STATUS_TOKEN, as the nodes do.`;

/** The whole command tree. `result.code` is set by the action that runs. */
export function buildProgram(result: ProgramResult = { code: 0 }): Command {
  const program = new CliCommand("shardcrawl")
    .description("A polite, sharded web crawler cluster. Run \"shardcrawl <command> --help\" for a command's flags.")
    .usage("<command> [flags]")
    .showSuggestionAfterError()
    .showHelpAfterError("  what to do: run with --help for the usage")
    .configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, "shardcrawl: ")) })
    .exitOverride();
  // Subcommands inherit exitOverride and the output settings from here.
  const done = (code: number) => {
    result.code = code;
  };

  addCrawlOptions(program.command("crawl").summary("crawl until the frontier is empty or --max-pages is reached"))
    .description("Crawls from a seed list until the frontier is empty or --max-pages is reached. Every flag is also a config key (docs/reference/flags.md).")
    .usage("--seeds <file> --out <dir> [flags]")
    .action(async (_o, cmd: Command) => {
      const { runNode } = await import("../node/supervisor.js");
      done(exitCodeFor((await runNode(crawlConfigFromOptions(cmd))).reason));
    });

  program.command("node")
    .summary("run a long-lived node from a config file, or one node of a cluster file")
    .description(`Run a long-lived node.${NODE_HELP}`)
    .option("--config <file>", "a YAML or JSON node config file")
    .option("--cluster <file>", "a cluster file (with --name)")
    .option("--name <node>", "which node of the cluster file to run")
    .action(async (_o, cmd: Command) => done(await (await import("./node-command.js")).runNodeCommand(flagValues(cmd) as never)));

  program.command("shard")
    .summary("split a seed list by owning node")
    .description("Writes <dir>/<node>.txt with the seeds each node owns (rendezvous hashing over the shard key) and\nprints how many each got. Nodes of --nodes n are named node0..node<n-1> with weight 1.")
    .option("--nodes <n>", "n equal nodes (or --cluster)")
    .option("--cluster <file>", "the nodes of a cluster file")
    .option("--seeds <file>", "the seed list")
    .option("--out <dir>", "where the per-node seed files go")
    .addOption(new Option("--shard-key <domain|host>", "shard by registrable domain (default) or by host"))
    .action(async (_o, cmd: Command) => done((await import("./shard-command.js")).runShardCommand(flagValues(cmd) as never)));

  program.command("ingest")
    .summary("add other nodes' outbox files to this node's frontier")
    .description("Adds the URLs in other nodes' outbox files to the frontier of the node whose output folder is\n<dir>; its Bloom filter drops what it has seen. URLs another node owns go on to this node's\noutbox for that node. If the node is running, the files are copied into <dir>/inbox/ and the\nnode ingests them itself.")
    .argument("[files...]", "outbox files")
    .option("--out <dir>", "the node's output folder")
    .option("--redis <url>", "the node's Redis, if not its own")
    .action(async (files: string[], _o, cmd: Command) => done(await (await import("./ingest-command.js")).runIngestCommand(flagValues(cmd) as never, files)));

  program.command("rehome")
    .summary("(stopped node) move queued URLs of hosts it no longer owns to its outbox")
    .description("Run on a stopped node after nodes were added, removed or re-weighted: moves the queued URLs of\nhosts the node no longer owns to <dir>/outbox/<new owner>/ (leases of the last run are returned to\nthe queues first). Then exchange the outboxes and start the nodes with the new cluster file.")
    .option("--out <dir>", "the node's output folder")
    .option("--cluster <file>", "the new cluster file (with --name)")
    .option("--name <node>", "this node's name in it")
    .option("--shard <i>/<n>", "or: the new equal-node shard")
    .option("--redis <url>", "the node's Redis, if not its own")
    .action(async (_o, cmd: Command) => done(await (await import("./rehome-command.js")).runRehomeCommand(flagValues(cmd) as never)));

  program.command("status")
    .summary("pages/s, frontier, hosts, errors, disk of every node (--serve: the cluster page)")
    .description(`The cluster's nodes at a glance.${STATUS_HELP}`)
    .option("--cluster <file>", "the cluster file")
    .option("--json", "one JSON array instead of a table")
    .option("--timeout <ms>", "per node (default 3000)")
    .option("--serve", "run the cluster page until interrupted")
    .option("--port <n>", "--serve: port (default any free port)")
    .option("--bind <addr>", "--serve: address (default 127.0.0.1)")
    .option("--poll <ms>", "--serve: how often nodes are asked (default 2000)")
    .action(async (_o, cmd: Command) => done(await (await import("./status-command.js")).runStatusCommand(flagValues(cmd) as never)));

  const cluster = program.command("cluster").summary("the nodes of a cluster file (for scripts/cluster.sh), its Prometheus config");
  cluster.command("plan")
    .description("Prints each node of the cluster file as: name<TAB>host<TAB>statusPort<TAB>out<TAB>config-file<TAB>seeds\n(--json: the whole resolved cluster). --write writes <out>/node.json for every node, the config\nthat `shardcrawl node --config <out>/node.json` runs with.")
    .option("--cluster <file>", "the cluster file")
    .option("--write", "write <out>/node.json for every node")
    .option("--json", "the whole resolved cluster as JSON")
    .action(async (_o, cmd: Command) => done((await import("./cluster-command.js")).runClusterPlan(flagValues(cmd) as never)));
  cluster.command("prometheus")
    .description("Prints (or writes to --out) the Prometheus configuration that scrapes every node's /metrics,\ne.g. deploy/prometheus.yml from deploy/cluster.fleet.yaml.")
    .option("--cluster <file>", "the cluster file")
    .option("--out <file>", "write here instead of stdout")
    .option("--token-file <path>", "where Prometheus reads the nodes' bearer token")
    .action(async (_o, cmd: Command) => done((await import("./cluster-command.js")).runClusterPrometheus(flagValues(cmd) as never)));

  const inspect = program.command("inspect").summary("a host's queues, robots rules, limits and recent outcomes; a URL's owner and fate");
  const inspectFlags = (c: Command) => c
    .option("--out <dir>", "one node's output folder")
    .option("--redis <url>", "a node's Redis")
    .option("--cluster <file>", "the node that owns it in this cluster")
    .option("--json", "one JSON object instead of text")
    .option("--scan-bytes <b>", "page-log bytes read, newest first (default 268435456)")
    .option("--max-scan <n>", "queue and spill-list elements read per lookup (default 1000000)");
  inspectFlags(inspect.command("host").description(`A host's queues, robots rules, limits and recent outcomes (exit 0, or 8 when the node has never heard of it).${INSPECT_HELP}`).argument("<host>"))
    .option("--recent <n>", "recent outcomes shown (default 10)")
    .action(async (host: string, _o, cmd: Command) => done(await (await import("./inspect-command.js")).runInspectCommand(flagValues(cmd) as never, ["host", host])));
  inspectFlags(inspect.command("url").description(`A URL's owner and fate: fetched, queued, refused and why, shed.${INSPECT_HELP}`).argument("<url>"))
    .addHelpText("after", INSPECT_URL_CODES)
    .action(async (url: string, _o, cmd: Command) => done(await (await import("./inspect-command.js")).runInspectCommand(flagValues(cmd) as never, ["url", url])));

  const exclude = program.command("exclude").summary("the site owner's opt-out list of a running or stopped node").addHelpText("after", EXCLUDE_HELP);
  const excludeFlags = (c: Command) => c
    .option("--out <dir>", "the node's output folder")
    .option("--redis <url>", "the node's Redis")
    .option("--json", "one JSON object instead of text")
    .addHelpText("after", EXCLUDE_HELP);
  const runExclude = (action: string) => async (...args: unknown[]) => {
    const cmd = args[args.length - 1] as Command;
    const pattern = action === "list" ? [] : [args[0] as string];
    done(await (await import("./exclude-command.js")).runExcludeCommand(flagValues(cmd) as never, [action, ...pattern]));
  };
  excludeFlags(exclude.command("add").description("exclude a domain, host or URL prefix").argument("<pattern>", "domain|host|url-prefix"))
    .option("--reason <text>", "why (shown by \"exclude list\" and \"inspect url\")")
    .action(runExclude("add"));
  excludeFlags(exclude.command("remove").description("take a pattern off the list").argument("<pattern>", "domain|host|url-prefix")).action(runExclude("remove"));
  excludeFlags(exclude.command("list").description("the list, with reasons and times")).action(runExclude("list"));

  const index = program.command("index").summary("merge capture index files (Parquet) into one sorted file");
  index.command("merge")
    .description("Merges the capture index files (*.parquet, written with --derivatives index) found in the given\nfolders (searched 4 levels deep: a node's --out folder, or a cluster's outRoot) and the given\nfiles into one file, sorted by registrable domain, SURT key and fetch time. Prints a JSON summary.\nExit codes: 0 merged, 1 an input is unreadable or not a capture index, 2 usage (or no input found).")
    .argument("<inputs...>", "folders or index files")
    .option("--out <file.parquet>", "the merged file")
    .action(async (inputs: string[], _o, cmd: Command) => done(await (await import("./index-command.js")).runIndexMerge(flagValues(cmd) as never, inputs)));

  const completion = program.command("completion")
    .summary("print a shell completion script (source <(shardcrawl completion bash))")
    .description("Prints a completion script for commands, subcommands and flags. Load it in the shell's rc file:\n  bash: source <(shardcrawl completion bash)\n  zsh:  source <(shardcrawl completion zsh)     (after compinit)");
  for (const shell of ["bash", "zsh"] as const) {
    completion.command(shell).description(`the ${shell} completion script`)
      .action(async () => done((await import("./completion-command.js")).runCompletionCommand(shell)));
  }
  return program;
}

/** Commander's parse errors as our usage errors (exit 2). */
export { UsageError };
