// The status pages are plain HTML and JavaScript files (no build step, no CDN), read from ui/
// beside this module: the build copies them into dist/node/ui/ (scripts/copy-assets.mjs), so a
// built package needs no source tree. Read once, on first use.
import { readFileSync } from "node:fs";

const UI_DIR = new URL("./ui/", import.meta.url);
const cache = new Map<string, string>();

export function uiAsset(name: "node.html" | "cluster.html" | "charts.js" | "style.css"): string {
  let text = cache.get(name);
  if (text === undefined) {
    text = readFileSync(new URL(name, UI_DIR), "utf8");
    cache.set(name, text);
  }
  return text;
}
