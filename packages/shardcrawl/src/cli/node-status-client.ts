// Reads one node's /status over HTTP, bounded (timeout, size cap), with the bearer token when one
// is set: for the status table (status-command.ts) and the cluster page (cluster-page.ts).
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { request } from "undici";
import type { ClusterNode } from "./cluster-file.js";
import { readStatusToken } from "../node/status-token.js";

const MAX_STATUS_BYTES = 1024 * 1024;

export interface StatusBody {
  pagesPerSecond?: number;
  stats?: { fetched?: number; parsed?: number; failed?: number; errors?: number; queued?: number; hostsQueued?: number; leases?: number; parseQueue?: number; parseInFlight?: number; counters?: Record<string, number>; pressure?: { hosts?: Array<{ host: string; pressure: number }> } };
  disk?: { outputBytes?: number; freeBytes?: number | null };
}

function portOf(n: ClusterNode): number {
  if (n.statusPort > 0) return n.statusPort;
  const p = join(n.out, "status.json");
  return existsSync(p) ? Number((JSON.parse(readFileSync(p, "utf8")) as { statusPort?: number }).statusPort ?? 0) : 0;
}

/** A node's whole /status body (the cluster page shows more of it than the table), or why not. */
export async function fetchStatusBody(n: ClusterNode, timeoutMs: number): Promise<{ ok: true; body: StatusBody } | { ok: false; error: string }> {
  const port = portOf(n);
  if (!port) return { ok: false, error: "no status port (not running?)" };
  const host = n.host.includes(":") ? `[${n.host}]` : n.host;
  // Nodes bound off loopback want the token (node/status-server.ts); loopback ones ignore it.
  const token = readStatusToken();
  try {
    const res = await request(`http://${host}:${port}/status`, {
      headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs),
      ...(token ? { headers: { authorization: `Bearer ${token}` } } : {}),
    });
    let size = 0;
    const chunks: Buffer[] = [];
    for await (const c of res.body) {
      size += (c as Buffer).byteLength;
      if (size > MAX_STATUS_BYTES) throw new Error(`status body over ${MAX_STATUS_BYTES} bytes`);
      chunks.push(c as Buffer);
    }
    if (res.statusCode !== 200) return { ok: false, error: `HTTP ${res.statusCode}` };
    return { ok: true, body: JSON.parse(Buffer.concat(chunks).toString("utf8")) as StatusBody };
  } catch (e) {
    return { ok: false, error: (e as Error).message };
  }
}

