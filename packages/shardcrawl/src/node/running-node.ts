// Whether a node runs on an output folder: the supervisor writes its pid to <out>/status.json at
// start; commands that must not run beside a live node (ingest, rehome) ask here.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { processAlive } from "../store/process-alive.js";

/** The pid of the node running on `out`, or null when none runs (no status file, or its process is gone). */
export function runningNodePid(out: string): number | null {
  const p = join(out, "status.json");
  if (!existsSync(p)) return null;
  let pid: number | undefined;
  try {
    pid = (JSON.parse(readFileSync(p, "utf8")) as { pid?: number }).pid;
  } catch {
    return null; // a status file cut by a crash names no live node
  }
  return typeof pid === "number" && pid > 0 && processAlive(pid) ? pid : null;
}
