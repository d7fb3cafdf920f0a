// commander's Command with one change: "did you mean" also for a misspelled `--flag=value` (commander
// compares the whole "--flag=value" with the flag names, which never comes close).
import { Command } from "commander";

const base = Command.prototype as unknown as { unknownOption(this: Command, flag: string): never };

export class CliCommand extends Command {
  override createCommand(name?: string): Command {
    return new CliCommand(name);
  }

  /** Called by commander for an unknown option (not in its typings, part of its override surface). */
  unknownOption(flag: string): never {
    return base.unknownOption.call(this, flag.startsWith("--") ? flag.split("=")[0]! : flag);
  }
}
