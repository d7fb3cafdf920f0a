// Structured JSON logs of one node process: pino, one logger per process with node name, role,
// index and pid on every line, written to <out>/logs/<role>[-<index>].<n>.log and rolled by size
// with pino-roll, keeping the newest `files` rotated files besides the active one.
// Writes are synchronous: log volume is events, not pages, and a process that exits right after a
// fatal line must not lose it. pino-roll opens its file asynchronously; lines logged before that
// wait in a small bounded buffer, so a logger is usable at once (child-runtime builds it in a sync call).
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { createRequire } from "node:module";
import { pino, type Logger, type DestinationStream, type LevelWithSilent } from "pino";

export const LOG_LEVELS: readonly LevelWithSilent[] = ["trace", "debug", "info", "warn", "error", "fatal", "silent"];

export interface LogSettings {
  /** Folder for the log files (by convention <out>/logs). */
  dir: string;
  /** File base name: the process role, with its index when a node runs several ("fetcher-0"). */
  file: string;
  level: LevelWithSilent;
  /** A file is rolled once it reaches this many bytes. */
  maxBytes: number;
  /** Rotated files kept besides the active one. */
  files: number;
  /** Fields on every line: node, role, index... (pid is always added). */
  bindings: Record<string, string | number>;
}

interface RollStream extends DestinationStream {
  flushSync(): void;
  end(): void;
  on(event: string, fn: (...args: unknown[]) => void): this;
}
// pino-roll is CommonJS without typings; this is the part of its API we use.
type PinoRoll = (opts: Record<string, unknown>) => Promise<RollStream>;
const pinoRoll = createRequire(import.meta.url)("pino-roll") as PinoRoll;

/** Lines kept while the file opens; past this, the oldest are dropped (and counted in the first line written). */
const MAX_PENDING_LINES = 1000;

export interface NodeLogger {
  logger: Logger;
  /** Resolves once the log file is open (rejects when it cannot be: the logger then writes nothing). */
  ready: Promise<void>;
  /** Writes what is buffered and closes the file (call before process.exit). */
  close(): void;
}

export function validateLogSettings(s: Pick<LogSettings, "level" | "maxBytes" | "files">): string[] {
  const errors: string[] = [];
  if (!LOG_LEVELS.includes(s.level)) errors.push(`logLevel: expected one of ${LOG_LEVELS.join(", ")}, got ${JSON.stringify(s.level)}`);
  if (!Number.isSafeInteger(s.maxBytes) || s.maxBytes < 1) errors.push(`logMaxBytes: expected a positive integer, got ${JSON.stringify(s.maxBytes)}`);
  if (!Number.isSafeInteger(s.files) || s.files < 1) errors.push(`logFiles: expected a positive integer, got ${JSON.stringify(s.files)}`);
  return errors;
}

export function openNodeLogger(s: LogSettings): NodeLogger {
  const errors = validateLogSettings(s);
  if (errors.length) throw new RangeError(errors.join("; "));
  let target: RollStream | null = null;
  let failed = false;
  let pending: string[] = [];
  let droppedWhileOpening = 0;
  const dest: DestinationStream = {
    write(line: string) {
      if (target) target.write(line);
      else if (!failed) {
        if (pending.length >= MAX_PENDING_LINES) {
          pending.shift();
          droppedWhileOpening++;
        }
        pending.push(line);
      }
    },
  };
  const ready = (async () => {
    mkdirSync(s.dir, { recursive: true });
    const stream = await pinoRoll({
      file: join(s.dir, s.file), extension: ".log", size: `${s.maxBytes}b`, limit: { count: s.files }, mkdir: true, sync: true,
    });
    // A full disk must not crash the crawl through its logger (the page log and WARC writers report it).
    stream.on("error", () => undefined);
    target = stream;
    if (droppedWhileOpening) pending.unshift(`${JSON.stringify({ level: "warn", time: new Date().toISOString(), ...s.bindings, pid: process.pid, msg: `${droppedWhileOpening} log lines dropped while the log file opened` })}\n`);
    for (const l of pending) stream.write(l);
    pending = [];
  })().catch((err: unknown) => {
    failed = true;
    pending = [];
    throw err;
  });
  const logger = pino(
    {
      level: s.level,
      base: { ...s.bindings, pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      // Level names ("info"), not numbers: the files are read by people and by jq alike.
      formatters: { level: (label) => ({ level: label }) },
    },
    dest,
  );
  return {
    logger,
    ready,
    close() {
      if (!target) return;
      try {
        target.flushSync();
      } catch {
        // nothing buffered, or the file is gone: nothing more to save
      }
      target.end();
      target = null;
      failed = true;
    },
  };
}

/** The file base name of a process's log: its role, with the index when a node runs several of that role. */
export function logFileName(role: string, index?: number): string {
  return index === undefined ? role : `${role}-${index}`;
}
