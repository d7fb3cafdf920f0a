// `shardcrawl status --cluster <file>`: asks every node's /status endpoint (timeout, size cap)
// and prints one line per node and the totals; a node that does not answer is shown as down.
import { loadClusterFile, type ClusterNode, type ClusterSpec } from "./cluster-file.js";
import { UsageError } from "./flags.js";
import { serveClusterPage } from "./cluster-page.js";
import { fetchStatusBody } from "./node-status-client.js";

export interface NodeStatusRow {
  node: string;
  up: boolean;
  error?: string;
  pagesPerSecond: number;
  fetched: number;
  errors: number;
  queued: number;
  hosts: number;
  outbox: number;
  outputBytes: number;
  freeBytes: number | null;
}

export async function fetchNodeStatus(n: ClusterNode, timeoutMs: number): Promise<NodeStatusRow> {
  const down = (error: string): NodeStatusRow => ({ node: n.name, up: false, error, pagesPerSecond: 0, fetched: 0, errors: 0, queued: 0, hosts: 0, outbox: 0, outputBytes: 0, freeBytes: null });
  const r = await fetchStatusBody(n, timeoutMs);
  if (!r.ok) return down(r.error);
  const b = r.body;
  const s = b.stats ?? {};
  return {
    node: n.name, up: true, pagesPerSecond: b.pagesPerSecond ?? 0, fetched: s.fetched ?? 0, errors: s.errors ?? 0,
    queued: s.queued ?? 0, hosts: s.hostsQueued ?? 0, outbox: s.counters?.outboxLinks ?? 0,
    outputBytes: b.disk?.outputBytes ?? 0, freeBytes: b.disk?.freeBytes ?? null,
  };
}

function gb(n: number | null): string {
  return n === null ? "-" : `${(n / 1e9).toFixed(2)} GB`;
}

export function formatStatusTable(rows: NodeStatusRow[]): string {
  const head = ["node", "state", "pages/s", "fetched", "err%", "queued", "hosts", "outbox", "output", "free"];
  const line = (r: NodeStatusRow) => [
    r.node, r.up ? "up" : `down (${r.error ?? "?"})`, r.pagesPerSecond.toFixed(1), String(r.fetched),
    r.fetched ? ((100 * r.errors) / r.fetched).toFixed(1) : "0.0", String(r.queued), String(r.hosts), String(r.outbox), gb(r.outputBytes), gb(r.freeBytes),
  ];
  const sum = (k: keyof NodeStatusRow) => rows.reduce((a, r) => a + Number(r[k] ?? 0), 0);
  const total: NodeStatusRow = { node: "total", up: rows.every((r) => r.up), pagesPerSecond: sum("pagesPerSecond"), fetched: sum("fetched"), errors: sum("errors"), queued: sum("queued"), hosts: sum("hosts"), outbox: sum("outbox"), outputBytes: sum("outputBytes"), freeBytes: null };
  const table = [head, ...rows.map(line), line(total)];
  if (!total.up) table[table.length - 1]![1] = `${rows.filter((r) => r.up).length}/${rows.length} up`;
  const widths = head.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  return table.map((r) => r.map((c, i) => c.padEnd(widths[i]!)).join("  ").trimEnd()).join("\n") + "\n";
}

export async function runStatusCommand(v: { cluster?: string; json?: boolean; timeout?: string; serve?: boolean; port?: string; bind?: string; poll?: string }): Promise<number> {
  if (!v.cluster) throw new UsageError("status: --cluster <file> is required");
  const timeoutMs = v.timeout === undefined ? 3000 : Number(v.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new UsageError(`--timeout: expected milliseconds > 0, got ${JSON.stringify(v.timeout)}`);
  const cluster = loadClusterFile(v.cluster);
  if (v.serve) return serveUntilSignal(cluster, { bind: v.bind ?? "127.0.0.1", port: intFlag("port", v.port, 0, 0, 65535), timeoutMs, pollMs: intFlag("poll", v.poll, 2000, 100, 3_600_000) });
  const rows = await Promise.all(cluster.nodes.map((n) => fetchNodeStatus(n, timeoutMs)));
  process.stdout.write(v.json ? `${JSON.stringify(rows)}\n` : formatStatusTable(rows));
  return rows.every((r) => r.up) ? 0 : 1;
}

function intFlag(name: string, raw: string | undefined, dflt: number, min: number, max: number): number {
  if (raw === undefined) return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new UsageError(`--${name}: expected an integer in ${min}..${max}, got ${JSON.stringify(raw)}`);
  return n;
}

async function serveUntilSignal(cluster: ClusterSpec, opts: { bind: string; port: number; timeoutMs: number; pollMs: number }): Promise<number> {
  const server = await serveClusterPage(cluster, opts);
  const host = opts.bind.includes(":") ? `[${opts.bind}]` : opts.bind;
  process.stdout.write(`cluster page: http://${host}:${server.port}/\n`);
  await new Promise<void>((resolve) => {
    process.once("SIGINT", resolve);
    process.once("SIGTERM", resolve);
  });
  await server.close();
  return 0;
}
