// Live terminal progress: one status line redrawn in place on a TTY, silent otherwise.
export interface ProgressSample {
  t: number;
  fetched: number;
  parsed: number;
  errors: number;
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

/** Keeps a short window of samples and renders a one-line summary with rates over that window. */
export class ProgressLine {
  private samples: ProgressSample[] = [];
  constructor(private readonly windowMs = 10_000) {}

  add(s: ProgressSample): void {
    this.samples.push(s);
    while (this.samples.length > 2 && s.t - this.samples[0]!.t > this.windowMs) this.samples.shift();
  }

  rate(): number {
    const a = this.samples[0];
    const b = this.samples[this.samples.length - 1];
    if (!a || !b || b.t === a.t) return 0;
    return ((b.fetched - a.fetched) * 1000) / (b.t - a.t);
  }

  render(startedAt: number): string {
    const s = this.samples[this.samples.length - 1];
    if (!s) return "";
    const rate = this.rate();
    let eta = "";
    if (s.maxPages && rate > 0) eta = ` eta ${formatDuration(((s.maxPages - s.fetched) / rate) * 1000)}`;
    const limit = s.maxPages ? `/${s.maxPages}` : "";
    return (
      `${formatDuration(s.t - startedAt)} fetched ${s.fetched}${limit} (${formatRate(rate)}/s) parsed ${s.parsed}` +
      ` errors ${s.errors} | queued ${s.queued} in ${s.hosts} hosts, in flight ${s.leases}, parse queue ${s.parseQueue}${eta}`
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
