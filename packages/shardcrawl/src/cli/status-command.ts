// `shardcrawl status --cluster <file>`: asks every node's /status endpoint (timeout, size cap)
// and prints one line per node and the totals; a node that does not answer is shown as down.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { request } from "undici";
import { loadClusterFile, type ClusterNode } from "./cluster-file.js";
import { UsageError } from "./flags.js";

export const STATUS_USAGE = `usage: shardcrawl status --cluster <file> [--json] [--timeout <ms>]

Shows each node's pages/s, pages fetched, frontier size, hosts, error rate and disk use from its
/status endpoint, and the cluster's totals. A node whose statusPort is 0 is found through
<out>/status.json (local nodes only).
`;

const MAX_STATUS_BYTES = 1024 * 1024;

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

interface StatusBody {
  pagesPerSecond?: number;
  stats?: { fetched?: number; errors?: number; queued?: number; hostsQueued?: number; counters?: Record<string, number> };
  disk?: { outputBytes?: number; freeBytes?: number | null };
}

function portOf(n: ClusterNode): number {
  if (n.statusPort > 0) return n.statusPort;
  const p = join(n.out, "status.json");
  return existsSync(p) ? Number((JSON.parse(readFileSync(p, "utf8")) as { statusPort?: number }).statusPort ?? 0) : 0;
}

export async function fetchNodeStatus(n: ClusterNode, timeoutMs: number): Promise<NodeStatusRow> {
  const down = (error: string): NodeStatusRow => ({ node: n.name, up: false, error, pagesPerSecond: 0, fetched: 0, errors: 0, queued: 0, hosts: 0, outbox: 0, outputBytes: 0, freeBytes: null });
  const port = portOf(n);
  if (!port) return down("no status port (not running?)");
  const host = n.host.includes(":") ? `[${n.host}]` : n.host;
  try {
    const res = await request(`http://${host}:${port}/status`, { headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) });
    let size = 0;
    const chunks: Buffer[] = [];
    for await (const c of res.body) {
      size += (c as Buffer).byteLength;
      if (size > MAX_STATUS_BYTES) throw new Error(`status body over ${MAX_STATUS_BYTES} bytes`);
      chunks.push(c as Buffer);
    }
    if (res.statusCode !== 200) return down(`HTTP ${res.statusCode}`);
    const b = JSON.parse(Buffer.concat(chunks).toString("utf8")) as StatusBody;
    const s = b.stats ?? {};
    return {
      node: n.name, up: true, pagesPerSecond: b.pagesPerSecond ?? 0, fetched: s.fetched ?? 0, errors: s.errors ?? 0,
      queued: s.queued ?? 0, hosts: s.hostsQueued ?? 0, outbox: s.counters?.outboxLinks ?? 0,
      outputBytes: b.disk?.outputBytes ?? 0, freeBytes: b.disk?.freeBytes ?? null,
    };
  } catch (e) {
    return down((e as Error).message);
  }
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

export async function runStatusCommand(argv: string[]): Promise<number> {
  let v;
  try {
    v = parseArgs({ args: argv, strict: true, options: { cluster: { type: "string" }, json: { type: "boolean" }, timeout: { type: "string" }, help: { type: "boolean", short: "h" } } }).values;
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  if (v.help) {
    process.stdout.write(STATUS_USAGE);
    return 0;
  }
  if (!v.cluster) throw new UsageError("status: --cluster <file> is required");
  const timeoutMs = v.timeout === undefined ? 3000 : Number(v.timeout);
  if (!Number.isInteger(timeoutMs) || timeoutMs < 1) throw new UsageError(`--timeout: expected milliseconds > 0, got ${JSON.stringify(v.timeout)}`);
  const cluster = loadClusterFile(v.cluster);
  const rows = await Promise.all(cluster.nodes.map((n) => fetchNodeStatus(n, timeoutMs)));
  process.stdout.write(v.json ? `${JSON.stringify(rows)}\n` : formatStatusTable(rows));
  return rows.every((r) => r.up) ? 0 : 1;
}
