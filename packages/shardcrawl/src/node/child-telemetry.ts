// Event-loop lag of every process of the node. Each child measures its own loop
// (perf_hooks.monitorEventLoopDelay) and reports it to the supervisor over IPC every few seconds;
// the supervisor keeps the last report per child and measures itself. A gauge, so no state needs
// to survive a restart, unlike the counters (those go to Redis: stats-batch.ts).
import { monitorEventLoopDelay, type IntervalHistogram } from "node:perf_hooks";
import type { ChildMessage, ChildSpec } from "./children.js";
import type { EventLoopSample } from "./metrics.js";

const REPORT_MS = 2000;
/** A child silent for this long (dead, stopped) is left out. */
const STALE_MS = 10_000;

interface LoopReport {
  meanSeconds: number;
  maxSeconds: number;
}

/** Sampling timer of the delay monitor; its samples include this interval, which is taken off. */
const RESOLUTION_MS = 20;

function startMonitor(): IntervalHistogram {
  const h = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  h.enable();
  return h;
}

/** Reads and resets a histogram: mean and max delay since the last read, in seconds. */
function readMonitor(h: IntervalHistogram): LoopReport {
  const lag = (ns: number) => (Number.isFinite(ns) ? Math.max(0, ns / 1e9 - RESOLUTION_MS / 1000) : 0);
  const r = { meanSeconds: lag(h.mean), maxSeconds: lag(h.max) };
  h.reset();
  return r;
}

/** In a child: reports its event-loop lag to the supervisor every REPORT_MS. */
export function reportEventLoop(send: (msg: ChildMessage) => void): void {
  const h = startMonitor();
  setInterval(() => send({ type: "stats", eventLoop: readMonitor(h) }), REPORT_MS).unref();
}

/** In the supervisor: the last report of each child, plus its own loop. */
export class EventLoopBoard {
  private readonly reports = new Map<string, LoopReport & { at: number }>();
  private readonly own = startMonitor();
  private ownLast: LoopReport = { meanSeconds: 0, maxSeconds: 0 };
  private ownAt = 0;

  readonly onChildMessage = (spec: ChildSpec, msg: ChildMessage): void => {
    const e = msg.eventLoop as Partial<LoopReport> | undefined;
    if (msg.type !== "stats" || !e || typeof e.meanSeconds !== "number" || typeof e.maxSeconds !== "number") return;
    this.reports.set(`${spec.role}-${spec.index}`, { meanSeconds: e.meanSeconds, maxSeconds: e.maxSeconds, at: Date.now() });
  };

  samples(now = Date.now()): EventLoopSample[] {
    if (now - this.ownAt >= REPORT_MS) {
      this.ownLast = readMonitor(this.own);
      this.ownAt = now;
    }
    const out: EventLoopSample[] = [{ process: "supervisor", ...this.ownLast }];
    for (const [process, r] of this.reports) if (now - r.at < STALE_MS) out.push({ process, meanSeconds: r.meanSeconds, maxSeconds: r.maxSeconds });
    return out;
  }

  close(): void {
    this.own.disable();
  }
}
