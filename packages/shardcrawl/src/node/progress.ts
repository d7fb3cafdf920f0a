// Live terminal progress: one status line redrawn in place on a TTY; with --progress on and no TTY
// (a log file, CI) a plain line every 5 s. Rates are over the last 10 s; the ETA extrapolates the
// rate --max-pages is used at.
export interface ProgressSample {
  t: number;
  fetched: number;
  parsed: number;
  errors: number;
  /** Fetches that ended without a page (errors and robots refusals): they use up --max-pages too. */
  failed?: number;
  queued: number;
  hosts: number;
  leases: number;
  parseQueue: number;
  maxPages?: number;
}

export function formatRate(n: number): string {
  return n >= 100 ? n.toFixed(0) : n >= 10 ? n.toFixed(1) : n.toFixed(2);
}

export function formatDuration(ms: number): string {
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return h ? `${h}h${String(m).padStart(2, "0")}m` : m ? `${m}m${String(sec).padStart(2, "0")}s` : `${sec}s`;
}

/**
 * Time left until `done` reaches `limit` at `ratePerSec`, in ms: null when there is no limit or no
 * progress to extrapolate from, 0 once the limit is reached.
 */
export function estimateEtaMs(done: number, limit: number | undefined, ratePerSec: number): number | null {
  if (limit === undefined || !(limit > 0)) return null;
  if (done >= limit) return 0;
  if (!Number.isFinite(ratePerSec) || ratePerSec <= 0) return null;
  return Math.ceil(((limit - done) / ratePerSec) * 1000);
}

/** Per-second rate of a counter between the first and last sample of a window (0 when it cannot tell). */
export function windowRate(samples: readonly ProgressSample[], count: (s: ProgressSample) => number): number {
  const a = samples[0];
  const b = samples[samples.length - 1];
  if (!a || !b || b.t <= a.t) return 0;
  return Math.max(0, ((count(b) - count(a)) * 1000) / (b.t - a.t));
}

/** What --max-pages counts: fetched pages and failed fetches (lease.lua's budget). */
const budgetUsed = (s: ProgressSample) => s.fetched + (s.failed ?? 0);

/** Keeps a short window of samples and renders a one-line summary with rates over that window. */
export class ProgressLine {
  private samples: ProgressSample[] = [];
  constructor(private readonly windowMs = 10_000) {}

  add(s: ProgressSample): void {
    this.samples.push(s);
    while (this.samples.length > 2 && s.t - this.samples[0]!.t > this.windowMs) this.samples.shift();
  }

  /** Pages fetched per second over the window. */
  rate(): number {
    return windowRate(this.samples, (s) => s.fetched);
  }

  /** Time left until --max-pages, from the rate the budget is used at over the window. */
  etaMs(): number | null {
    const s = this.samples[this.samples.length - 1];
    if (!s) return null;
    return estimateEtaMs(budgetUsed(s), s.maxPages, windowRate(this.samples, budgetUsed));
  }

  render(startedAt: number): string {
    const s = this.samples[this.samples.length - 1];
    if (!s) return "";
    const eta = this.etaMs();
    const limit = s.maxPages ? `/${s.maxPages}` : "";
    const errorShare = s.fetched + (s.failed ?? 0) > 0 ? ` (${((100 * s.errors) / (s.fetched + (s.failed ?? 0))).toFixed(1)}%)` : "";
    return (
      `${formatDuration(s.t - startedAt)} fetched ${s.fetched}${limit} (${formatRate(this.rate())}/s) parsed ${s.parsed}` +
      ` errors ${s.errors}${errorShare} | queued ${s.queued} in ${s.hosts} hosts, in flight ${s.leases}, parse queue ${s.parseQueue}` +
      (eta === null ? "" : ` | eta ${formatDuration(eta)}`)
    );
  }
}

export class TerminalProgress {
  private readonly line = new ProgressLine();
  private lastLen = 0;
  constructor(
    private readonly stream: NodeJS.WriteStream,
    private readonly enabled: boolean,
    private readonly startedAt: number,
  ) {}

  private lastPlain = 0;

  update(s: ProgressSample): void {
    this.line.add(s);
    if (!this.enabled) return;
    const text = this.line.render(this.startedAt);
    if (!this.stream.isTTY) {
      // Not a terminal (a log file, CI): one plain line every 5 s instead of redrawing in place.
      if (s.t - this.lastPlain >= 5000) {
        this.lastPlain = s.t;
        this.stream.write(`${text}\n`);
      }
      return;
    }
    const width = this.stream.columns ? this.stream.columns - 1 : 200;
    const out = text.length > width ? text.slice(0, width) : text;
    this.stream.write(`\r${out}${" ".repeat(Math.max(0, this.lastLen - out.length))}`);
    this.lastLen = out.length;
  }

  done(): void {
    if (this.enabled && this.lastLen && this.stream.isTTY) this.stream.write("\n");
    this.lastLen = 0;
  }

  rate(): number {
    return this.line.rate();
  }
}
