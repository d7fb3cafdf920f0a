// tsc emits only .js from .ts, so the files the code reads at run time (the Lua scripts and the
// status pages) are copied from src/ to the same place under dist/: a built package runs without
// its source tree (a shipped build, a Docker image).
import { cpSync, readdirSync, statSync } from "node:fs";
import { join, relative } from "node:path";

const ASSET = /\.(lua|html|css)$|\/ui\/[^/]+\.js$/;
const pkg = new URL("../packages/shardcrawl/", import.meta.url).pathname;
const src = join(pkg, "src");
const dist = join(pkg, "dist");

function walk(dir) {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) walk(path);
    else if (ASSET.test(path)) cpSync(path, join(dist, relative(src, path)));
  }
}
walk(src);
