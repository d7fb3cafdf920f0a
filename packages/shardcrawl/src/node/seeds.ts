// Reads a seed file: one URL per line, blank lines and # comments ignored. Bad lines are reported
// with their line number instead of stopping the crawl.
import { readFileSync } from "node:fs";
import { normalizeUrlDetailed } from "../url/normalize.js";
import { ParamStripper } from "../url/strip-params.js";

export interface SeedFile {
  accepted: string[];
  rejected: Array<{ line: number; text: string; reason: string }>;
}

/** `stripParams`: session-id and tracking parameters removed, as from discovered links. */
export function parseSeeds(text: string, maxUrlLength: number, stripParams: readonly string[] = []): SeedFile {
  const stripper = new ParamStripper(stripParams);
  const accepted: string[] = [];
  const rejected: SeedFile["rejected"] = [];
  const seen = new Set<string>();
  const lines = text.split(/\r?\n/);
  for (let i = 0; i < lines.length; i++) {
    const raw = lines[i]!.trim();
    if (!raw || raw.startsWith("#")) continue;
    const r = normalizeUrlDetailed(raw, undefined, { maxLength: maxUrlLength });
    if (!r.ok) {
      rejected.push({ line: i + 1, text: raw, reason: r.reason });
      continue;
    }
    const url = stripper.clean(r.url);
    if (!seen.has(url)) {
      seen.add(url);
      accepted.push(url);
    }
  }
  return { accepted, rejected };
}

export function readSeedFile(path: string, maxUrlLength: number, stripParams: readonly string[] = []): SeedFile {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (err) {
    throw new Error(`cannot read seed file ${path}: ${(err as Error).message}`);
  }
  return parseSeeds(text, maxUrlLength, stripParams);
}
