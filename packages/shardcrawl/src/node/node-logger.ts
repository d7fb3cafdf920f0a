// Structured JSON logs of one node process: pino, one logger per process with node name, role,
// index and pid on every line, written to <out>/logs/<role>[-<index>].<n>.log and rolled by size
// (rolling-file.ts), keeping the newest `files` rotated files besides the active one.
// Writes are synchronous: log volume is events, not pages, and a process that exits right after a
// fatal line must not lose it.
import { pino, type Logger, type LevelWithSilent } from "../shared/cjs-pino.js";
import { RollingFile } from "./rolling-file.js";

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

export interface NodeLogger {
  logger: Logger;
  /** Resolved when the log file is open; rejected when it cannot be (the logger then writes nothing). */
  ready: Promise<void>;
  /** Closes the file (call before process.exit). */
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
  let target: RollingFile | null = null;
  let ready: Promise<void>;
  try {
    target = new RollingFile({ dir: s.dir, base: s.file, maxBytes: s.maxBytes, keep: s.files });
    ready = Promise.resolve();
  } catch (err) {
    ready = Promise.reject(err instanceof Error ? err : new Error(String(err)));
  }
  const dest = {
    write(line: string) {
      target?.write(line);
    },
  };
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
        target.close();
      } catch {
        // the file is gone: nothing more to save
      }
      target = null;
    },
  };
}

/** The file base name of a process's log: its role, with the index when a node runs several of that role. */
export function logFileName(role: string, index?: number): string {
  return index === undefined ? role : `${role}-${index}`;
}
