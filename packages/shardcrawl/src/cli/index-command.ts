// `shardcrawl index merge --out <file> <dirs or files...>`: merges capture index files (the
// NAME.parquet files beside a node's WARC files) into one Parquet file sorted by registrable
// domain, SURT key and fetch time. Give it a node's --out folder, a cluster's outRoot (every
// node's folder below it), or files; each input is already sorted, so the merge streams.
import { readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { mergeCaptureIndexes } from "../store/capture-index.js";
import { UsageError } from "./flags.js";

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

export async function runIndexMerge(v: { out?: string }, positionals: string[]): Promise<number> {
  const out = v.out;
  if (!out) throw new UsageError("index merge: --out <file.parquet> is required");
  if (positionals.length === 0) throw new UsageError("index merge: name at least one folder or index file");
  const inputs: string[] = [];
  for (const p of positionals) {
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
