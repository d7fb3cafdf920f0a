// One schema for the configuration: the committed reference (docs tables, JSON Schemas) is what the
// schema generates, config files are checked with key paths, and the JSON Schemas accept the
// cluster files we ship and refuse a wrong key.
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { Ajv } from "ajv";
import { parse as parseYaml } from "yaml";
import { describe, expect, it } from "vitest";
import { generatedReference } from "../../src/cli/reference-docs.js";
import { nodeConfigFromObject } from "../../src/cli/config-file.js";
import { clusterFromObject } from "../../src/cli/cluster-file.js";
import { parseCrawlFlags } from "../../src/cli/flags.js";
import { settings } from "../../src/node/config-schema.js";

const ROOT = join(import.meta.dirname, "../../../..");

describe("generated reference", () => {
  for (const [path, text] of Object.entries(generatedReference())) {
    it(`${path} is what the schema generates (else run pnpm docs:gen)`, () => {
      expect(readFileSync(join(ROOT, path), "utf8")).toBe(text);
    });
  }

  it("lists every crawl flag with its config key", () => {
    const flags = readFileSync(join(ROOT, "docs/reference/flags.md"), "utf8");
    for (const s of settings().filter((x) => x.flag)) expect(flags).toContain(`| \`--${s.flag!.flag}`);
    expect(flags).toContain("| `--delay <ms>` | `delayMs` | 1000 |");
  });
});

describe("config files are checked by the schema, with key paths", () => {
  it("an unknown key, nested too, is named with its path", () => {
    expect(() => nodeConfigFromObject({ out: "o", delay: 5 }, "node.yaml")).toThrow(/node\.yaml: unknown key "delay"/);
    expect(() => nodeConfigFromObject({ out: "o", timeouts: { connectMss: 5 } }, "node.yaml")).toThrow(/node\.yaml: unknown key "timeouts\.connectMss"/);
  });

  it("a wrong type or value names the key", () => {
    expect(() => nodeConfigFromObject({ out: "o", delayMs: "fast" }, "node.yaml")).toThrow(/node\.yaml: delayMs: .*number/);
    expect(() => nodeConfigFromObject({ out: "o", scope: "world" }, "node.yaml")).toThrow(/node\.yaml: scope: expected domains, hosts or any, got "world"/);
    expect(() => nodeConfigFromObject({ out: "o", timeouts: { totalMs: 0 } }, "node.yaml")).toThrow(/node\.yaml: timeouts\.totalMs: /);
  });

  it("defaults fill what a file leaves out; a file node keeps running unless told", () => {
    const c = nodeConfigFromObject({ out: "o", delayMs: 250 }, "node.yaml");
    expect(c).toMatchObject({ out: "o", delayMs: 250, hostConcurrency: 1, scope: "domains", exitWhenDone: false });
    expect(c.timeouts.totalMs).toBe(60_000);
  });

  it("a cluster file's mistakes are named with their path", () => {
    expect(() => clusterFromObject({ nodes: [{ name: "a" }, { name: "b", config: { delay: 3 } }] }, "c.yaml")).toThrow(/c\.yaml: unknown key "nodes\[1\]\.config\.delay"/);
    expect(() => clusterFromObject({ nodes: [{ name: "a", statusPort: 70000 }] }, "c.yaml")).toThrow(/c\.yaml: nodes\[0\]\.statusPort: /);
    expect(() => clusterFromObject({ nodes: [{ name: "a" }], defaultz: {} }, "c.yaml")).toThrow(/unknown key "defaultz"/);
  });

  it("a flag value the schema refuses names the flag, not the key", () => {
    expect(() => parseCrawlFlags(["--out", "o", "--scope", "world"])).toThrow(/--scope: /);
    expect(() => parseCrawlFlags(["--out", "o", "--warc-gzip-level", "12"])).toThrow(/--warc-gzip-level: /);
    expect(() => parseCrawlFlags(["--out", "o", "--delay", "soon"])).toThrow(/--delay: expected a non-negative integer/);
  });
});

describe("JSON Schemas for editors", () => {
  const ajv = new Ajv({ strict: false, allErrors: true });
  const schema = (name: string) => JSON.parse(readFileSync(join(ROOT, "packages/shardcrawl/schema", name), "utf8")) as object;
  const cluster = ajv.compile(schema("cluster.schema.json"));
  const node = ajv.compile(schema("node.schema.json"));
  const shipped = readdirSync(join(ROOT, "deploy")).filter((f) => /^cluster\..*\.ya?ml$/.test(f));

  it("ships cluster files to check", () => expect(shipped.length).toBeGreaterThan(0));
  for (const f of shipped) {
    it(`deploy/${f} is valid`, () => {
      const ok = cluster(parseYaml(readFileSync(join(ROOT, "deploy", f), "utf8")));
      expect(ok, JSON.stringify(cluster.errors)).toBe(true);
    });
  }

  it("refuses a wrong key and a wrong type, and accepts a node file", () => {
    expect(cluster({ nodes: [{ name: "a", config: { delay: 1 } }] })).toBe(false);
    expect(node({ out: "o", delayMs: "x" })).toBe(false);
    expect(node({ out: "o", timeouts: { bogus: 1 } })).toBe(false);
    expect(node({ out: "o", delayMs: 500, politenessKey: "host", urlFilters: ["max-path-depth=8"], recrawl: { budget: 2, unit: "fetches/s" } })).toBe(true);
  });
});
