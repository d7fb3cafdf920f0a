// Runs the real shardcrawl CLI (built dist) against a simweb process, and reads its output back.
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createReadStream, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { WARCParser } from "warcio";
import type { SimwebProcess } from "./simweb.js";

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "../..");
export const SHARDCRAWL = join(ROOT, "packages/shardcrawl/dist/cli/main.js");
export const SIMWEB = join(ROOT, "packages/simweb/dist/cli.js");
export const TEST_UA = "shardcrawl/0.1 (+https://github.com/shardcrawl/shardcrawl)";

/** The flags that point a crawl at simweb over loopback. */
export function simwebFlags(sim: SimwebProcess): string[] {
  return [
    "--allow-private", "--ca-file", sim.ca,
    "--connect-to", `:80:127.0.0.1:${sim.http}`, "--connect-to", `:443:127.0.0.1:${sim.https}`,
    "--user-agent", TEST_UA,
    // simweb's server-error/unreachable robots.txt hosts never answer: their URLs wait (deferred)
    // and would hold the end of every crawl for the default 2 minutes.
    "--max-defer-wait", "3000",
  ];
}

/** `simweb seeds` with the same config flags the server got, written to a file. */
export function writeSeeds(configArgs: string[], file: string, count?: number): string[] {
  const args = [SIMWEB, "seeds", ...configArgs];
  if (count !== undefined) args.push("--count", String(count));
  const r = spawnSync(process.execPath, args, { encoding: "utf8" });
  if (r.status !== 0) throw new Error(`simweb seeds failed: ${r.stderr}`);
  writeFileSync(file, r.stdout);
  return r.stdout.trim().split("\n").filter(Boolean);
}

export interface CrawlRun {
  code: number | null;
  signal: NodeJS.Signals | null;
  stderr: string;
}

export function startCrawl(args: string[], opts: { env?: Record<string, string> } = {}): { proc: ChildProcess; done: Promise<CrawlRun> } {
  // detached: its own process group, so a test can kill -9 the supervisor and its children at once.
  const proc = spawn(process.execPath, [SHARDCRAWL, "crawl", "--progress", "off", ...args], {
    stdio: ["ignore", "ignore", "pipe"], detached: true, ...(opts.env ? { env: { ...process.env, ...opts.env } } : {}),
  });
  let stderr = "";
  proc.stderr?.on("data", (b: Buffer) => {
    stderr += b.toString();
    if (stderr.length > 256 * 1024) stderr = stderr.slice(-128 * 1024);
  });
  const done = new Promise<CrawlRun>((r) => proc.once("exit", (code, signal) => r({ code, signal, stderr })));
  return { proc, done };
}

export async function runCrawl(args: string[]): Promise<CrawlRun> {
  return startCrawl(args).done;
}

export interface PageLine {
  url: string;
  final_url: string;
  status: number | null;
  error: string | null;
  error_detail?: string;
  digest: string | null;
  bytes: number;
  truncated: boolean;
  warc?: { file: string; offset: number; length: number };
  timings: { total: number };
  fetched_at: string;
}

/** Every line of every page log under out/pages (finished and .open files). */
export function readPageLog(out: string): PageLine[] {
  const dir = join(out, "pages");
  if (!existsSync(dir)) return [];
  const lines: PageLine[] = [];
  for (const f of readdirSync(dir).sort()) {
    if (!f.includes(".jsonl")) continue;
    for (const l of readFileSync(join(dir, f), "utf8").split("\n")) {
      if (!l.trim()) continue;
      try {
        lines.push(JSON.parse(l) as PageLine);
      } catch {
        // a partial last line of a killed writer; repair cuts it at the next start
      }
    }
  }
  return lines;
}

export interface VerifyReport {
  ok: boolean;
  requests: number;
  violations: Record<"gap" | "concurrency" | "disallowed", { count: number; examples: unknown[] }>;
  coverage?: {
    expected: number;
    fetched: number;
    fetchedExpected: number;
    missing: { count: number; examples: string[] };
    unexpected: { count: number; examples: string[] };
    duplicates: { urls: number; extraFetches: number };
  };
}

/** `simweb verify` on a request log; returns its JSON report (exit 1 means violations, still a report). */
export function verifyLog(configArgs: string[], logFile: string, opts: { minGapMs: number; maxConcurrency: number; seedsFile?: string; scope?: string; maxCrawlDelayMs?: number; politenessKey?: "host" | "domain" }): VerifyReport {
  const args = [SIMWEB, "verify", "--log", logFile, ...configArgs, "--min-gap-ms", String(opts.minGapMs), "--max-concurrency", String(opts.maxConcurrency), "--user-agent", TEST_UA];
  // Hosts asking a longer Crawl-delay than the crawl's --max-crawl-delay are skipped, not expected.
  if (opts.maxCrawlDelayMs !== undefined) args.push("--max-crawl-delay", String(opts.maxCrawlDelayMs));
  if (opts.politenessKey) args.push("--politeness-key", opts.politenessKey);
  if (opts.seedsFile) args.push("--seeds", opts.seedsFile, "--scope", opts.scope ?? "domains");
  const r = spawnSync(process.execPath, args, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  if (r.status !== 0 && r.status !== 1) throw new Error(`simweb verify failed (${r.status}): ${r.stderr}`);
  return JSON.parse(r.stdout) as VerifyReport;
}

/** Reads simweb's request log. */
export function readRequestLog(file: string): Array<{ ts: number; end: number; host: string; path: string; status: number; scheme: string }> {
  return readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as { ts: number; end: number; host: string; path: string; status: number; scheme: string });
}

/** Reads every WARC file under out/warc to its end (warcio): target URIs of the response records, and the .open files left. */
export async function readWarcResponses(out: string): Promise<{ responses: Set<string>; openFiles: string[] }> {
  const warcDir = join(out, "warc");
  const names = readdirSync(warcDir);
  const responses = new Set<string>();
  for (const f of names.filter((n) => n.endsWith(".warc.gz"))) {
    for await (const record of new WARCParser(createReadStream(join(warcDir, f)))) {
      await record.readFully(false);
      if (record.warcType === "response") responses.add(record.warcTargetURI!);
    }
  }
  return { responses, openFiles: names.filter((f) => f.endsWith(".open")) };
}
