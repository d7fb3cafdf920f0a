#!/usr/bin/env node
// Top self-time functions of each .cpuprofile in a folder (for finding hot spots by hand).
// Usage: node scripts/bench/top-functions.mjs DIR [N]
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";

const [dir, n = "25"] = process.argv.slice(2);
for (const f of readdirSync(dir).filter((x) => x.endsWith(".cpuprofile"))) {
  const prof = JSON.parse(readFileSync(join(dir, f), "utf8"));
  const self = new Map();
  const byId = new Map(prof.nodes.map((x) => [x.id, x]));
  let total = 0;
  prof.samples.forEach((id, i) => {
    const fr = byId.get(id).callFrame;
    const key = `${fr.functionName || "(anon)"} ${fr.url.split("/").slice(-2).join("/")}:${fr.lineNumber + 1}`;
    const dt = (prof.timeDeltas[i] ?? 0) / 1000;
    self.set(key, (self.get(key) ?? 0) + dt);
    if (fr.functionName !== "(idle)") total += dt;
  });
  console.log(`== ${f}: ${total.toFixed(0)} ms busy`);
  for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, Number(n))) console.log(`${v.toFixed(0).padStart(7)} ms ${(100 * v / total).toFixed(1).padStart(5)}%  ${k}`);
}
