#!/usr/bin/env node
// Writes the generated reference (docs/reference/*.md, packages/shardcrawl/schema/*.schema.json)
// from the config schema and the CLI definitions (packages/shardcrawl/src/cli/reference-docs.ts).
//   pnpm docs:gen            # build, then write
//   node scripts/docs-gen.mjs --check   # exit 1 and name the files that differ
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { generatedReference } from "../packages/shardcrawl/dist/cli/reference-docs.js";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const check = process.argv.includes("--check");
const stale = [];
for (const [path, text] of Object.entries(generatedReference())) {
  const file = join(root, path);
  let old = null;
  try {
    old = readFileSync(file, "utf8");
  } catch {
    // not written yet
  }
  if (old === text) continue;
  stale.push(path);
  if (!check) {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
  }
}
if (check && stale.length) {
  console.error(`docs-gen: out of date (run pnpm docs:gen): ${stale.join(", ")}`);
  process.exit(1);
}
console.log(stale.length ? `docs-gen: wrote ${stale.join(", ")}` : "docs-gen: up to date");
