// Hands closed output files (WARC, CDXJ, page log) to an operator command (--on-file-closed):
// `sh -c '<command> "$1"' ship <path>`. Exit status 0 marks the file shipped: a line in
// out/shipped.log (appended and fsynced), and with --delete-shipped the file is removed. A failure
// is retried with exponential back-off; nothing is ever deleted that was not shipped. Pending
// shipments need no state of their own: a closed file not listed in shipped.log is pending, so
// they survive any restart (a crash between the command's success and the ledger line ships that
// file again: the command must tolerate a repeat, as scripts/ship.sh does).
// Also prunes processed inbox files (out/inbox/done/) older than INBOX_DONE_KEEP_MS.
import { spawn } from "node:child_process";
import { existsSync, openSync, closeSync, fsyncSync, readdirSync, readFileSync, statSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

/** A closed file of one of these kinds is shipped (open files end in .open, CDXJ temp files in .tmp). */
const SHIPPED_NAME = /\.(warc\.gz|warc|cdxj|jsonl)$/;
/** Folders of out/ whose closed files are shipped. */
const SHIPPED_DIRS = ["warc", "pages"];
export const SHIP_LEDGER = "shipped.log";
/** Processed inbox files are kept this long (for a look after an incident), then removed. */
export const INBOX_DONE_KEEP_MS = 60 * 60 * 1000;
const RETRY_BASE_MS = 2_000;
const RETRY_CAP_MS = 5 * 60_000;
/** Output kept from a failing command for the log line. */
const MAX_ERR_CHARS = 500;

export interface ShipperOptions {
  out: string;
  command: string;
  deleteShipped: boolean;
  log: (m: string) => void;
  /** Counters (P stats): ship:files, ship:bytes, ship:failures. */
  count?: (field: string, by: number) => void;
  /** Commands running at once (default 2). */
  concurrency?: number;
  /** A command running longer is killed and counted as failed (default 1 h). */
  timeoutMs?: number;
}

interface Retry {
  attempts: number;
  notBefore: number;
}

export class FileShipper {
  private readonly shipped = new Set<string>();
  private readonly running = new Set<string>();
  private readonly retries = new Map<string, Retry>();
  private readonly ledger: string;
  private lastPrune = 0;

  constructor(private readonly opts: ShipperOptions) {
    this.ledger = join(opts.out, SHIP_LEDGER);
    if (existsSync(this.ledger)) {
      for (const line of readFileSync(this.ledger, "utf8").split("\n")) {
        const path = line.split("\t")[0];
        if (path) this.shipped.add(path);
      }
    }
  }

  /** Closed files not shipped yet, oldest name first (relative to out/). */
  pending(): string[] {
    const out: string[] = [];
    for (const d of SHIPPED_DIRS) {
      const dir = join(this.opts.out, d);
      if (!existsSync(dir)) continue;
      for (const f of readdirSync(dir).sort()) {
        const rel = `${d}/${f}`;
        if (SHIPPED_NAME.test(f) && !this.shipped.has(rel)) out.push(rel);
      }
    }
    return out;
  }

  /** Starts shipments that are due (never waits for them). Never throws. */
  tick(now: number = Date.now()): void {
    try {
      const max = this.opts.concurrency ?? 2;
      for (const rel of this.pending()) {
        if (this.running.size >= max) break;
        if (this.running.has(rel)) continue;
        const r = this.retries.get(rel);
        if (r && r.notBefore > now) continue;
        this.running.add(rel);
        void this.ship(rel).finally(() => this.running.delete(rel));
      }
      if (now - this.lastPrune > 60_000) {
        this.lastPrune = now;
        this.pruneInbox(now);
      }
    } catch (err) {
      this.opts.log(`shipping: ${(err as Error).message}`);
    }
  }

  /** Ships until nothing is pending or `timeoutMs` passed; returns the files still pending. */
  async drain(timeoutMs: number): Promise<string[]> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      this.tick();
      const left = this.pending();
      if ((left.length === 0 && this.running.size === 0) || Date.now() > deadline) {
        while (this.running.size > 0 && Date.now() <= deadline + 5_000) await sleep(100);
        return this.pending();
      }
      await sleep(200);
    }
  }

  private async ship(rel: string): Promise<void> {
    const path = join(this.opts.out, rel);
    let size: number;
    try {
      size = statSync(path).size;
    } catch {
      return; // gone (removed by hand): nothing to ship
    }
    const res = await runCommand(this.opts.command, path, this.opts.timeoutMs ?? 3_600_000);
    if (!res.ok) {
      const r = this.retries.get(rel) ?? { attempts: 0, notBefore: 0 };
      r.attempts++;
      const wait = Math.min(RETRY_CAP_MS, RETRY_BASE_MS * 2 ** (r.attempts - 1));
      r.notBefore = Date.now() + wait / 2 + Math.random() * (wait / 2);
      this.retries.set(rel, r);
      this.opts.count?.("ship:failures", 1);
      this.opts.log(`shipping ${rel} failed (attempt ${r.attempts}, retry in ${Math.round(wait / 1000)} s): ${res.error}`);
      return;
    }
    // The ledger line first, fsynced: a file is never deleted before it is recorded as shipped.
    const fd = openSync(this.ledger, "a");
    try {
      writeSync(fd, `${rel}\t${size}\t${new Date().toISOString()}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.shipped.add(rel);
    this.retries.delete(rel);
    this.opts.count?.("ship:files", 1);
    this.opts.count?.("ship:bytes", size);
    if (this.opts.deleteShipped) {
      try {
        unlinkSync(path);
      } catch (err) {
        this.opts.log(`shipped ${rel} but could not delete it: ${(err as Error).message}`);
      }
    }
  }

  private pruneInbox(now: number): void {
    const dir = join(this.opts.out, "inbox", "done");
    if (!existsSync(dir)) return;
    for (const f of readdirSync(dir)) {
      const p = join(dir, f);
      try {
        if (now - statSync(p).mtimeMs > INBOX_DONE_KEEP_MS) unlinkSync(p);
      } catch {
        // raced with another remover: fine
      }
    }
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

/** Runs the operator's command with the path as $1; ok on exit status 0. */
function runCommand(command: string, path: string, timeoutMs: number): Promise<{ ok: true } | { ok: false; error: string }> {
  return new Promise((resolve) => {
    let err = "";
    const child = spawn("sh", ["-c", `${command} "$1"`, "ship", path], { stdio: ["ignore", "ignore", "pipe"] });
    const timer = setTimeout(() => child.kill("SIGKILL"), timeoutMs);
    child.stderr.on("data", (b: Buffer) => {
      if (err.length < MAX_ERR_CHARS) err += b.toString("utf8").slice(0, MAX_ERR_CHARS - err.length);
    });
    child.on("error", (e) => {
      clearTimeout(timer);
      resolve({ ok: false, error: e.message });
    });
    child.on("close", (code, signal) => {
      clearTimeout(timer);
      resolve(code === 0 ? { ok: true } : { ok: false, error: `${signal ? `killed by ${signal}` : `exit ${code}`}${err ? `: ${err.trim()}` : ""}` });
    });
  });
}

