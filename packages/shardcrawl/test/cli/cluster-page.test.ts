// The cluster page's data: totals over the nodes that answered, and /cluster served by a real
// ClusterWatch polling real status servers (one up, one down).
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { clusterSample, serveClusterPage, type ClusterView } from "../../src/cli/cluster-page.js";
import { loadClusterFile } from "../../src/cli/cluster-file.js";
import { startStatusServer } from "../../src/node/status-server.js";
import { defaultConfig } from "../../src/node/config.js";

describe("cluster page", () => {
  it("sums the nodes that answered; a down node adds nothing", () => {
    const up = (fetched: number) => ({ node: "x", up: true, status: { stats: { fetched, parsed: fetched - 1, failed: 1, queued: 10, leases: 2, parseQueue: 3, parseInFlight: 1 } } });
    const s = clusterSample([up(100), up(50), { node: "z", up: false, error: "timeout" }], 42);
    expect(s).toEqual({ t: 42, fetched: 150, parsed: 148, failed: 2, queued: 20, leases: 4, parseQueue: 8, blockedMs: {} });
  });

  it("serves the page and every node's status with the cluster's history", async () => {
    const node = await startStatusServer(defaultConfig(), () => ({ node: "a", stats: { fetched: 5, queued: 1 }, bottleneck: { stage: "parse", reason: "r" } }));
    const dir = mkdtempSync(join(tmpdir(), "sc-cpage-"));
    const file = join(dir, "c.yaml");
    writeFileSync(file, JSON.stringify({ name: "t", nodes: [{ name: "a", statusPort: node.port }, { name: "b", statusPort: 1 }] }));
    const page = await serveClusterPage(loadClusterFile(file), { bind: "127.0.0.1", port: 0, timeoutMs: 2000, pollMs: 100 });
    try {
      expect(await (await fetch(`http://127.0.0.1:${page.port}/`)).text()).toMatch(/<title>shardcrawl cluster<\/title>/);
      // Wait for a second poll (timers fire late on a busy machine).
      let view: ClusterView;
      const deadline = Date.now() + 20_000;
      do {
        await new Promise((r) => setTimeout(r, 100));
        view = (await (await fetch(`http://127.0.0.1:${page.port}/cluster`)).json()) as ClusterView;
      } while (view.history.length < 2 && Date.now() < deadline);
      expect(view.name).toBe("t");
      expect(view.nodes.map((n) => [n.node, n.up])).toEqual([["a", true], ["b", false]]);
      expect(view.nodes[0]!.status).toMatchObject({ bottleneck: { stage: "parse" } });
      expect(view.history.length).toBeGreaterThan(1);
      expect(view.history.at(-1)).toMatchObject({ fetched: 5, queued: 1 });
    } finally {
      await page.close();
      await node.close();
    }
  });
});
