// The import boundaries (eslint.boundaries.js) run on fixture sources: a deep import into
// frontier/ and an upward import from a lower stage fail lint, the entry points pass.
import { ESLint, type Linter } from "eslint";
import tseslint from "typescript-eslint";
import { describe, expect, it } from "vitest";

const ROOT = new URL("../../../", import.meta.url).pathname;
// The rules live in a plain JS module beside eslint.config.js (no type declarations).
const BOUNDARIES: string = new URL("eslint.boundaries.js", `file://${ROOT}`).href;
const { boundaries } = (await import(BOUNDARIES)) as { boundaries: Linter.Config[] };

async function lint(file: string, code: string): Promise<string[]> {
  const eslint = new ESLint({
    cwd: ROOT,
    overrideConfigFile: true,
    overrideConfig: [{ files: ["**/*.ts"], languageOptions: { parser: tseslint.parser } }, ...boundaries],
  });
  const [result] = await eslint.lintText(code, { filePath: `${ROOT}packages/shardcrawl/src/${file}` });
  return result!.messages.map((m) => `${m.ruleId ?? "fatal"}: ${m.message}`);
}

describe("import boundaries", () => {
  it("a deep import into frontier/ from outside fails", async () => {
    const errors = await lint("cli/fixture.ts", `import { FrontierKeys } from "../frontier/keys.js";\nexport const k = FrontierKeys;\n`);
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatch(/no-restricted-imports: .*frontier\/index\.js/);
  });

  it("a type-only deep import fails too", async () => {
    expect(await lint("cli/inspect/fixture.ts", `import type { Frontier } from "../../frontier/frontier.js";\nexport type F = Frontier;\n`)).toHaveLength(1);
  });

  it("the entry points pass, and frontier/ may import its own files", async () => {
    expect(await lint("node/fixture.ts", `import { Frontier } from "../frontier/index.js";\nexport const f = Frontier;\n`)).toEqual([]);
    expect(await lint("parse/fixture.ts", `import { BloomHasher } from "../frontier/hashing.js";\nexport const h = BloomHasher;\n`)).toEqual([]);
    expect(await lint("frontier/fixture.ts", `import { FrontierKeys } from "./keys.js";\nexport const k = FrontierKeys;\n`)).toEqual([]);
  });

  it("a lower stage importing node/ or cli/ fails", async () => {
    for (const [file, from] of [["parse/fixture.ts", "../node/open-frontier.js"], ["shard/fixture.ts", "../cli/flags.js"], ["frontier/fixture.ts", "../node/config.js"], ["schedule/recrawl/fixture.ts", "../../node/recrawl-loop.js"]] as const) {
      const errors = await lint(file, `import { x } from "${from}";\nexport const y = x;\n`);
      expect(errors, `${file} importing ${from}`).toHaveLength(1);
      expect(errors[0]).toMatch(/below node\//);
    }
  });

  it("node/ and cli/ may import node/", async () => {
    expect(await lint("cli/fixture.ts", `import { x } from "../node/config.js";\nexport const y = x;\n`)).toEqual([]);
  });
});
