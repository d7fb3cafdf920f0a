// Parse stage "read body": a task carries its body, or a reference to it in the body spool, read
// here (off the main thread when parsing runs in threads). A spooled body that cannot be read back
// (lost, short, corrupt) is reported, never thrown: the page must be fetched again.
import { readSpooled, SpoolEntryLost, type SpoolRef } from "../store/body-spool.js";

export type BodySource = { body: Uint8Array; spool?: undefined } | { spool: SpoolRef; body?: undefined };

export function readTaskBody(task: BodySource, spoolDir: string): Buffer | { lost: string } {
  if (task.spool) {
    try {
      return readSpooled(spoolDir, task.spool);
    } catch (err) {
      if (err instanceof SpoolEntryLost) return { lost: err.message };
      throw err;
    }
  }
  return Buffer.from(task.body.buffer, task.body.byteOffset, task.body.byteLength);
}
