// Reads a seed file: one URL per line, blank lines and # comments ignored. Bad lines are reported
// with their line number instead of stopping the crawl. A node's seed file can hold 10^7 lines:
// readSeedBatches streams it in batches (memory bounded by the batch, not the file).
import { createReadStream, readFileSync } from "node:fs";
import { normalizeUrlDetailed } from "../url/normalize.js";
import { ParamStripper } from "../url/strip-params.js";

export interface RejectedSeed { line: number; text: string; reason: string }

export interface SeedFile {
  accepted: string[];
  rejected: RejectedSeed[];
}

/** What a streamed seed file held: counts, and the first rejected lines to show. */
export interface SeedTally {
  /** Lines that gave a URL (a URL repeated within one batch counts once). */
  accepted: number;
  rejected: number;
  firstRejected: RejectedSeed[];
}

/** Rejected lines kept for the report; the rest are only counted. */
const KEEP_REJECTED = 100;
/** Seeds per batch handed to the frontier: one add_links call (frontier MAX_LINKS_PER_CALL). */
export const SEED_BATCH = 20_000;

export function tallyOf(seeds: SeedFile): SeedTally {
  return { accepted: seeds.accepted.length, rejected: seeds.rejected.length, firstRejected: seeds.rejected.slice(0, KEEP_REJECTED) };
}

/** One line's URL, or why it has none (null: blank or comment). */
function seedOf(raw: string, maxUrlLength: number, stripper: ParamStripper): { url: string } | { reason: string } | null {
  const line = raw.trim();
  if (!line || line.startsWith("#")) return null;
  const r = normalizeUrlDetailed(line, undefined, { maxLength: maxUrlLength });
  return r.ok ? { url: stripper.clean(r.url) } : { reason: r.reason };
}

/** `stripParams`: session-id and tracking parameters removed, as from discovered links. */
export function parseSeeds(text: string, maxUrlLength: number, stripParams: readonly string[] = []): SeedFile {
  const stripper = new ParamStripper(stripParams);
  const accepted: string[] = [];
  const rejected: SeedFile["rejected"] = [];
  const seen = new Set<string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const s = seedOf(lines[i]!, maxUrlLength, stripper);
    if (s === null) continue;
    if ("reason" in s) rejected.push({ line: i + 1, text: lines[i]!.trim(), reason: s.reason });
    else if (!seen.has(s.url)) {
      seen.add(s.url);
      accepted.push(s.url);
    }
  }
  return { accepted, rejected };
}

/** The whole file in memory: for small lists (shard planning); a node streams with readSeedBatches. */
export function readSeedFile(path: string, maxUrlLength: number, stripParams: readonly string[] = []): SeedFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`cannot read seed file ${path}: ${(err as Error).message}`);
  }
  return parseSeeds(text, maxUrlLength, stripParams);
}

/**
 * The lines of a file, streamed. A line longer than `maxLineChars` is cut there (its rest skipped
 * up to the next newline), so one line without an end cannot fill memory.
 */
async function* fileLines(path: string, maxLineChars: number): AsyncGenerator<string> {
  let partial = "";
  let skipping = false;
  for await (const chunk of createReadStream(path, { encoding: "utf8", highWaterMark: 1 << 20 }) as AsyncIterable<string>) {
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf("\n", start);
      const piece = chunk.slice(start, nl === -1 ? undefined : nl);
      if (!skipping) partial += piece;
      if (partial.length > maxLineChars) {
        partial = partial.slice(0, maxLineChars);
        skipping = true;
      }
      if (nl === -1) break;
      yield partial.endsWith("\r") ? partial.slice(0, -1) : partial;
      partial = "";
      skipping = false;
      start = nl + 1;
    }
  }
  if (partial) yield partial;
}

/**
 * The accepted seeds of a file in batches of `batchSize`, streamed; `tally` counts as it goes
 * (accepted, rejected and the first rejected lines). A URL repeated within a batch is passed
 * once; repeats further apart are the frontier's seen filter's to drop.
 */
export async function* readSeedBatches(
  path: string, maxUrlLength: number, stripParams: readonly string[], tally: SeedTally, batchSize = SEED_BATCH,
): AsyncGenerator<string[]> {
  const stripper = new ParamStripper(stripParams);
  // Longer lines are rejected as too long by normalization anyway; keep enough to show them.
  const maxLineChars = Math.max(4 * maxUrlLength, 8192);
  let batch: string[] = [];
  let inBatch = new Set<string>();
  let lineNo = 0;
  for await (const raw of fileLines(path, maxLineChars)) {
    lineNo++;
    const s = seedOf(raw, maxUrlLength, stripper);
    if (s === null) continue;
    if ("reason" in s) {
      tally.rejected++;
      if (tally.firstRejected.length < KEEP_REJECTED) tally.firstRejected.push({ line: lineNo, text: raw.trim().slice(0, 500), reason: s.reason });
      continue;
    }
    if (inBatch.has(s.url)) continue;
    inBatch.add(s.url);
    batch.push(s.url);
    tally.accepted++;
    if (batch.length >= batchSize) {
      yield batch;
      batch = [];
      inBatch = new Set();
    }
  }
  if (batch.length) yield batch;
}
