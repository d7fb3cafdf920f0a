// frontier/ is the only owner of the node's Redis keys: no source file outside it spells a key
// name. The patterns are the key families of frontier/keys.ts as code writes them (a string or
// template that starts with the family, or a prefix variable followed by one).
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import { describe, expect, it } from "vitest";

const SRC = new URL("../../src/", import.meta.url).pathname;

/** Key families of frontier/keys.ts (the part after the prefix P). */
const FAMILIES = [
  "h:", "q0:", "q1:", "q2:", "q3:", "ready", "leases", "lease", "lo:", "leaseseq", "bf:", "robots:", "pq", "pg:", "pageseq", "pi:", "pc", "pqt", "pqb",
  "flowcfg", "flow", "big", "press", "spill", "fetchtimes", "spillsize", "spillpos", "shedlog", "ro:", "rdefer", "d:", "dw:", "held", "excl", "exclv",
  "tmp:excl", "dh", "rdue:", "rslots", "rhid", "rhostn", "rhost", "rsched", "rprior", "ip:", "ipo:", "stats", "scope:mode", "scope:keys",
  "rh:", "rm:", "rm", "rv", "rhint", "rlist:", "rlisting", "rlists", "rfeeds", "rcharge", "aff", "affv", "rcb", "rco",
];
const esc = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
const family = `(?:${FAMILIES.map(esc).join("|")})`;
/**
 * `${prefix}stats`, `${this.keys.prefix}h:${host}`, prefix + "stats", "P stats", `q${tier}:` after a prefix.
 * A family name alone ("stats" as a message type) is no key: only a prefix in front makes one.
 */
const KEY = new RegExp(
  [
    `\\$\\{[\\w.]*[pP]refix\\}${family}(?![\\w])`,
    `\\$\\{[\\w.]*[pP]refix\\}q\\$\\{`,
    `[pP]refix\\s*\\+\\s*["'\`]${family}`,
    `["'\`]P ${family}["'\`]`,
  ].join("|"),
);

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith(".ts") ? [path] : [];
  });
}

function offenders(): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const path of sources(SRC)) {
    const rel = relative(SRC, path);
    if (rel.startsWith("frontier/")) continue;
    const lines = readFileSync(path, "utf8").split("\n");
    const hits = lines.map((l, i) => [l, i + 1] as const).filter(([l]) => !/^\s*(\/\/|\*|\/\*)/.test(l) && KEY.test(l)).map(([l, n]) => `${n}: ${l.trim()}`);
    if (hits.length > 0) out.set(rel, hits);
  }
  return out;
}

describe("the keyspace has one owner", () => {
  it("the pattern finds key spellings (so the check can fail)", () => {
    for (const line of ["`${prefix}h:${host}`", "`${this.keys.prefix}scope:mode`", "`${prefix}q${tier}:${host}`", 'prefix + "stats"', '"P flow"']) expect(line).toMatch(KEY);
    for (const line of ['type: "stats"', "`${prefix}-${process.pid}`", "`page log ${opts.prefix}`"]) expect(line).not.toMatch(KEY);
  });

  it("no source file outside frontier/ spells a Redis key", () => {
    expect(Object.fromEntries(offenders())).toEqual({});
  });
});
