// `shardcrawl index merge --out <file> <dirs or files...>`: merges capture index files (the
// NAME.parquet files beside a node's WARC files) into one Parquet file sorted by registrable
// domain, SURT key and fetch time. Give it a node's --out folder, a cluster's outRoot (every
// node's folder below it), or files; each input is already sorted, so the merge streams.
import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { mergeCaptureIndexes } from "../store/capture-index.js";
import { UsageError } from "./flags.js";

export const INDEX_USAGE = `usage: shardcrawl index merge --out <file.parquet> <dir|file.parquet>...

Merges the capture index files (*.parquet, written with --derivatives index) found in the given
folders (searched 4 levels deep: a node's --out folder, or a cluster's outRoot) and the given
files into one file, sorted by registrable domain, SURT key and fetch time. Prints a JSON summary.
Exit codes: 0 merged, 1 an input is unreadable or not a capture index, 2 usage (or no input found).
`;

/** *.parquet files under `dir`, depth-limited, in name order. */
function findIndexFiles(dir: string, depth: number, out: string[]): void {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return;
  }
  for (const name of names) {
    const path = join(dir, name);
    let isDir = false;
    try {
      isDir = statSync(path).isDirectory();
    } catch {
      continue;
    }
    if (isDir) {
      if (depth > 0) findIndexFiles(path, depth - 1, out);
    } else if (name.endsWith(".parquet")) {
      out.push(path);
    }
  }
}

export const INDEX_MERGE_OPTIONS = { out: { type: "string" }, help: { type: "boolean", short: "h" } } as const;

export async function runIndexCommand(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined) throw new UsageError("");
  // Asked-for help is an answer: stdout, exit 0.
  if (sub === "--help" || sub === "-h" || sub === "help") {
    process.stdout.write(INDEX_USAGE);
    return 0;
  }
  if (sub !== "merge") throw new UsageError(`index: unknown subcommand ${JSON.stringify(sub)}`);
  let parsed;
  try {
    parsed = parseArgs({ args: rest, strict: true, allowPositionals: true, options: INDEX_MERGE_OPTIONS });
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (parsed.values.help) {
    process.stdout.write(INDEX_USAGE);
    return 0;
  }
  const out = parsed.values.out;
  if (!out) throw new UsageError("index merge: --out <file.parquet> is required");
  if (parsed.positionals.length === 0) throw new UsageError("index merge: name at least one folder or index file");
  const inputs: string[] = [];
  for (const p of parsed.positionals) {
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch {
      throw new UsageError(`index merge: ${p} does not exist`);
    }
    if (isDir) findIndexFiles(p, 4, inputs);
    else inputs.push(p);
  }
  // Never read the output (or an earlier merge into it) as an input.
  const outPath = resolve(out);
  const files = [...new Set(inputs.map((p) => resolve(p)))].filter((p) => p !== outPath);
  if (files.length === 0) throw new UsageError("index merge: no capture index files (*.parquet) found");
  const report = await mergeCaptureIndexes(files, outPath);
  process.stdout.write(`${JSON.stringify({ out: outPath, ...report })}\n`);
  return 0;
}
