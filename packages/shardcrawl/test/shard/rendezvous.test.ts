// Rendezvous hashing: pinned assignments (stable across processes, machines and versions), the
// share a new node takes, and weights.
import { describe, expect, it } from "vitest";
import { ownerIndex, unitHash, validateShardNodes, type ShardNode } from "../../src/shard/rendezvous.js";
import { ShardRouter, equalNodes, parseShardFlag } from "../../src/shard/shard-spec.js";
import { shardKeyOf } from "../../src/shard/shard-key.js";

const owner = (nodes: ShardNode[], key: string) => nodes[ownerIndex(nodes, key)]!.name;

describe("rendezvous hashing is pinned", () => {
  it("hashes name and key with SHA-256 to the same numbers everywhere", () => {
    // Changing these numbers moves domains between the nodes of every running cluster.
    expect(unitHash("node0", "example.com")).toBe(0.8638367297916749);
    expect(unitHash("node1", "example.com")).toBe(0.2390226985399167);
  });

  it("assigns known keys to known nodes (3 equal nodes)", () => {
    const n3 = equalNodes(3);
    const pinned: Array<[string, string]> = [
      ["example.com", "node0"], ["example.co.uk", "node1"], ["wikipedia.org", "node2"], ["github.io", "node2"],
      ["alice.github.io", "node2"], ["xn--bcher-kva.de", "node1"], ["a.com", "node0"], ["b.com", "node0"],
      ["c.com", "node2"], ["news.ycombinator.com", "node2"], ["localhost", "node0"], ["127.0.0.1", "node0"],
      ["site-00001.test", "node0"], ["site-00002.test", "node1"],
    ];
    for (const [key, node] of pinned) expect(owner(n3, key), key).toBe(node);
  });

  it("assigns known keys to known nodes (named, weighted nodes)", () => {
    const w = [{ name: "alpha", weight: 1 }, { name: "beta", weight: 2 }, { name: "gamma", weight: 0.5 }];
    const pinned: Array<[string, string]> = [
      ["example.com", "alpha"], ["wikipedia.org", "alpha"], ["a.com", "alpha"], ["b.com", "alpha"],
      ["c.com", "beta"], ["d.org", "beta"], ["e.net", "beta"], ["f.io", "gamma"],
    ];
    for (const [key, node] of pinned) expect(owner(w, key), key).toBe(node);
  });

  it("does not depend on the order nodes are listed in", () => {
    const a = equalNodes(5);
    const b = [...a].reverse();
    for (let i = 0; i < 2000; i++) expect(owner(b, `d${i}.com`)).toBe(owner(a, `d${i}.com`));
  });
});

describe("rebalancing", () => {
  const domains = Array.from({ length: 100_000 }, (_, i) => `site-${i.toString(36)}.example${i % 7}.com`);

  it("adding a 4th node to 3 moves 20-30% of 100,000 domains, all of them to the new node", () => {
    const n3 = equalNodes(3);
    const n4 = equalNodes(4);
    let moved = 0;
    for (const d of domains) {
      const before = owner(n3, d);
      const after = owner(n4, d);
      if (before !== after) {
        moved++;
        expect(after).toBe("node3");
      }
    }
    const share = moved / domains.length;
    expect(share).toBeGreaterThanOrEqual(0.2);
    expect(share).toBeLessThanOrEqual(0.3);
  });

  it("removing a node moves only that node's domains", () => {
    const n4 = equalNodes(4);
    const n3 = n4.filter((n) => n.name !== "node1");
    for (const d of domains.slice(0, 20_000)) {
      const before = owner(n4, d);
      if (before !== "node1") expect(owner(n3, d)).toBe(before);
    }
  });

  it("gives each node its weight's share", () => {
    const w = [{ name: "small", weight: 1 }, { name: "big", weight: 3 }];
    let big = 0;
    for (const d of domains.slice(0, 40_000)) if (owner(w, d) === "big") big++;
    expect(big / 40_000).toBeGreaterThan(0.73);
    expect(big / 40_000).toBeLessThan(0.77);
  });
});

describe("shard keys and specs", () => {
  it("keys by registrable domain (all hosts of a site on one node) or by host", () => {
    expect(shardKeyOf("www.example.co.uk", "domain")).toBe("example.co.uk");
    expect(shardKeyOf("www.example.co.uk", "host")).toBe("www.example.co.uk");
    const r = new ShardRouter({ self: "node0", nodes: equalNodes(7), key: "domain" });
    const o = r.ownerOfHost("example.com");
    for (const h of ["www.example.com", "blog.example.com", "a.b.example.com"]) expect(r.ownerOfHost(h)).toBe(o);
  });

  it("parses --shard i/n with clear errors", () => {
    expect(parseShardFlag("2/3")).toEqual({ self: "node2", nodes: equalNodes(3), key: "domain" });
    expect(() => parseShardFlag("3/3")).toThrow(/index must be below the count/);
    expect(() => parseShardFlag("1-3")).toThrow(/expected <index>\/<count>/);
    expect(() => parseShardFlag("0/0")).toThrow(/node count/);
  });

  it("validates node lists", () => {
    expect(validateShardNodes([{ name: "a", weight: 1 }, { name: "a", weight: 0 }])).toEqual([
      'nodes[1].name: duplicate node name "a"',
      "nodes[1].weight: expected a number > 0, got 0",
    ]);
  });
});
