// Reads an outbox file as batches of links. A file cut by a crash (a damaged last gzip member)
// yields every complete line before the damage and reports it; a line that is not "url<TAB>depth"
// is counted as rejected with its line number, never thrown.
import { createReadStream } from "node:fs";
import { createGunzip } from "node:zlib";
import type { OutboxLink } from "./outbox-format.js";

export interface ReadReport {
  lines: number;
  rejected: Array<{ line: number; reason: string }>;
  /** Set when the file ends in a damaged gzip member (its complete lines were still read). */
  damaged?: string;
}

const MAX_LINE_CHARS = 16_384;
const MAX_REJECTED_KEPT = 20;

export async function* readOutboxFile(path: string, report: ReadReport, batchSize = 5000): AsyncGenerator<OutboxLink[]> {
  const gunzip = createGunzip();
  const input = createReadStream(path);
  input.on("error", (err) => gunzip.destroy(err));
  input.pipe(gunzip);
  let rest = "";
  let batch: OutboxLink[] = [];
  let rejectedCount = 0;
  const reject = (reason: string) => {
    rejectedCount++;
    if (report.rejected.length < MAX_REJECTED_KEPT) report.rejected.push({ line: report.lines, reason });
  };
  const take = (line: string) => {
    report.lines++;
    const tab = line.indexOf("\t");
    const url = tab >= 0 ? line.slice(0, tab) : line;
    const depth = tab >= 0 ? Number(line.slice(tab + 1)) : 0;
    if (!url) return reject("empty line");
    if (!Number.isSafeInteger(depth) || depth < 0) return reject(`depth is not a non-negative integer: ${JSON.stringify(line.slice(tab + 1, tab + 21))}`);
    batch.push({ url, depth });
  };
  try {
    for await (const chunk of gunzip as AsyncIterable<Buffer>) {
      rest += chunk.toString("utf8");
      let nl: number;
      while ((nl = rest.indexOf("\n")) >= 0) {
        take(rest.slice(0, nl));
        rest = rest.slice(nl + 1);
        if (batch.length >= batchSize) {
          yield batch;
          batch = [];
        }
      }
      if (rest.length > MAX_LINE_CHARS) {
        reject(`line longer than ${MAX_LINE_CHARS} characters`);
        rest = "";
      }
    }
  } catch (err) {
    // A cut gzip member: keep what was complete, say where it stopped.
    report.damaged = (err as Error).message;
  }
  // A partial last line (no newline) is the cut part of a damaged file: not a link.
  if (rest.length > 0 && !report.damaged) take(rest);
  if (batch.length) yield batch;
  if (rejectedCount > report.rejected.length) report.rejected.push({ line: -1, reason: `${rejectedCount - report.rejected.length} more rejected lines` });
}
