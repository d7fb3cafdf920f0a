// The request log: one JSON line per request, written when the response ends or the connection dies.
// Lines are buffered in memory and written synchronously every 200 ms, when 2,000 are pending, and
// on close. Synchronous writes keep the buffer bounded without back-pressure plumbing.
import { closeSync, openSync, writeSync } from "node:fs";

export interface LogEntry {
  /** Request start, real epoch ms. */
  ts: number;
  /** Response end (or connection death), real epoch ms. */
  end: number;
  host: string;
  scheme: "http" | "https";
  method: string;
  path: string;
  /** 0 when the connection was reset or destroyed before a response. */
  status: number;
  /** Body bytes sent. */
  bytes: number;
  /** Requests to this host in progress when this one started, including itself. */
  inflight: number;
  ua: string;
  /** Connection the request came on: numbered 1, 2, ... per server process in order of first request. */
  conn?: number;
  /** Local address the connection arrived on (which of simweb's loopback addresses the client chose). */
  addr?: string;
  /** HTTPS: whether that connection's TLS handshake resumed an earlier session. */
  tlsResumed?: boolean;
  /** Content-clock ms when a simulated clock is in use. */
  sim?: number;
}

const FLUSH_MS = 200;
const MAX_PENDING = 2_000;

/** JSON lines, buffered (also the DNS query log, dns-server.ts). */
export class RequestLog<T extends object = LogEntry> {
  private fd: number | null;
  private pending: string[] = [];
  private readonly timer: NodeJS.Timeout;
  written = 0;
  /** Lines lost to write errors (e.g. a full disk); the server keeps serving. */
  dropped = 0;

  constructor(readonly file: string) {
    this.fd = openSync(file, "a");
    this.timer = setInterval(() => this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  write(e: T): void {
    if (this.fd === null) return;
    this.pending.push(JSON.stringify(e));
    if (this.pending.length >= MAX_PENDING) this.flush();
  }

  flush(): void {
    if (this.fd === null || this.pending.length === 0) return;
    const data = Buffer.from(this.pending.join("\n") + "\n", "utf8");
    const n = this.pending.length;
    this.pending = [];
    try {
      for (let off = 0; off < data.length; ) off += writeSync(this.fd, data, off, data.length - off);
      this.written += n;
    } catch (err) {
      if (this.dropped === 0) process.stderr.write(`simweb: request log ${this.file}: ${err instanceof Error ? err.message : String(err)}; lines are being dropped\n`);
      this.dropped += n;
    }
  }

  close(): void {
    clearInterval(this.timer);
    this.flush();
    if (this.fd !== null) closeSync(this.fd);
    this.fd = null;
  }
}
