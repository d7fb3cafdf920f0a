// --exclude-file: the site owners' opt-out list loaded at node start into the node's Redis (the
// same list `shardcrawl exclude add` writes), with the queued URLs each entry covers removed.
// Format: one entry per line, "<domain|host|url-prefix> [reason...]"; blank lines and # comments ignored.
import { readFileSync } from "node:fs";
import { parseExclusionPattern } from "../frontier/index.js";
import type { NodeFrontier } from "./open-frontier.js";

/** At most this many entries per file: the list is held by every process of the node. */
export const MAX_EXCLUDE_FILE_ENTRIES = 100_000;

export interface ExcludeFileEntry {
  pattern: string;
  reason: string;
}

/** Parses an exclude file; throws an error naming the file and line on a bad entry. */
export function parseExcludeFile(text: string, file: string): ExcludeFileEntry[] {
  const out: ExcludeFileEntry[] = [];
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (line === "" || line.startsWith("#")) continue;
    const m = /^(\S+)\s*(.*)$/.exec(line)!;
    try {
      parseExclusionPattern(m[1]!);
    } catch (err) {
      throw new Error(`${file}:${i + 1}: ${(err as Error).message}`);
    }
    out.push({ pattern: m[1]!, reason: m[2]!.trim() });
    if (out.length > MAX_EXCLUDE_FILE_ENTRIES) throw new Error(`${file}: more than ${MAX_EXCLUDE_FILE_ENTRIES} entries`);
  }
  return out;
}

/** Adds the file's entries to the node's list and purges what they cover; returns entries and URLs removed. */
export async function loadExcludeFile(frontier: Pick<NodeFrontier, "exclusions" | "purgeExcluded">, file: string, now = Date.now()): Promise<{ entries: number; removed: number }> {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new Error(`cannot read exclude file ${file}: ${(err as Error).message}`);
  }
  const entries = parseExcludeFile(text, file);
  const known = new Map((await frontier.exclusions.all()).map((e) => [e.pattern, e]));
  let removed = 0;
  for (const { pattern, reason } of entries) {
    const why = reason || `exclude file ${file}`;
    // Already listed with the same reason (a restart): keep its original time.
    if (known.get(parseExclusionPattern(pattern).pattern)?.reason === why) continue;
    const e = await frontier.exclusions.add(pattern, why, now);
    removed += await frontier.purgeExcluded(e, now);
  }
  return { entries: entries.length, removed };
}
