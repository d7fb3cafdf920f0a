#!/usr/bin/env node
// simweb CLI: serve | seeds | expected | verify (see packages/simweb/README.md). Exit codes: 0 ok,
// 1 verify found violations (or an unexpected error), 2 bad usage or config.
import { parseArgs } from "node:util";
import { readFileSync } from "node:fs";
import { makeConfig, ConfigError, type SimwebConfig } from "./config.js";
import { World } from "./world.js";
import { startSimweb } from "./server.js";
import { ScaledClock } from "./clock.js";
import { verifyLog } from "./verify.js";
import type { Scope } from "./expected.js";
import { realwebMain } from "./realweb.js";

const USAGE = `usage:
  simweb serve    [config flags] [--bind 127.0.0.1] [--port N] [--https-port N] [--log FILE] [--ca-dir DIR] [--time-scale X]
                  [--dns-port N] [--dns-log FILE]  (DNS server and per-host addresses: config "dns", see docs/real-web.md)
  simweb seeds    [config flags] [--count N]
  simweb expected [config flags] --seeds FILE [--scope domains|hosts|any] [--user-agent UA] [--max-pages N]
  simweb realweb  --corpus DIR [--hosts N] [--templates-per-host N] [--external-in-scope F] [--seed N] [--bind IP] [--port N] [--https-port N] [--ca-dir DIR] [--seeds-out FILE --scheme http|https] [--connection-close]
  simweb verify   --log FILE [config flags] [--min-gap-ms N] [--max-concurrency N] [--politeness-key host|domain] [--user-agent UA] [--seeds FILE --scope S]
                  [--max-crawl-delay MS]  (expected/verify: hosts asking a longer Crawl-delay are skipped)
config flags: [--preset default|polite|hostile|tiny] [--config file.json] [--seed N] [--hosts N] [--page-cap N]
`;

const options = {
  preset: { type: "string" }, config: { type: "string" }, seed: { type: "string" }, hosts: { type: "string" },
  "page-cap": { type: "string" }, bind: { type: "string" }, port: { type: "string" }, "https-port": { type: "string" },
  log: { type: "string" }, "ca-dir": { type: "string" }, "time-scale": { type: "string" }, count: { type: "string" },
  seeds: { type: "string" }, scope: { type: "string" }, "user-agent": { type: "string" }, "max-pages": { type: "string" },
  "min-gap-ms": { type: "string" }, "max-concurrency": { type: "string" }, help: { type: "boolean" },
  "max-crawl-delay": { type: "string" },
  "politeness-key": { type: "string" },
  "dns-port": { type: "string" }, "dns-log": { type: "string" },
} as const;

class UsageError extends Error {}

function politenessKeyFlag(v: string | undefined): "host" | "domain" {
  if (v === undefined || v === "host" || v === "domain") return v ?? "host";
  throw new UsageError(`--politeness-key: expected host or domain, got ${JSON.stringify(v)}`);
}

function int(v: string | undefined, name: string, min = 0): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (!Number.isInteger(n) || n < min) throw new UsageError(`--${name} must be an integer >= ${min}, got "${v}"`);
  return n;
}

function configFrom(v: Record<string, string | boolean | undefined>): SimwebConfig {
  let overrides: Partial<SimwebConfig> & { preset?: string } = {};
  if (typeof v.config === "string") {
    try {
      overrides = JSON.parse(readFileSync(v.config, "utf8")) as typeof overrides;
    } catch (err) {
      throw new UsageError(`cannot read --config ${v.config}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  if (typeof v.preset === "string") overrides.preset = v.preset;
  const seed = int(v.seed as string | undefined, "seed");
  if (seed !== undefined) overrides.seed = seed;
  const hosts = int(v.hosts as string | undefined, "hosts", 1);
  if (hosts !== undefined) overrides.hosts = hosts;
  const cap = int(v["page-cap"] as string | undefined, "page-cap", 1);
  if (cap !== undefined) overrides.hostPageCap = cap;
  return makeConfig(overrides);
}

function readSeeds(file: string): string[] {
  try {
    return readFileSync(file, "utf8").split("\n").map((l) => l.trim()).filter((l) => l !== "" && !l.startsWith("#"));
  } catch (err) {
    throw new UsageError(`cannot read --seeds ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

function scopeOf(v: string | undefined): Scope {
  const s = v ?? "domains";
  if (s !== "domains" && s !== "hosts" && s !== "any") throw new UsageError(`--scope must be domains, hosts or any, got "${s}"`);
  return s;
}

async function main(argv: string[]): Promise<number> {
  const [cmd, ...rest] = argv;
  // Real pages from a corpus, links rewritten onto served hosts (realweb.ts): its own flags.
  if (cmd === "realweb") return realwebMain(rest);
  const { values: v } = parseArgs({ args: rest, options, strict: true, allowPositionals: false });
  if (!cmd || v.help || cmd === "help" || cmd === "--help") {
    process.stdout.write(USAGE);
    return cmd ? 0 : 2;
  }
  const config = configFrom(v);
  switch (cmd) {
    case "serve": {
      const scale = v["time-scale"] === undefined ? undefined : Number(v["time-scale"]);
      if (scale !== undefined && !(scale > 0)) throw new UsageError("--time-scale must be > 0");
      const sim = await startSimweb({
        config,
        bind: v.bind ?? "127.0.0.1",
        httpPort: int(v.port, "port") ?? 0,
        httpsPort: int(v["https-port"], "https-port") ?? 0,
        logFile: v.log,
        caDir: v["ca-dir"],
        clock: scale === undefined ? undefined : new ScaledClock(scale, config.timeOriginMs),
        ...(v["dns-port"] !== undefined ? { dnsPort: int(v["dns-port"], "dns-port") } : {}),
        ...(v["dns-log"] !== undefined ? { dnsLogFile: v["dns-log"] } : {}),
      });
      if (v["dns-port"] !== undefined && sim.dnsPort === undefined) throw new UsageError('--dns-port needs a name service: config "dns": { "addresses": N } with N >= 1');
      process.stdout.write(`${JSON.stringify({ http: sim.httpPort, https: sim.httpsPort, ca: sim.caFile, hosts: sim.world.hostCount(), ...(sim.dnsPort !== undefined ? { dns: sim.dnsPort, addresses: sim.addresses } : {}) })}\n`);
      await new Promise<void>((resolve) => {
        const stop = (): void => resolve();
        process.once("SIGTERM", stop);
        process.once("SIGINT", stop);
      });
      await sim.close();
      return 0;
    }
    case "seeds": {
      const world = new World(config);
      process.stdout.write(world.seeds(int(v.count, "count", 0)).join("\n") + "\n");
      return 0;
    }
    case "expected": {
      if (!v.seeds) throw new UsageError("expected needs --seeds FILE");
      const world = new World(config);
      const res = world.expected({ seeds: readSeeds(v.seeds), scope: scopeOf(v.scope), userAgent: v["user-agent"] ?? "shardcrawl", maxPages: int(v["max-pages"], "max-pages", 1),
        ...(v["max-crawl-delay"] !== undefined ? { maxCrawlDelayMs: int(v["max-crawl-delay"], "max-crawl-delay") } : {}) });
      const out = [...res.urls];
      process.stdout.write(out.length ? out.join("\n") + "\n" : "");
      process.stderr.write(`${JSON.stringify({ urls: res.urls.size, disallowed: res.disallowed, trapsExcluded: res.trapsExcluded, unserved: res.unserved, outOfScope: res.outOfScope, truncated: res.truncated })}\n`);
      return 0;
    }
    case "verify": {
      if (!v.log) throw new UsageError("verify needs --log FILE");
      const world = new World(config);
      const report = await verifyLog(world, {
        logFile: v.log,
        minGapMs: int(v["min-gap-ms"], "min-gap-ms") ?? 1000,
        maxConcurrency: int(v["max-concurrency"], "max-concurrency", 1) ?? 1,
        userAgent: v["user-agent"],
        seeds: v.seeds ? readSeeds(v.seeds) : undefined,
        scope: v.seeds ? scopeOf(v.scope) : undefined,
        maxPages: int(v["max-pages"], "max-pages", 1),
        ...(v["max-crawl-delay"] !== undefined ? { maxCrawlDelayMs: int(v["max-crawl-delay"], "max-crawl-delay") } : {}),
        politenessKey: politenessKeyFlag(v["politeness-key"]),
      });
      process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      return report.ok ? 0 : 1;
    }
    default:
      throw new UsageError(`unknown command "${cmd}"\n${USAGE}`);
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (err: unknown) => {
    const usage = err instanceof UsageError || err instanceof ConfigError || (err instanceof TypeError && "code" in err && String(err.code).startsWith("ERR_PARSE_ARGS"));
    process.stderr.write(`simweb: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = usage ? 2 : 1;
  },
);
