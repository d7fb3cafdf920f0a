// `shardcrawl crawl` flags -> NodeConfig. The flag names are a contract outside tests rely on.
import { parseArgs } from "node:util";
import { defaultConfig, validateConfig, type NodeConfig, type Scope } from "../node/config.js";

export class UsageError extends Error {}

export const CRAWL_USAGE = `usage: shardcrawl crawl --seeds <file> --out <dir> [flags]

  --seeds <file>              seed URLs, one per line (blank lines and # comments ignored)
  --out <dir>                 output folder (warc/, pages/, redis/); reuse it to resume a crawl
  --max-pages <n>             stop after n pages have been fetched
  --delay <ms>                minimum gap between two requests to one host (default 1000)
  --host-concurrency <n>      requests in flight per host (default 1)
  --max-crawl-delay <ms>      honour robots.txt Crawl-delay up to this (default 60000)
  --user-agent <string>       sent on every request; its product token selects the robots.txt group
  --connect-to <H1:P1:H2:P2>  curl's meaning, repeatable; empty H1 or P1 matches any
  --resolve <host:port:addr>  static DNS answer, repeatable
  --allow-private             permit loopback and private destinations (refused by default)
  --scope <domains|hosts|any> stay inside the seeds' registrable domains (default), hosts, or go anywhere
  --ca-file <pem>             an extra trusted CA
  --max-page-bytes <n>        cut larger bodies while streaming and mark them truncated
  --fetch-timeout <ms>        total time cap of one fetch (default 60000; connect, headers and
                              body-idle timeouts are capped by it too)
  --fetchers <n>              fetcher processes (default from the core count)
  --parsers <n>               parser processes (default from the core count)
  --parser-threads <n>        worker threads per parser process (default 1)
  --fetcher-concurrency <n>   requests in flight per fetcher process (default 256)
  --redis <url>               use this Redis instead of starting one under --out
  --lease-ttl <ms>            a leased URL returns to its queue if not done by then (default 120000)
  --expected-urls <n>         Bloom filter capacity (default 10000000)
  --status-port <n>           /metrics and /status on 127.0.0.1 (default: any free port)
  --progress <auto|on|off>    live progress (auto: only on a terminal)
  --name <node>               node name in output file names (default node0)
`;

function int(name: string, v: string | undefined): number | undefined {
  if (v === undefined) return undefined;
  if (!/^\d+$/.test(v.trim())) throw new UsageError(`--${name}: expected a non-negative integer, got ${JSON.stringify(v)}`);
  return Number(v);
}

export function parseCrawlFlags(argv: string[]): NodeConfig {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        seeds: { type: "string" },
        out: { type: "string" },
        "max-pages": { type: "string" },
        delay: { type: "string" },
        "host-concurrency": { type: "string" },
        "max-crawl-delay": { type: "string" },
        "user-agent": { type: "string" },
        "connect-to": { type: "string", multiple: true },
        resolve: { type: "string", multiple: true },
        "allow-private": { type: "boolean" },
        scope: { type: "string" },
        "ca-file": { type: "string" },
        "max-page-bytes": { type: "string" },
        "fetch-timeout": { type: "string" },
        fetchers: { type: "string" },
        parsers: { type: "string" },
        "parser-threads": { type: "string" },
        "fetcher-concurrency": { type: "string" },
        redis: { type: "string" },
        "lease-ttl": { type: "string" },
        "expected-urls": { type: "string" },
        "status-port": { type: "string" },
        progress: { type: "string" },
        name: { type: "string" },
        help: { type: "boolean", short: "h" },
      },
    });
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  const v = parsed.values;
  if (v.help) throw new UsageError("");
  if (!v.out) throw new UsageError("--out <dir> is required");
  const c = defaultConfig();
  c.out = v.out;
  if (v.seeds !== undefined) c.seeds = v.seeds;
  if (v.redis !== undefined) c.redis = v.redis;
  const maxPages = int("max-pages", v["max-pages"]);
  if (maxPages !== undefined) c.maxPages = maxPages;
  c.delayMs = int("delay", v.delay) ?? c.delayMs;
  c.hostConcurrency = int("host-concurrency", v["host-concurrency"]) ?? c.hostConcurrency;
  c.maxCrawlDelayMs = int("max-crawl-delay", v["max-crawl-delay"]) ?? c.maxCrawlDelayMs;
  if (v["user-agent"] !== undefined) c.userAgent = v["user-agent"];
  c.connectTo = v["connect-to"] ?? [];
  c.resolve = v.resolve ?? [];
  c.allowPrivate = v["allow-private"] ?? false;
  if (v.scope !== undefined) c.scope = v.scope as Scope;
  if (v["ca-file"] !== undefined) c.caFile = v["ca-file"];
  c.maxPageBytes = int("max-page-bytes", v["max-page-bytes"]) ?? c.maxPageBytes;
  const total = int("fetch-timeout", v["fetch-timeout"]);
  if (total !== undefined) {
    const t = c.timeouts;
    c.timeouts = { connectMs: Math.min(t.connectMs, total), headersMs: Math.min(t.headersMs, total), bodyMs: Math.min(t.bodyMs, total), totalMs: total };
  }
  c.fetchers = int("fetchers", v.fetchers) ?? c.fetchers;
  c.parsers = int("parsers", v.parsers) ?? c.parsers;
  c.parserThreads = int("parser-threads", v["parser-threads"]) ?? c.parserThreads;
  c.fetcherConcurrency = int("fetcher-concurrency", v["fetcher-concurrency"]) ?? c.fetcherConcurrency;
  c.expectedUrls = int("expected-urls", v["expected-urls"]) ?? c.expectedUrls;
  c.leaseTtlMs = int("lease-ttl", v["lease-ttl"]) ?? c.leaseTtlMs;
  c.statusPort = int("status-port", v["status-port"]) ?? c.statusPort;
  if (v.progress !== undefined) {
    if (!["auto", "on", "off"].includes(v.progress)) throw new UsageError(`--progress: expected auto, on or off, got ${JSON.stringify(v.progress)}`);
    c.progress = v.progress as NodeConfig["progress"];
  }
  if (v.name !== undefined) c.nodeName = v.name;
  const errors = validateConfig(c);
  if (errors.length) throw new UsageError(errors.join("\n"));
  return c;
}
