// The status pages are plain HTML and JavaScript files (no build step, no CDN). The build copies
// only .ts files, so they are read from the source tree: from dist/node/ and src/node/ alike,
// "../../src/node/ui/" resolves to packages/shardcrawl/src/node/ui/ (as frontier/scripts.ts does
// for the Lua scripts). Read once, on first use.
import { readFileSync } from "node:fs";

const UI_DIR = new URL("../../src/node/ui/", import.meta.url);
const cache = new Map<string, string>();

export function uiAsset(name: "node.html" | "cluster.html" | "charts.js" | "style.css"): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(new URL(name, UI_DIR), "utf8");
    cache.set(name, text);
  }
  return text;
}
