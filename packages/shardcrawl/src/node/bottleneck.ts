// Which stage limits the node's throughput right now, from what the node already measures: time
// fetchers spent blocked by reason, how full the parse queue is, fetch slots in use, how far
// fetchers lag the host schedule, Redis memory against its budget and hosts pushing back.
// Pure, so the rules are unit-tested; the supervisor feeds it two samples ~10 s apart.

export type Stage = "idle" | "draining" | "upstream" | "parse" | "memory" | "fetch" | "politeness";

export interface BottleneckInput {
  /** Time between the two samples the deltas cover. */
  windowMs: number;
  fetchers: number;
  /** Requests fetchers may have in flight (fetchers x fetcher concurrency). */
  fetchCapacity: number;
  leases: number;
  queued: number;
  hostsQueued: number;
  dueHosts: number;
  parseQueue: number;
  parseQueueMax: number;
  /** Fetcher time blocked over the window, by reason (parse-full, global-full, upstream, quota). */
  blockedMs: Record<string, number>;
  /** How long the most overdue host has been due. */
  readyLagMs: number;
  redisUsedBytes: number;
  redisBudgetBytes: number;
  hostsUnderBackoff: number;
  /** Set when our upstream quota stopped fetching. */
  stopped?: string;
}

export interface Bottleneck {
  stage: Stage;
  /** One line an operator can act on. */
  reason: string;
  /** Share of fetcher time blocked over the window, by reason (0..1). */
  blockedShare: Record<string, number>;
  parseFill: number;
  fetchFill: number;
}

/** A stage is the bottleneck when fetchers wait on it this share of their time. */
const BLOCKED = 0.25;
const pct = (x: number) => `${Math.round(x * 100)}%`;

export function findBottleneck(i: BottleneckInput): Bottleneck {
  const fetcherMs = Math.max(1, i.windowMs * Math.max(1, i.fetchers));
  const blockedShare: Record<string, number> = {};
  for (const [k, v] of Object.entries(i.blockedMs)) if (v > 0) blockedShare[k] = Math.min(1, v / fetcherMs);
  const parseFill = i.parseQueueMax > 0 ? i.parseQueue / i.parseQueueMax : 0;
  const fetchFill = i.fetchCapacity > 0 ? i.leases / i.fetchCapacity : 0;
  const memFill = i.redisBudgetBytes > 0 ? i.redisUsedBytes / i.redisBudgetBytes : 0;
  const share = (k: string) => blockedShare[k] ?? 0;
  const out = (stage: Stage, reason: string): Bottleneck => ({ stage, reason, blockedShare, parseFill, fetchFill });

  if (i.stopped) return out("upstream", `fetching stopped: ${i.stopped}`);
  if (share("quota") >= BLOCKED) return out("upstream", `upstream quota exhausted (fetchers blocked ${pct(share("quota"))} of the time)`);
  if (share("parse-full") >= BLOCKED || parseFill >= 0.9) {
    return out("parse", `parsers behind: parse queue ${pct(parseFill)} full, fetchers blocked on it ${pct(share("parse-full"))} of the time`);
  }
  if (share("upstream") >= BLOCKED) return out("upstream", `paused by our upstream plan's rate limit ${pct(share("upstream"))} of the time`);
  if (memFill >= 0.85) return out("memory", `Redis at ${pct(memFill)} of its memory budget: the frontier is capped`);
  if (share("global-full") >= BLOCKED) return out("fetch", `global concurrency cap reached (fetchers blocked ${pct(share("global-full"))} of the time)`);
  if (fetchFill >= 0.9) return out("fetch", `fetchers at their concurrency (${i.leases} of ${i.fetchCapacity} in flight): slow responses or too few fetchers`);
  if (i.readyLagMs >= 2000) return out("fetch", `due hosts wait ${(i.readyLagMs / 1000).toFixed(1)} s for a fetcher: fetchers cannot keep up with the schedule`);
  if (i.queued === 0) {
    return i.leases === 0 && i.parseQueue === 0 ? out("idle", "nothing queued, in flight or waiting to be parsed") : out("draining", `frontier empty: ${i.leases} fetches and ${i.parseQueue} pages to parse left`);
  }
  const backoff = i.hostsUnderBackoff > 0 ? `; ${i.hostsUnderBackoff} hosts pushing back (adaptive limits lowered)` : "";
  return out("politeness", `per-host politeness: ${i.dueHosts} of ${i.hostsQueued} queued hosts fetchable now${backoff}`);
}
