// `shardcrawl inspect host <host>` and `shardcrawl inspect url <url>`: what one node knows about a
// host or a URL, read from its Redis and its page log without changing anything.
import { inspectHost, type HostReport } from "./inspect/inspect-host.js";
import { inspectUrl, normalizeForInspect, type UrlReport } from "./inspect/inspect-url.js";
import { openTarget } from "./inspect/node-target.js";
import { URL_EXIT_CODES } from "./inspect/url-verdict.js";
import { formatDuration } from "../node/progress.js";
import { UsageError } from "./flags.js";

function int(name: string, v: string | undefined, dflt: number): number {
  if (v === undefined) return dflt;
  if (!/^\d+$/.test(v) || Number(v) < 1) throw new UsageError(`--${name}: expected a positive integer, got ${JSON.stringify(v)}`);
  return Number(v);
}

const iso = (ms: number | null) => (ms === null ? "-" : new Date(ms).toISOString());

export function formatHostReport(r: HostReport, now = Date.now()): string {
  const f = r.frontier;
  const l = r.limits;
  const out = [
    `host ${r.host} on node ${r.node}${r.owner !== r.node ? ` (owned by ${r.owner}!)` : ""}${r.known ? "" : " -- unknown to this node's frontier"}`,
    `  origin ${r.origin ?? "-"}; scope ${r.scope ? `${r.scope.inScope ? "in" : "OUT OF"} scope (${r.scope.mode}${r.scope.key ? ` ${r.scope.key}` : ""})` : "not stored"}`,
    `frontier: ${f.queued} queued (by tier ${f.byTier.map((n, t) => `${t}:${n}`).join(" ")}), ${f.leases.length} leased`,
    `  next start ${f.nextStartAt === null ? "-" : `${iso(f.nextStartAt)} (${f.nextStartAt <= now ? "due now" : `in ${formatDuration(f.nextStartAt - now)}`})`}${f.inReadySchedule ? "" : ", not in the ready schedule"}`,
    ...f.next.map((t) => `  tier ${t.tier} next: ${t.urls.join("  ")}`),
    ...f.leases.map((x) => `  leased ${x.url} (until ${iso(x.expiresAt)})`),
    `limits: ${l.inFlight} in flight of ${l.concurrency} (hard ${l.hardConcurrency}, adaptive ${l.adaptiveConcurrency ?? "-"}), gap ${l.gapMs} ms between starts` +
      ` (crawl-delay ${l.crawlDelayMs ?? "-"} ms, back-off x${l.delayMultiplier}), baseline latency ${l.baselineLatencyMs ?? "-"} ms`,
    `pages: ${r.budget.fetched} fetched, ${r.budget.errors} failed${Object.keys(r.budget.errorsByClass).length ? ` (${Object.entries(r.budget.errorsByClass).map(([k, v]) => `${k} ${v}`).join(", ")})` : ""}, ${r.budget.retries} retries, ${r.budget.requeues} requeues; ` +
      `page budget ${r.budget.budget === null ? "none" : `${r.budget.admitted} of ${r.budget.budget} URLs admitted`}`,
    `robots.txt ${r.robots.origin}: ${r.robots.cached ? `${r.robots.kind}, fetched ${r.robots.fetchedAt}, expires in ${formatDuration(r.robots.expiresInMs ?? 0)}` : "not cached"}`,
  ];
  const o = r.robots.outage;
  if (o) {
    out.push(`  robots.txt OUTAGE since ${iso(o.firstFailureAt)}: ${o.tries} failed tries, last ${iso(o.lastTryAt)} (${o.lastError}); ` +
      `next try ${iso(o.nextTryAt)} (${o.nextTryAt <= now ? "due now" : `in ${formatDuration(o.nextTryAt - now)}`})` +
      `${o.waiting ? "; the host's URLs wait queued until then" : "; crawling on the last cached copy"}`);
  }
  if (r.robots.group) {
    out.push(`  rules for ${r.robots.userAgentToken} (group ${r.robots.group.matched}):${r.robots.group.rules.length ? "" : " none"}`);
    for (const rule of r.robots.group.rules) out.push(`    ${rule}`);
  }
  out.push(`recent outcomes (${r.recent.length}; page log read ${r.scanned.pageLogBytes} bytes${r.scanned.pageLogComplete ? "" : ", not all of it"}):`);
  for (const p of r.recent) out.push(`  ${p.fetched_at} ${p.error ?? p.status} ${p.url}${p.error_detail ? ` (${p.error_detail})` : ""}`);
  if (r.shed.length) {
    out.push(`recently shed or refused for room (${r.shed.length}):`);
    for (const s of r.shed) out.push(`  ${iso(s.at)} ${s.reason} ${s.url}`);
  }
  return out.join("\n");
}

export function formatUrlReport(r: UrlReport): string {
  const f = r.facts;
  return [
    `${r.url}`,
    `  owner ${r.owner.node} (${r.owner.by}${r.owner.shardKey ? `, shard key ${r.owner.shardKey}` : ""}); inspected on ${r.node}`,
    `  ${r.status.toUpperCase()}${r.reason ? ` [${r.reason}]` : ""}: ${r.detail}`,
    `  checks: seen filter ${f.seen ? "maybe seen" : "never seen"}; robots.txt ${f.robots.verdict}; scope ${f.scope ? (f.scope.inScope ? "in" : "out") : "not stored"}; ` +
      `URL filters ${f.filter ?? "pass"}; host page budget ${f.hostBudget ? "spent" : "ok"}`,
    `  page log read ${r.scanned.pageLogBytes} bytes${r.scanned.pageLogComplete ? "" : " (not all of it: raise --scan-bytes)"}`,
  ].join("\n");
}

export async function runInspectCommand(v: { out?: string; redis?: string; cluster?: string; json?: boolean; recent?: string; "scan-bytes"?: string; "max-scan"?: string }, positionals: string[]): Promise<number> {
  const [what, subject, ...extra] = positionals;
  if ((what !== "host" && what !== "url") || !subject || extra.length) throw new UsageError("inspect: expected `inspect host <host>` or `inspect url <url>`");
  if (!v.out && !v.redis && !v.cluster) throw new UsageError("inspect: give --out <dir>, --redis <url> or --cluster <file>");
  const limits = { scanBytes: int("scan-bytes", v["scan-bytes"], 256 * 1024 * 1024), maxScan: int("max-scan", v["max-scan"], 1_000_000) };
  let host: string;
  try {
    host = what === "url" ? normalizeForInspect(subject).host : subject.trim().toLowerCase();
  } catch (e) {
    throw new UsageError((e as Error).message);
  }
  const target = await openTarget({ ...(v.out ? { out: v.out } : {}), ...(v.redis ? { redis: v.redis } : {}), ...(v.cluster ? { cluster: v.cluster } : {}) }, host);
  try {
    if (what === "host") {
      const r = await inspectHost(target, subject, { ...limits, recent: int("recent", v.recent, 10) });
      process.stdout.write(`${v.json ? JSON.stringify(r) : formatHostReport(r)}\n`);
      return r.known ? 0 : 8;
    }
    const r = await inspectUrl(target, subject, limits);
    process.stdout.write(`${v.json ? JSON.stringify(r) : formatUrlReport(r)}\n`);
    return URL_EXIT_CODES[r.status];
  } finally {
    await target.close();
  }
}
