// CPU and resident memory of the node's processes (supervisor, children, its own Redis), read from
// /proc. Hand-written because Prometheus wants the raw cumulative CPU counter per pid, and the
// libraries (pidusage, prom-client's process metrics) report either a percentage over their own
// sampling window or only the calling process. Linux only; elsewhere a process is simply skipped.
import { readFileSync } from "node:fs";
import type { ProcessSample } from "./metrics.js";

/** USER_HZ: the kernel exports CPU times in these ticks; it is 100 on every Linux ABI. */
const TICKS_PER_SECOND = 100;

/** One process's CPU seconds and RSS bytes, or null when it is gone (or /proc is not there). */
export function readProcessSample(process: string, pid: number): ProcessSample | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // Fields after the command name, which is in parentheses and may itself hold spaces or ")".
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    // utime and stime are fields 14 and 15 of the whole line, so 11 and 12 after "pid (comm) ".
    const cpuSeconds = (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND;
    const rss = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    if (!Number.isFinite(cpuSeconds)) return null;
    return { process, pid, cpuSeconds, rssBytes: rss ? Number(rss[1]) * 1024 : 0 };
  } catch {
    return null;
  }
}

export function readProcessSamples(procs: Array<{ process: string; pid?: number }>): ProcessSample[] {
  const out: ProcessSample[] = [];
  for (const p of procs) {
    const s = p.pid ? readProcessSample(p.process, p.pid) : null;
    if (s) out.push(s);
  }
  return out;
}
