#!/usr/bin/env node
// shardcrawl's command line. `crawl` runs one node until its frontier drains; `node` runs the same
// engine as a long-lived node from a config file.
import { CRAWL_USAGE, UsageError, parseCrawlFlags } from "./flags.js";
import { loadNodeConfigFile } from "./config-file.js";
import { runNode } from "../node/supervisor.js";

const USAGE = `usage: shardcrawl <command> [flags]

commands:
  crawl --seeds <file> --out <dir> [flags]   crawl until the frontier is empty or --max-pages is reached
  node --config <file>                       run a long-lived node from a YAML or JSON config file
  help [command]                             show help

run "shardcrawl crawl --help" for the crawl flags.
`;

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  switch (cmd) {
    case "crawl": {
      const config = parseCrawlFlags(rest);
      const summary = await runNode(config);
      return summary.reason === "signal" ? 130 : 0;
    }
    case "node": {
      const i = rest.indexOf("--config");
      const file = i >= 0 ? rest[i + 1] : undefined;
      if (!file) throw new UsageError("node: --config <file> is required");
      await runNode(loadNodeConfigFile(file));
      return 0;
    }
    case "help":
    case "--help":
    case "-h":
    case undefined:
      process.stdout.write(rest[0] === "crawl" ? CRAWL_USAGE : USAGE);
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
      process.stderr.write(process.argv[2] === "crawl" ? CRAWL_USAGE : USAGE);
      process.exit(2);
    }
    process.stderr.write(`shardcrawl: ${(err as Error).message ?? String(err)}\n`);
    process.exit(1);
  },
);
