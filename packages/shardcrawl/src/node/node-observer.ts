// What the supervisor knows about its own node beyond the Redis stats: recent history (charts and
// rates), CPU and memory per process, event-loop lag per process and the current bottleneck.
// The supervisor calls update() from its loop and spreads extras() into /status and /metrics.
import type { NodeConfig } from "./config.js";
import type { NodeStats } from "./open-frontier.js";
import { EventLoopBoard } from "./child-telemetry.js";
import { History, historySample, type HistorySample } from "./history.js";
import { readProcessSamples } from "./process-stats.js";
import { findBottleneck, type Bottleneck } from "./bottleneck.js";
import type { ProcessSample } from "./metrics.js";

const SAMPLE_MS = 2000;
/** 12 minutes of history at one sample every 2 s. */
const HISTORY_SAMPLES = 360;
/** The bottleneck is judged over about this window. */
const WINDOW_MS = 10_000;

export interface ObservedProcess {
  process: string;
  pid?: number;
}

export class NodeObserver {
  readonly eventLoop = new EventLoopBoard();
  private readonly history = new History(HISTORY_SAMPLES);
  private processes: ProcessSample[] = [];
  private bottleneck: Bottleneck | undefined;
  private lastAt = 0;

  constructor(
    private readonly config: NodeConfig,
    private readonly pids: () => ObservedProcess[],
  ) {}

  get fetchCapacity(): number {
    return this.config.fetchers * this.config.fetcherConcurrency;
  }

  update(stats: NodeStats, now = Date.now()): void {
    if (now - this.lastAt < SAMPLE_MS) return;
    this.lastAt = now;
    this.history.push(historySample(stats, now));
    this.processes = readProcessSamples(this.pids());
    this.bottleneck = this.judge(stats);
  }

  private judge(stats: NodeStats): Bottleneck {
    const last = this.history.latest()!;
    const first = this.history.before(WINDOW_MS) ?? last;
    const blockedMs: Record<string, number> = {};
    for (const [k, v] of Object.entries(last.blockedMs)) blockedMs[k] = v - (first.blockedMs[k] ?? 0);
    const p = stats.pressure;
    return findBottleneck({
      windowMs: Math.max(SAMPLE_MS, last.t - first.t), fetchers: this.config.fetchers, fetchCapacity: this.fetchCapacity,
      leases: stats.leases, queued: stats.queued, hostsQueued: stats.hostsQueued, dueHosts: stats.dueHosts,
      parseQueue: stats.parseQueue, parseQueueMax: p?.parseQueueMax ?? 0, blockedMs, readyLagMs: p?.readyLagMs ?? 0,
      redisUsedBytes: p?.redisUsedBytes ?? 0, redisBudgetBytes: p?.redisBudgetBytes ?? 0, hostsUnderBackoff: p?.hostsUnderBackoff ?? 0,
      ...(p?.stopped ? { stopped: p.stopped } : {}),
    });
  }

  /** Fields for /status and /metrics. */
  extras(): { processes: ProcessSample[]; eventLoop: ReturnType<EventLoopBoard["samples"]>; fetchCapacity: number; bottleneck?: Bottleneck } {
    return { processes: this.processes, eventLoop: this.eventLoop.samples(), fetchCapacity: this.fetchCapacity, ...(this.bottleneck ? { bottleneck: this.bottleneck } : {}) };
  }

  samples(): HistorySample[] {
    return this.history.all();
  }

  close(): void {
    this.eventLoop.close();
  }
}
