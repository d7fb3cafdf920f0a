// Whether a process still runs (or cannot be signalled by us, which also means it exists): the
// store leaves a writer's files alone while it lives (WARC repair, spool sweep).
import { errnoCode } from "./append-file.js";

export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoCode(err) === "EPERM";
  }
}
