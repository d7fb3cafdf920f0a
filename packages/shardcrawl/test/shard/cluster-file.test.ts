// The cluster file: a valid file resolves to per-node configs with the shard section; invalid
// files are refused with errors that name the key and what was expected.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it, vi } from "vitest";
import { clusterFromObject, loadClusterFile } from "../../src/cli/cluster-file.js";
import { runClusterPlan } from "../../src/cli/cluster-command.js";
import { loadNodeConfigFile } from "../../src/cli/config-file.js";
import { parseCrawlFlags } from "../../src/cli/flags.js";

const F = "c.yaml";

function errorsOf(obj: unknown): string {
  try {
    clusterFromObject(obj, F);
  } catch (e) {
    return (e as Error).message;
  }
  throw new Error("expected the cluster file to be refused");
}

describe("cluster file", () => {
  it("resolves nodes, weights, defaults, overrides and paths relative to the file", () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-cluster-file-"));
    const file = join(dir, "cluster.yaml");
    writeFileSync(file, [
      "name: t", "shardKey: host", "seeds: seeds.txt", "outRoot: /data",
      "defaults: { delayMs: 2000, fetchers: 3, exitWhenDone: true }",
      "nodes:",
      "  - { name: a, statusPort: 9101 }",
      "  - { name: b, weight: 2, host: 10.0.0.2, statusPort: 9101, config: { fetchers: 5 } }",
    ].join("\n"));
    const c = loadClusterFile(file);
    expect(c.shardKey).toBe("host");
    expect(c.nodes.map((n) => [n.name, n.weight, n.host, n.out])).toEqual([["a", 1, "127.0.0.1", "/data/a"], ["b", 2, "10.0.0.2", "/data/b"]]);
    const b = c.nodes[1]!.config;
    expect(b).toMatchObject({ delayMs: 2000, fetchers: 5, exitWhenDone: true, nodeName: "b", statusPort: 9101, seeds: join(dir, "seeds.txt") });
    expect(b.shard).toEqual({ self: "b", key: "host", nodes: [{ name: "a", weight: 1 }, { name: "b", weight: 2 }] });
  });

  it("cluster plan --write writes node configs that `node --config` reads back unchanged", () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-cluster-write-"));
    const file = join(dir, "cluster.yaml");
    writeFileSync(file, [
      "name: t", `outRoot: ${join(dir, "out")}`,
      "defaults: { targetPagesPerSec: 50, acceptedWaitMs: 2000, exitWhenDone: true }",
      "nodes:", "  - { name: a, statusPort: 9101 }", "  - { name: b, statusPort: 9102 }",
    ].join("\n"));
    const quiet = vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    try {
      expect(runClusterPlan({ cluster: file, write: true })).toBe(0);
    } finally {
      quiet.mockRestore();
    }
    for (const n of loadClusterFile(file).nodes) {
      const back = loadNodeConfigFile(join(n.out, "node.json"));
      expect(back.nodeName).toBe(n.name);
      expect(back.parseQueueMax).toBe(n.config.parseQueueMax);
      expect(back.shard).toEqual(n.config.shard);
    }
  });

  it("names the key and what was expected for each mistake", () => {
    expect(errorsOf([])).toMatch(/c\.yaml: expected a mapping at the top level/);
    expect(errorsOf({ nodes: [] })).toMatch(/c\.yaml: nodes: expected a non-empty list of nodes/);
    expect(errorsOf({ node: [{ name: "a" }], nodes: [{ name: "a" }] })).toMatch(/c\.yaml: unknown key "node"/);
    expect(errorsOf({ nodes: [{ name: "a" }, { name: "a" }] })).toMatch(/nodes\[1\]\.name: duplicate node name "a"/);
    expect(errorsOf({ nodes: [{ name: "a", weight: -1 }] })).toMatch(/nodes\[0\]\.weight: expected > 0, got -1/);
    expect(errorsOf({ nodes: [{ name: "a b" }] })).toMatch(/nodes\[0\]\.name: expected 1-63 letters/);
    expect(errorsOf({ shardKey: "url", nodes: [{ name: "a" }] })).toMatch(/shardKey: expected domain or host, got "url"/);
    expect(errorsOf({ nodes: [{ name: "a", statusPort: 70000 }] })).toMatch(/nodes\[0\]\.statusPort: expected <= 65535, got 70000/);
    expect(errorsOf({ nodes: [{ name: "a", statusPort: 9000 }, { name: "b", statusPort: 9000 }] })).toMatch(/nodes\[1\]\.statusPort: 127\.0\.0\.1:9000 is already used by a/);
    expect(errorsOf({ nodes: [{ name: "a", colour: 1 }] })).toMatch(/unknown key "nodes\[0\]\.colour"/);
    expect(errorsOf({ defaults: { fetcherz: 2 }, nodes: [{ name: "a" }] })).toMatch(/c\.yaml: unknown key "defaults\.fetcherz"/);
    expect(errorsOf({ nodes: [{ name: "a", config: { delayMs: "slow" } }] })).toMatch(/c\.yaml: nodes\[0\]\.config\.delayMs: expected a number, got "slow"/);
  });

  it("refuses a file that is not YAML, saying so", () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-cluster-bad-"));
    const file = join(dir, "bad.yaml");
    writeFileSync(file, "nodes: [a, b\n");
    expect(() => loadClusterFile(file)).toThrow(/bad\.yaml: not valid YAML/);
    expect(() => loadClusterFile(join(dir, "missing.yaml"))).toThrow(/cannot read cluster file/);
  });
});

describe("the shipped cluster files", () => {
  it("load: the fleet inventory (12 i7i nodes) and the docker-compose cluster", () => {
    const root = join(import.meta.dirname, "../../../..");
    const fleet = loadClusterFile(join(root, "deploy/cluster.fleet.yaml"));
    expect(fleet.nodes.map((n) => n.name)).toEqual(Array.from({ length: 12 }, (_, i) => `n${String(i + 1).padStart(2, "0")}`));
    expect(fleet.nodes[0]!.config).toMatchObject({ fetchers: 9, parsers: 6, delayMs: 70_000, redisMaxMemoryBytes: 80 * 2 ** 30, exitWhenDone: false, derivatives: ["wet", "wat", "index"], dnsServers: ["127.0.0.1"] });
    expect(loadClusterFile(join(root, "deploy/cluster.compose.yaml")).nodes.length).toBe(3);
  });
});

describe("crawl --shard flags", () => {
  it("set the shard membership and name the node", () => {
    const c = parseCrawlFlags(["--out", "o", "--shard", "1/3", "--shard-key=host", "--delay", "5"]);
    expect(c.delayMs).toBe(5);
    expect(c.shard).toMatchObject({ self: "node1", key: "host" });
    expect(c.nodeName).toBe("node1");
    expect(() => parseCrawlFlags(["--out", "o", "--shard-key", "host"])).toThrow(/--shard-key needs --shard/);
    expect(() => parseCrawlFlags(["--out", "o", "--shard", "4/3"])).toThrow(/index must be below/);
  });
});
