// Memory of a running node, read from /proc: the resident set size of every process in a
// process group (the crawl command starts its own group), sampled until stopped.
import { readdirSync, readFileSync } from "node:fs";

export interface RssPeak {
  /** Largest RSS seen of any one process of the group, by command name ("node", "redis-server"). */
  perProcess: Record<string, number>;
  /** Largest sum of the RSS of the group's node processes at one sample. */
  nodeTotal: number;
  samples: number;
}

/** RSS in bytes of one process from its VmRSS line, or null when it has none (a kernel thread). */
function vmRss(pid: number | string): number | null {
  const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) * 1024 : null;
}

/** RSS in bytes of one process (0 when /proc shows none). */
export function rssOf(pid: number): number {
  return vmRss(pid) ?? 0;
}

/** RSS in bytes of each live process whose process group is `pgid`. */
export function groupRss(pgid: number): Array<{ pid: number; comm: string; rss: number }> {
  const out: Array<{ pid: number; comm: string; rss: number }> = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const close = stat.lastIndexOf(")");
      const comm = stat.slice(stat.indexOf("(") + 1, close);
      // Fields after the command: state ppid pgrp ...
      const [state, , pgrp] = stat.slice(close + 2).split(" ");
      if (Number(pgrp) !== pgid || state === "Z") continue;
      const rss = vmRss(name);
      if (rss !== null) out.push({ pid: Number(name), comm, rss });
    } catch {
      // the process ended between readdir and read
    }
  }
  return out;
}

/** Samples the group every intervalMs; stop() returns the peaks. */
export function watchGroupRss(pgid: number, intervalMs = 200): { stop(): RssPeak } {
  const peak: RssPeak = { perProcess: {}, nodeTotal: 0, samples: 0 };
  const sample = () => {
    let total = 0;
    for (const p of groupRss(pgid)) {
      peak.perProcess[p.comm] = Math.max(peak.perProcess[p.comm] ?? 0, p.rss);
      if (p.comm === "node" || p.comm.startsWith("node")) total += p.rss;
    }
    peak.nodeTotal = Math.max(peak.nodeTotal, total);
    peak.samples++;
  };
  sample();
  const timer = setInterval(sample, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      sample();
      return peak;
    },
  };
}
