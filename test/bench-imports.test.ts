// The benchmark scripts load the crawler's built modules by path (packages/<pkg>/dist/...), which
// no compiler checks: when a module moved, `pnpm bench` failed on that bench only when someone ran
// it (the per-link bench loaded frontier/url-filters.js for sessions after it had moved to admit/).
// Every such path must name a source file that exists.
import { readdirSync, readFileSync, existsSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, test } from "vitest";

const ROOT = join(import.meta.dirname, "..");

function scripts(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? scripts(join(dir, e.name)) : e.name.endsWith(".mjs") ? [join(dir, e.name)] : []);
}

/** [package, module path inside dist] of every built module a script names. */
function distPaths(text: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const m of text.matchAll(/(shardcrawl|simweb)\/dist\/([A-Za-z0-9_./-]+\.js)/g)) out.push([m[1]!, m[2]!]);
  // links.mjs and derivatives.mjs: const dist = (p) => import(join(ROOT, "packages/shardcrawl/dist", p)); dist("url/scope.js")
  if (/const dist = \(p\) => import\(join\(ROOT, "packages\/shardcrawl\/dist", p\)\)/.test(text)) {
    for (const m of text.matchAll(/\bdist\("([A-Za-z0-9_./-]+\.js)"\)/g)) out.push(["shardcrawl", m[1]!]);
  }
  return out;
}

describe("benchmark scripts", () => {
  const files = scripts(join(ROOT, "scripts"));

  test("find the scripts and the built modules they load", () => {
    expect(files.length).toBeGreaterThan(10);
    expect(files.flatMap((f) => distPaths(readFileSync(f, "utf8"))).length).toBeGreaterThan(20);
  });

  test("every built module a script loads by path has its source file", () => {
    const missing: string[] = [];
    for (const f of files) {
      for (const [pkg, mod] of distPaths(readFileSync(f, "utf8"))) {
        const src = join(ROOT, "packages", pkg, "src", mod.replace(/\.js$/, ".ts"));
        if (!existsSync(src)) missing.push(`${f.slice(ROOT.length + 1)}: ${pkg}/dist/${mod}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
