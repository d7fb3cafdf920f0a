// Every Lua script's "Touches" header names every key the script can touch, including the keys
// of the lib.lua / bloom_lib.lua helpers it calls (followed through the helpers' calls). The keys
// are found in the code itself (P .. 'name' and the K_* constants), so a new key use without a
// header line fails here.
import { readdirSync, readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { SCRIPT_FILES } from "../../src/frontier/scripts.js";

const LUA = new URL("../../src/frontier/lua/", import.meta.url);
const read = (f: string) => readFileSync(new URL(f, LUA), "utf8");

/** Key names a piece of Lua builds: P .. 'name' (or prefix .. 'name'). */
function inlineKeys(code: string): Set<string> {
  const out = new Set<string>();
  for (const m of code.matchAll(/\b(?:P|prefix)\s*\.\.\s*'([A-Za-z:]+)'/g)) out.add(m[1]!);
  return out;
}

interface Unit { keys: Set<string>; calls: Set<string> }

/** Splits a helper library into its top-level functions; constants K_X = P .. 'name' become key references. */
function libraryUnits(code: string, constants: Map<string, string>): Map<string, string> {
  // (lib.lua sets them per call in lib_begin: "K_READY = P .. 'ready'".)
  for (const m of code.matchAll(/^\s*(?:local )?(K_[A-Z_]+) = P \.\. '([A-Za-z:]+)'/gm)) constants.set(m[1]!, m[2]!);
  const units = new Map<string, string>();
  const lines = code.split("\n");
  for (let i = 0; i < lines.length; i++) {
    const m = /^(?:local )?function ([a-z_0-9]+)\(/.exec(lines[i]!);
    if (!m) continue;
    if (/\bend\s*$/.test(lines[i]!) && !/^\S.*\bdo\b|\bthen\b/.test(lines[i]!)) { units.set(m[1]!, lines[i]!); continue; }
    let j = i + 1;
    while (j < lines.length && !/^end\b/.test(lines[j]!)) j++;
    units.set(m[1]!, lines.slice(i, j + 1).join("\n"));
  }
  return units;
}

function analyse(code: string, fnNames: readonly string[], constants: Map<string, string>): Unit {
  const keys = inlineKeys(code);
  for (const [k, name] of constants) if (new RegExp(`\\b${k}\\b`).test(code)) keys.add(name);
  const calls = new Set(fnNames.filter((f) => new RegExp(`\\b${f}\\(`).test(code)));
  return { keys, calls };
}

/** How a header names a key: "P h:<host>" for a family, "P stats" for a single key. */
function mentioned(header: string, name: string): boolean {
  const esc = name.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const pattern = name.endsWith(":") || name === "q" || name === "bf" ? `P ${esc}<` : `P ${esc}(?![A-Za-z0-9_:<])`;
  return new RegExp(pattern).test(header);
}

function header(code: string): string {
  const lines = code.split("\n");
  const out: string[] = [];
  for (const l of lines) {
    if (!l.startsWith("--")) break;
    out.push(l);
  }
  return out.join("\n");
}

describe("Lua Touches headers", () => {
  const constants = new Map<string, string>();
  const lib = libraryUnits(read("lib.lua"), constants);
  const bloomLib = libraryUnits(read("bloom_lib.lua"), constants);

  function touched(name: string): Set<string> {
    const withLib = SCRIPT_FILES[name as keyof typeof SCRIPT_FILES];
    const fns = new Map<string, string>([...(withLib ? bloomLib : []), ...(withLib === true ? lib : [])]);
    const names = [...fns.keys()];
    const keys = new Set<string>();
    const seen = new Set<string>();
    const todo: Unit[] = [analyse(read(`${name}.lua`), names, withLib === true ? constants : new Map())];
    while (todo.length > 0) {
      const u = todo.pop()!;
      for (const k of u.keys) keys.add(k);
      for (const c of u.calls) {
        if (seen.has(c)) continue;
        seen.add(c);
        todo.push(analyse(fns.get(c)!, names, constants));
      }
    }
    return keys;
  }

  it("covers every script file", () => {
    const files = readdirSync(LUA).filter((f) => f.endsWith(".lua") && !f.endsWith("lib.lua")).map((f) => f.slice(0, -4)).sort();
    expect(files).toEqual(Object.keys(SCRIPT_FILES).sort());
  });

  it("the helper analysis finds the helpers' keys (so the check below can fail)", () => {
    expect(touched("add_links")).toContain("h:");
    expect(touched("add_links")).toContain("bf:grow");
  });

  for (const file of ["lib.lua", "bloom_lib.lua"]) {
    it(`${file} names every key its helpers touch`, () => {
      const code = read(file);
      const keys = new Set([...inlineKeys(code), ...[...constants].filter(([k]) => new RegExp(`\\b${k}\\b`).test(code)).map(([, n]) => n)]);
      const missing = [...keys].filter((k) => !mentioned(header(code), k)).sort();
      expect(missing, `${file} header lacks ${JSON.stringify(missing)}`).toEqual([]);
    });
  }

  for (const name of Object.keys(SCRIPT_FILES)) {
    it(`${name}.lua names every key it touches`, () => {
      const h = header(read(`${name}.lua`));
      const missing = [...touched(name)].filter((k) => !mentioned(h, k)).sort();
      expect(missing, `${name}.lua header lacks ${JSON.stringify(missing)}`).toEqual([]);
    });
  }
});
