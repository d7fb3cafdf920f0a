// "did you mean --max-pages?" for a misspelled flag, command or subcommand. The parse errors of every
// command reach main.ts as a UsageError carrying node:util parseArgs' message, so this reads that
// message once there instead of each command catching and suggesting on its own.
import { COMMANDS, flagNamesOf } from "./command-catalog.js";

/** Edit distance counting a swap of two neighbouring letters as one edit ("plna" -> "plan");
 *  a dozen lines, not worth a dependency. */
export function editDistance(a: string, b: string): number {
  const d: number[][] = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const row = d[i]!;
      row[j] = Math.min(d[i - 1]![j]! + 1, row[j - 1]! + 1, d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) row[j] = Math.min(row[j]!, d[i - 2]![j - 2]! + 1);
    }
  }
  return d[a.length]![b.length]!;
}

/** The closest candidate, if it is close enough to be what was meant (about a third of the word may differ). */
export function closest(word: string, candidates: readonly string[]): string | undefined {
  const bare = (s: string) => s.replace(/^-+/, "");
  const w = bare(word);
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const c of candidates) {
    const d = editDistance(w, bare(c));
    if (d < bestDistance) [best, bestDistance] = [c, d];
  }
  return bestDistance <= Math.max(1, Math.floor(w.length / 3)) ? best : undefined;
}

/** A "did you mean ...?" line for a usage error's message, given the command line (argv without node and script). */
export async function suggestionFor(message: string, argv: readonly string[]): Promise<string | undefined> {
  const [command, subcommand] = argv;
  let m = /Unknown option '(--[^'=]+)'/.exec(message);
  let guess: string | undefined;
  if (m && command !== undefined) guess = closest(m[1]!, await flagNamesOf(command, subcommand));
  else if ((m = /unknown command "([^"]+)"/.exec(message))) guess = closest(m[1]!, Object.keys(COMMANDS));
  else if ((m = /unknown subcommand "([^"]+)"/.exec(message)) && command !== undefined) guess = closest(m[1]!, Object.keys(COMMANDS[command]?.subcommands ?? {}));
  return guess === undefined ? undefined : `did you mean ${guess}?`;
}
