// ARCHITECTURE.md walks a URL through the code as `file:function` hops. Code moves faster than prose,
// so every hop it names is checked here against the source: the file must exist and the function,
// class or method must be defined in it. A reader following the walk never takes a wrong turn.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { dirname, join, normalize } from "node:path";
import { describe, expect, test } from "vitest";
import { ROOT } from "./harness/crawl.js";

/** Paths without one of these roots are relative to the crawler's sources. */
const REPO_ROOTS = ["packages/", "scripts/", "test/", "deploy/", "docs/", ".ci/"];
const SOURCE_ROOT = "packages/shardcrawl/src/";

/** A backticked path to a source file, optionally followed by `:name` or `:Class.method`. */
const REFERENCE = /`((?:\.ci\/|[A-Za-z0-9_-]+\/)[A-Za-z0-9_./-]*\.(?:ts|lua|sh|mjs|js|md|yaml|json))(?::([A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)?))?`/g;

interface Reference {
  text: string;
  file: string;
  name?: string;
}

function referencesIn(markdown: string): Reference[] {
  const out: Reference[] = [];
  for (const m of markdown.matchAll(REFERENCE)) {
    out.push({ text: m[0], file: m[1]!, ...(m[2] ? { name: m[2] } : {}) });
  }
  return out;
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** True when `name` is defined in `source`: a function, class, const, Lua function, shell function or method. */
function defines(source: string, name: string): boolean {
  const n = escape(name);
  const declaration = new RegExp(`\\b(?:function\\*?|class|interface|type|const|let|var|enum)\\s+${n}\\b`);
  if (declaration.test(source)) return true;
  const shellFunction = new RegExp(`^\\s*(?:function\\s+)?${n}\\s*\\(\\)\\s*\\{`, "m");
  if (shellFunction.test(source)) return true;
  // A method: its name starts the line (after modifiers) and the line is not a finished call statement.
  const method = new RegExp(`^\\s*(?:(?:public|private|protected|static|readonly|async|get|set|override)\\s+)*${n}\\s*(?:<[^>\\n]*>)?\\(.*$`, "gm");
  for (const m of source.matchAll(method)) if (!/;\s*$/.test(m[0])) return true;
  return false;
}

function resolveFile(file: string): string {
  return REPO_ROOTS.some((r) => file.startsWith(r)) ? join(ROOT, file) : join(ROOT, SOURCE_ROOT, file);
}

/** Every reference that does not hold, with the reason. */
function brokenReferences(markdown: string, read: (path: string) => string | null): string[] {
  const problems: string[] = [];
  for (const ref of referencesIn(markdown)) {
    const source = read(resolveFile(ref.file));
    if (source === null) {
      problems.push(`${ref.text}: no file ${ref.file}`);
      continue;
    }
    if (!ref.name) continue;
    const parts = ref.name.split(".");
    for (const part of parts) {
      if (!defines(source, part)) problems.push(`${ref.text}: ${ref.file} defines no ${part}`);
    }
  }
  return problems;
}

function readOrNull(path: string): string | null {
  return existsSync(path) ? readFileSync(path, "utf8") : null;
}

/** A heading's anchor as GitHub spells it: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading.trim().toLowerCase().replace(/[^\w\- ]/g, "").replace(/ /g, "-");
}

/** Relative links of a markdown file (repository path) whose file or heading does not exist. */
function brokenLinks(file: string, text = readFileSync(join(ROOT, file), "utf8")): string[] {
  const problems: string[] = [];
  for (const m of text.matchAll(/\]\(([^)\s]+)\)/g)) {
    const link = m[1]!;
    if (/^[a-z]+:/.test(link)) continue;
    const [path, anchor] = link.split("#", 2) as [string, string | undefined];
    const target = path ? normalize(join(dirname(file), path)) : file;
    if (!existsSync(join(ROOT, target))) {
      problems.push(`${file}: ${link}: no ${target}`);
      continue;
    }
    if (anchor && target.endsWith(".md")) {
      const headings = readFileSync(join(ROOT, target), "utf8").split("\n").filter((l) => /^#+\s/.test(l)).map((l) => anchorOf(l.replace(/^#+\s+/, "")));
      if (!headings.includes(anchor)) problems.push(`${file}: ${link}: no heading #${anchor} in ${target}`);
    }
  }
  return problems;
}

describe("the docs' relative links lead somewhere", () => {
  const files = ["README.md", "ARCHITECTURE.md", "BENCHMARKS.md", "CHANGELOG.md", ...readdirSync(join(ROOT, "docs")).filter((f) => f.endsWith(".md")).map((f) => `docs/${f}`)];

  test("every linked file and heading exists", () => {
    expect(files.flatMap((f) => brokenLinks(f))).toEqual([]);
  });

  test("the check reports a missing file and a missing heading", () => {
    expect(anchorOf("The page budget (`--max-pages`)")).toBe("the-page-budget---max-pages");
    const fake = "[a](docs/crawling.md#the-page-budget---max-pages) [b](docs/crawling.md#no-such-heading) [c](docs/no-such.md) [d](https://example.org/x)";
    expect(brokenLinks("README.md", fake)).toEqual([
      "README.md: docs/crawling.md#no-such-heading: no heading #no-such-heading in docs/crawling.md",
      "README.md: docs/no-such.md: no docs/no-such.md",
    ]);
  });
});

describe("ARCHITECTURE.md names only code that exists", () => {
  const doc = readFileSync(join(ROOT, "ARCHITECTURE.md"), "utf8");

  test("the walk names many file:function hops", () => {
    // Guards the pattern itself: a change that made it match nothing would pass every check below.
    expect(referencesIn(doc).filter((r) => r.name).length).toBeGreaterThan(30);
  });

  test("every referenced file exists and defines the function, class or method named", () => {
    expect(brokenReferences(doc, readOrNull)).toEqual([]);
  });

  test("the checker reports a missing file, function and method", () => {
    const fake = "`node/supervisor.ts:runNode` `node/supervisor.ts:noSuchThing` `frontier/frontier.ts:Frontier.noSuchMethod` `node/no-such-file.ts:x` `frontier/lua/lib.lua:add_links` `scripts/cluster/lib.sh:cmd_exchange`";
    expect(brokenReferences(fake, readOrNull)).toEqual([
      "`node/supervisor.ts:noSuchThing`: node/supervisor.ts defines no noSuchThing",
      "`frontier/frontier.ts:Frontier.noSuchMethod`: frontier/frontier.ts defines no noSuchMethod",
      "`node/no-such-file.ts:x`: no file node/no-such-file.ts",
    ]);
  });
});
