// Chaos for one node, repeatable from a seed: during a crawl of simweb, SIGKILL random fetchers,
// parsers, the supervisor, Redis, or the whole node, many times; restart what the node does not
// restart itself (the supervisor restarts children and Redis; a dead supervisor is restarted by
// re-running the same command, as an operator or systemd would). The crawl must then finish.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { startCrawl, type CrawlRun } from "./crawl.js";
import type { ChildProcess } from "node:child_process";
import { prng } from "../../packages/shardcrawl/test/prng.js";
import { setTimeout as sleep } from "node:timers/promises";

export type KillKind = "fetcher" | "parser" | "supervisor" | "redis" | "node";
export const KILL_KINDS: readonly KillKind[] = ["fetcher", "parser", "supervisor", "redis", "node"];

export interface ChaosOptions {
  seed: number;
  kills: number;
  /** Crawl flags (seeds, out, politeness, simweb mapping...). */
  args: string[];
  out: string;
  /** Pause between kills, ms (drawn uniformly from this range). */
  gapMs: [number, number];
  /** Pages the node must fetch after the previous kill before the next one. */
  minProgress: number;
  log?: (m: string) => void;
}

export interface ChaosReport {
  kills: Record<KillKind, number>;
  /** Kills that found nothing to kill (e.g. a child between restarts), not counted in `kills`. */
  missed: number;
  starts: number;
  /** The node's fetched counter at each kill (from its status endpoint; -1 when it did not answer). */
  fetchedAtKills: number[];
  final: CrawlRun;
  stderr: string[];
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // A zombie (dead, unreaped because its parent was killed too) counts as dead.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

function kill9(pid: number | undefined): boolean {
  if (!pid) return false;
  try {
    process.kill(pid, "SIGKILL");
    return true;
  } catch {
    return false;
  }
}

export interface NodeStatus {
  children: Array<{ role: string; index: number; pid?: number }>;
  stats: { fetched: number; queued: number; counters: Record<string, number> };
}

/** The node's /status (port from out/status.json), or null while it does not answer. */
export async function statusOf(out: string): Promise<NodeStatus | null> {
  try {
    const { statusPort } = JSON.parse(readFileSync(join(out, "status.json"), "utf8")) as { statusPort: number };
    const res = await fetch(`http://127.0.0.1:${statusPort}/status`, { signal: AbortSignal.timeout(2000) });
    return (await res.json()) as NodeStatus;
  } catch {
    return null;
  }
}

/**
 * Polls the node's /status every 100 ms until it has fetched at least `pages` (at most 60 s);
 * returns the last status (null if the node never answered).
 */
export async function waitForFetched(out: string, pages: number): Promise<NodeStatus | null> {
  let status = await statusOf(out);
  for (let i = 0; i < 600 && (status === null || status.stats.fetched < pages); i++) {
    await new Promise((r) => setTimeout(r, 100));
    status = await statusOf(out);
  }
  return status;
}

/** URL (with password) of the Redis a node started under out/redis. */
export function nodeRedisUrl(out: string): string {
  const c = JSON.parse(readFileSync(join(out, "redis", "connection.json"), "utf8")) as { port: number; password: string };
  return `redis://:${c.password}@127.0.0.1:${c.port}`;
}

/** Pid of the Redis a node started under out/redis (from its connection.json), when it has one. */
export function redisPid(out: string): number | undefined {
  const p = join(out, "redis", "connection.json");
  return existsSync(p) ? (JSON.parse(readFileSync(p, "utf8")) as { pid: number }).pid : undefined;
}

export async function runChaos(opts: ChaosOptions): Promise<ChaosReport> {
  const rand = prng(opts.seed);
  const log = opts.log ?? (() => undefined);
  const kills: Record<KillKind, number> = { fetcher: 0, parser: 0, supervisor: 0, redis: 0, node: 0 };
  const stderr: string[] = [];
  let missed = 0;
  let starts = 0;
  const fetchedAtKills: number[] = [];
  let current: { proc: ChildProcess; done: Promise<CrawlRun> } | null = null;
  let finished: CrawlRun | null = null;

  const start = () => {
    starts++;
    current = startCrawl(opts.args);
    const mine = current;
    void mine.done.then((r) => {
      stderr.push(r.stderr);
      if (current === mine && r.signal === null) finished = r;
    });
  };

  start();
  let done = 0;
  let lastFetched = 0;
  while (done < opts.kills && !finished) {
    // Kill a crawling node, not one still starting: wait until it answers and has made progress.
    let status = await statusOf(opts.out);
    const waitUntil = Date.now() + 30_000;
    while (!finished && Date.now() < waitUntil && (!status || status.stats.fetched < lastFetched + opts.minProgress)) {
      await sleep(100);
      status = await statusOf(opts.out);
    }
    await sleep(opts.gapMs[0] + rand() * (opts.gapMs[1] - opts.gapMs[0]));
    if (finished) break;
    lastFetched = status?.stats.fetched ?? lastFetched;
    const kind = KILL_KINDS[Math.floor(rand() * KILL_KINDS.length)]!;
    const run = current!;
    let hit = false;
    if (kind === "fetcher" || kind === "parser") {
      const pids = (status?.children ?? []).filter((c) => c.role === kind && c.pid).map((c) => c.pid!);
      hit = pids.length > 0 && kill9(pids[Math.floor(rand() * pids.length)]);
    } else if (kind === "redis") {
      hit = kill9(redisPid(opts.out));
    } else if (kind === "supervisor") {
      hit = kill9(run.proc.pid);
      if (hit) {
        await run.done;
        start();
      }
    } else {
      const r = redisPid(opts.out);
      try {
        process.kill(-run.proc.pid!, "SIGKILL");
        hit = true;
      } catch {
        hit = false;
      }
      kill9(r);
      if (hit) {
        await run.done;
        for (let i = 0; i < 50 && r && alive(r); i++) await sleep(100);
        start();
      }
    }
    if (hit) {
      kills[kind]++;
      done++;
      fetchedAtKills.push(status?.stats.fetched ?? -1);
      log(`kill ${done}/${opts.kills}: ${kind} (fetched so far ${status?.stats.fetched ?? "?"})`);
    } else missed++;
  }
  // Let the last run finish the crawl; if it died of a kill at the very end, run it again.
  for (let i = 0; i < 5 && !finished; i++) {
    const r: CrawlRun = await current!.done;
    if (r.signal === null) finished = r;
    else start();
  }
  return { kills, missed, starts, fetchedAtKills, final: finished!, stderr };
}
