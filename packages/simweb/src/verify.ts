// `simweb verify`: reads a request log and checks politeness (gap and concurrency per host, no
// robots-disallowed fetches) and, given seeds, coverage against World.expected().
import { createReadStream } from "node:fs";
import { createInterface } from "node:readline";
import type { World } from "./world.js";
import type { LogEntry } from "./log.js";
import type { Scope } from "./expected.js";
import { canonicalUrl } from "./normalize.js";

export interface VerifyOptions {
  logFile: string;
  minGapMs: number;
  maxConcurrency: number;
  /** Robots verdicts for this agent; default: each request's own User-Agent. */
  userAgent?: string;
  seeds?: string[];
  scope?: Scope;
  maxExamples?: number;
  /** The crawler's --max-crawl-delay: hosts asking for more are not expected to be crawled. */
  maxCrawlDelayMs?: number;
  /** Cap for the expected-set walk. */
  maxPages?: number;
  /**
   * What the gap and concurrency rules apply to: each host (default), or each registrable domain
   * across its hosts (the crawler's --politeness-key domain).
   */
  politenessKey?: "host" | "domain";
}

/** The politeness key of a logged host: itself, or its registrable domain (simweb's d<N>.test, else the last two labels). */
export function politenessKeyOf(world: World, host: string, key: "host" | "domain"): string {
  if (key === "host") return host;
  const h = world.hostByName(host);
  if (h) return h.info.domain;
  return host.split(".").slice(-2).join(".");
}

interface Finding<T> {
  count: number;
  examples: T[];
}

export interface VerifyReport {
  ok: boolean;
  log: string;
  requests: number;
  badLines: number;
  hosts: number;
  rules: { minGapMs: number; maxConcurrency: number; userAgent: string | null; politenessKey: "host" | "domain" };
  violations: {
    gap: Finding<{ host: string; prevEnd: number; ts: number; gapMs: number; windowStarts?: number }>;
    concurrency: Finding<{ host: string; ts: number; concurrent: number }>;
    disallowed: Finding<{ host: string; path: string; ts: number }>;
  };
  coverage?: {
    scope: Scope;
    expected: number;
    fetched: number;
    attempted: number;
    fetchedExpected: number;
    ratio: number;
    missing: Finding<string>;
    unexpected: Finding<string>;
    trapFetches: number;
    duplicates: { urls: number; extraFetches: number };
    expectedTruncated: boolean;
  };
}

type Interval = [start: number, end: number];

function push<T>(f: Finding<T>, ex: T, max: number): void {
  f.count++;
  if (f.examples.length < max) f.examples.push(ex);
}

export async function verifyLog(world: World, opts: VerifyOptions): Promise<VerifyReport> {
  const max = opts.maxExamples ?? 10;
  const report: VerifyReport = {
    ok: true, log: opts.logFile, requests: 0, badLines: 0, hosts: 0,
    rules: { minGapMs: opts.minGapMs, maxConcurrency: opts.maxConcurrency, userAgent: opts.userAgent ?? null, politenessKey: opts.politenessKey ?? "host" },
    violations: { gap: { count: 0, examples: [] }, concurrency: { count: 0, examples: [] }, disallowed: { count: 0, examples: [] } },
  };
  const perHost = new Map<string, Interval[]>();
  /** canonical URL -> [successful fetches, attempts] */
  const fetches = new Map<string, [number, number]>();
  let trapFetches = 0;

  const rl = createInterface({ input: createReadStream(opts.logFile, "utf8"), crlfDelay: Infinity });
  for await (const line of rl) {
    if (line.trim() === "") continue;
    let e: LogEntry;
    try {
      e = JSON.parse(line) as LogEntry;
      if (typeof e.host !== "string" || typeof e.ts !== "number" || typeof e.path !== "string") throw new Error("shape");
    } catch {
      report.badLines++;
      continue;
    }
    report.requests++;
    const end = typeof e.end === "number" ? e.end : e.ts;
    const key = politenessKeyOf(world, e.host, opts.politenessKey ?? "host");
    let list = perHost.get(key);
    if (!list) perHost.set(key, (list = []));
    list.push([e.ts, end]);
    const h = world.hostByName(e.host);
    if (!h) continue;
    const resource = world.route(h, e.path);
    if (resource.kind === "robots" || resource.kind === "robots-moved") continue; // robots.txt is never "disallowed"
    const ua = opts.userAgent ?? e.ua ?? "";
    if (!world.robots.allows(h, decodePath(e.path), ua)) {
      push(report.violations.disallowed, { host: e.host, path: e.path, ts: e.ts }, max);
    }
    if (opts.seeds) {
      if (resource.kind === "sitemap" || resource.kind === "static") continue;
      if (resource.kind === "trap") trapFetches++;
      const url = canonicalUrl(`${e.scheme}://${e.host}${e.path}`);
      if (!url) continue;
      const ok = e.status >= 200 && e.status < 500 && e.status !== 429 ? 1 : 0;
      const f = fetches.get(url);
      if (f) {
        f[0] += ok;
        f[1]++;
      } else fetches.set(url, [ok, 1]);
    }
  }
  report.hosts = perHost.size;

  for (const [host, list] of perHost) {
    list.sort((a, b) => a[0] - b[0]);
    if (opts.maxConcurrency <= 1) {
      for (let i = 1; i < list.length; i++) {
        const prev = list[i - 1] as Interval;
        const cur = list[i] as Interval;
        const gap = cur[0] - prev[1];
        if (gap < opts.minGapMs) push(report.violations.gap, { host, prevEnd: prev[1], ts: cur[0], gapMs: gap }, max);
      }
    } else {
      for (let i = opts.maxConcurrency; i < list.length; i++) {
        const first = list[i - opts.maxConcurrency] as Interval;
        const cur = list[i] as Interval;
        if (cur[0] - first[0] < opts.minGapMs) {
          push(report.violations.gap, { host, prevEnd: first[0], ts: cur[0], gapMs: cur[0] - first[0], windowStarts: opts.maxConcurrency + 1 }, max);
        }
      }
    }
    // Sweep: ends before starts at the same instant (a request ending at t does not overlap one starting at t).
    const events: Array<[number, number]> = [];
    for (const [s, e] of list) events.push([s, 1], [Math.max(s, e), -1]);
    events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let active = 0;
    for (const [t, d] of events) {
      active += d;
      if (d > 0 && active > opts.maxConcurrency) push(report.violations.concurrency, { host, ts: t, concurrent: active }, max);
    }
  }

  if (opts.seeds) {
    const scope = opts.scope ?? "domains";
    const exp = world.expected({ seeds: opts.seeds, scope, userAgent: opts.userAgent ?? "shardcrawl", maxPages: opts.maxPages,
      ...(opts.maxCrawlDelayMs !== undefined ? { maxCrawlDelayMs: opts.maxCrawlDelayMs } : {}) });
    const missing: Finding<string> = { count: 0, examples: [] };
    const unexpected: Finding<string> = { count: 0, examples: [] };
    let fetched = 0;
    let fetchedExpected = 0;
    let dupUrls = 0;
    let extra = 0;
    for (const [url, [ok]] of fetches) {
      if (ok > 0) {
        fetched++;
        if (exp.urls.has(url)) fetchedExpected++;
        else push(unexpected, url, max);
      }
      if (ok > 1) {
        dupUrls++;
        extra += ok - 1;
      }
    }
    for (const url of exp.urls) {
      const f = fetches.get(url);
      if (!f || f[0] === 0) push(missing, url, max);
    }
    report.coverage = {
      scope, expected: exp.urls.size, fetched, attempted: fetches.size, fetchedExpected,
      ratio: exp.urls.size === 0 ? 1 : fetchedExpected / exp.urls.size,
      missing, unexpected, trapFetches, duplicates: { urls: dupUrls, extraFetches: extra }, expectedTruncated: exp.truncated,
    };
  }
  const v = report.violations;
  report.ok = v.gap.count === 0 && v.concurrency.count === 0 && v.disallowed.count === 0;
  return report;
}

function decodePath(p: string): string {
  const u = canonicalUrl(p, "http://x.invalid");
  if (!u) return p;
  const url = new URL(u);
  return url.pathname + url.search;
}
