#!/usr/bin/env node
// shardcrawl's command line (the commands are defined in program.ts). `crawl` runs one node until its
// frontier drains; `node` runs the same engine as a long-lived node from a config file.
import { CommanderError } from "commander";
import { buildProgram, UsageError } from "./program.js";
import { StartupError } from "../node/exit-codes.js";
import { UserAgentContactError } from "../node/user-agent-contact.js";

/** Exit code of a command line that cannot be understood (EX_USAGE-like, as before). */
const USAGE_EXIT = 2;

async function main(argv: string[]): Promise<number> {
  const result = { code: 0 };
  const program = buildProgram(result);
  if (argv.length === 0) {
    program.outputHelp({ error: true });
    return USAGE_EXIT;
  }
  await program.parseAsync(argv, { from: "user" });
  return result.code;
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    if (err instanceof CommanderError) {
      // Commander has printed the message (with its "did you mean"); help asked for is exit 0.
      process.exit(err.exitCode === 0 ? 0 : USAGE_EXIT);
    }
    if (err instanceof StartupError) {
      process.stderr.write(`shardcrawl: ${err.message}\n  what to do: ${err.hint}\n`);
      process.exit(err.exitCode);
    }
    if (err instanceof UsageError) {
      const command = process.argv[2] && !process.argv[2].startsWith("-") ? ` ${process.argv[2]}` : "";
      process.stderr.write(`shardcrawl: ${err.message}\n  what to do: see "shardcrawl${command} --help"\n`);
      process.exit(USAGE_EXIT);
    }
    process.stderr.write(`shardcrawl: ${(err as Error).message ?? String(err)}\n`);
    // A refused configuration (e.g. a User-Agent without a contact) has its own exit code.
    const code = (err as { exitCode?: unknown } | null)?.exitCode;
    process.exit(err instanceof UserAgentContactError && typeof code === "number" ? code : 1);
  },
);
