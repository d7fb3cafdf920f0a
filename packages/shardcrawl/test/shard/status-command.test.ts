// `shardcrawl status --cluster`: real status servers answer with node snapshots; a node that does
// not answer is shown as down; the table has per-node lines and totals.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startStatusServer } from "../../src/node/status-server.js";
import { defaultConfig } from "../../src/node/config.js";
import { loadClusterFile } from "../../src/cli/cluster-file.js";
import { fetchNodeStatus, formatStatusTable } from "../../src/cli/status-command.js";

describe("status --cluster", () => {
  it("reads every node's /status, marks silent nodes down, and sums the cluster", async () => {
    const snap = (fetched: number) => () => ({
      node: "x", pagesPerSecond: fetched / 10, disk: { outputBytes: 2e9, freeBytes: 5e11 },
      stats: { fetched, errors: 2, queued: 100, hostsQueued: 7, counters: { outboxLinks: 40 } },
    });
    const a = await startStatusServer(defaultConfig(), snap(500));
    const b = await startStatusServer(defaultConfig(), snap(300));
    try {
      const dir = mkdtempSync(join(tmpdir(), "sc-status-"));
      const file = join(dir, "c.yaml");
      writeFileSync(file, JSON.stringify({ nodes: [{ name: "a", statusPort: a.port }, { name: "b", statusPort: b.port }, { name: "c", statusPort: 1 }] }));
      const cluster = loadClusterFile(file);
      const rows = await Promise.all(cluster.nodes.map((n) => fetchNodeStatus(n, 2000)));
      expect(rows[0]).toMatchObject({ node: "a", up: true, fetched: 500, pagesPerSecond: 50, queued: 100, hosts: 7, outbox: 40, outputBytes: 2e9 });
      expect(rows[1]).toMatchObject({ node: "b", up: true, fetched: 300 });
      expect(rows[2]).toMatchObject({ node: "c", up: false });
      const table = formatStatusTable(rows);
      expect(table).toMatch(/^node\s+state\s+pages\/s\s+fetched/);
      expect(table).toMatch(/\ntotal\s+2\/3 up\s+80\.0\s+800\s/);
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("sends the bearer token from SHARDCRAWL_STATUS_TOKEN to nodes that want one", async () => {
    const saved = process.env.SHARDCRAWL_STATUS_TOKEN;
    process.env.SHARDCRAWL_STATUS_TOKEN = "t0ken-t0ken-t0ken-t0ken";
    // "::ffff:127.0.0.1" is not in the loopback list, so the token applies; the socket stays on loopback.
    const a = await startStatusServer({ ...defaultConfig(), statusBind: "::ffff:127.0.0.1" }, () => ({ stats: { fetched: 7 } }));
    try {
      const dir = mkdtempSync(join(tmpdir(), "sc-status-"));
      const file = join(dir, "c.yaml");
      writeFileSync(file, JSON.stringify({ nodes: [{ name: "a", statusPort: a.port }] }));
      const [node] = loadClusterFile(file).nodes;
      expect(await fetchNodeStatus(node!, 2000)).toMatchObject({ up: true, fetched: 7 });
      delete process.env.SHARDCRAWL_STATUS_TOKEN;
      expect(await fetchNodeStatus(node!, 2000)).toMatchObject({ up: false, error: "HTTP 401" });
    } finally {
      if (saved === undefined) delete process.env.SHARDCRAWL_STATUS_TOKEN;
      else process.env.SHARDCRAWL_STATUS_TOKEN = saved;
      await a.close();
    }
  });
});
