// `shardcrawl inspect url`: gathers what one node knows about a URL and decides (url-verdict.ts).
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { compileRobots, type RobotsEntry } from "../../fetch/robots.js";
import { ShardRouter } from "../../shard/shard-spec.js";
import { hostOf, normalizeUrl } from "../../url/normalize.js";
import { registrableDomain } from "../../url/scope.js";
import { ParamStripper } from "../../url/strip-params.js";
import { FrontierReader, matchSpillLine } from "./frontier-reader.js";
import type { NodeTarget } from "./node-target.js";
import { pageLogLinesOfUrl } from "./page-log-scan.js";
import { ExclusionList, FrontierKeys } from "../../frontier/index.js";
import { buildAdmissionChain, DomainHostsFacts, ExclusionFilter, HostBudgetFacts, ScopeFilter, ShardFilter, TrapFilter, type Refusal } from "../../admit/index.js";
import { decideUrlVerdict, type RobotsCheck, type UrlFacts, type UrlVerdict } from "./url-verdict.js";

export interface InspectLimits {
  /** Page-log bytes read, newest first. */
  scanBytes: number;
  /** Queue or list elements read per scan. */
  maxScan: number;
}

export interface UrlReport extends UrlVerdict {
  url: string;
  host: string;
  node: string;
  owner: { node: string; by: "cluster" | "shard-config" | "single-node"; shardKey?: string; clusterFile?: string };
  facts: Omit<UrlFacts, "url" | "owner" | "node">;
  scanned: { pageLogBytes: number; pageLogComplete: boolean };
}

/** Normalizes the operator's URL the way the crawl does, so it matches the frontier's records. */
export function normalizeForInspect(raw: string): { url: string; host: string } {
  const url = normalizeUrl(raw.trim());
  const host = url ? hostOf(url) : null;
  if (!url || !host) throw new Error(`inspect: not an http(s) URL: ${JSON.stringify(raw)}`);
  return { url, host };
}

/** Robots verdict of the node's cached robots.txt for its own user agent. */
export async function robotsCheck(reader: FrontierReader, origin: string, url: string, userAgent: string, maxCrawlDelayMs: number): Promise<RobotsCheck> {
  const cached = await reader.robots(origin);
  if (!cached) return { verdict: "not-cached" };
  const compiled = compileRobots(cached.entry as RobotsEntry, userAgent, { maxCrawlDelayMs });
  return { verdict: compiled.isAllowed(url) ? "allowed" : "disallowed", kind: cached.entry.kind };
}

function findInSpillFiles(out: string, url: string, maxBytes: number): { file: string; tier: number } | null {
  const dir = join(out, "spill");
  if (!existsSync(dir)) return null;
  let read = 0;
  for (const f of readdirSync(dir).filter((n) => n.endsWith(".txt.gz")).sort()) {
    const p = join(dir, f);
    read += statSync(p).size;
    if (read > maxBytes) return null;
    let text: string;
    try {
      text = gunzipSync(readFileSync(p)).toString("utf8");
    } catch {
      continue; // a file being written: its last member may be incomplete
    }
    for (const line of text.split("\n")) {
      const hit = matchSpillLine(line, url);
      if (hit) return { file: f, ...hit };
    }
  }
  return null;
}

export async function inspectUrl(target: NodeTarget, rawUrl: string, limits: InspectLimits): Promise<UrlReport> {
  const { url, host } = normalizeForInspect(rawUrl);
  const { config } = target;
  const shard = config.shard;
  let owner: UrlReport["owner"] = { node: target.node, by: "single-node" };
  if (shard) {
    owner = {
      node: new ShardRouter(shard).ownerOfHost(host), by: target.cluster ? "cluster" : "shard-config", shardKey: shard.key,
      ...(target.cluster ? { clusterFile: target.cluster.file } : {}),
    };
  }
  const reader = await FrontierReader.open(target.redis, config.prefix);
  const hostState = await reader.hostFields(host);
  const origin = hostState.o;
  const leases = await reader.leasesOf(host, origin);
  const lease = leases.find((l) => l.url === url) ?? null;
  const parsing = lease ? null : await reader.inParseStage(url, limits.maxScan);
  const queued = lease || parsing ? null : (await reader.findQueued(host, origin, url, limits.maxScan)).at;
  const scan = target.out ? pageLogLinesOfUrl(target.out, url, { limit: 1, maxBytes: limits.scanBytes }) : { lines: [], scannedBytes: 0, complete: false };
  let spilled: UrlFacts["spilled"] = null;
  const inList = await reader.inSpillList(url, limits.maxScan);
  if (inList.found) spilled = { where: "redis", tier: inList.found.tier };
  else if (target.out) {
    const onDisk = findInSpillFiles(target.out, url, limits.scanBytes);
    if (onDisk) spilled = { where: "disk", file: onDisk.file, tier: onDisk.tier };
  }
  const shed = (await reader.shedEntries((e) => e.url === url))[0] ?? null;
  const flow = await reader.flowConfig();
  const budget = Number(flow.hbud ?? config.hostPageBudget ?? 0);
  const admitted = Number(hostState.A ?? 0);
  const dcap = config.maxHostsPerDomain ?? 0;
  const domain = registrableDomain(host);
  const domainCount = dcap > 0 && hostState.q === undefined ? await reader.domainHosts(domain) : 0;
  const clean = new ParamStripper(config.stripParams ?? []).clean(url);
  const scope = await reader.scopeOf(host);
  const exclusions = await new ExclusionList(target.redis, new FrontierKeys(config.prefix)).current();
  // The node's admission chain over what its Redis holds: the same filters in the same order as
  // the crawl, the Lua-decided ones built from the host's counts.
  const trap = new TrapFilter(config.urlFilters);
  const chain = buildAdmissionChain([
    scope && new ScopeFilter({ mode: scope.mode, has: (key) => scope.inScope && (scope.key === undefined || key === scope.key) }),
    shard && new ShardFilter(new ShardRouter(shard)),
    new ExclusionFilter(() => exclusions),
    !trap.empty && trap,
    new HostBudgetFacts(() => admitted, budget),
    new DomainHostsFacts(() => ({ domain, hosts: domainCount, known: hostState.q !== undefined }), dcap),
  ]);
  const answers = chain.explain(url, host);
  const refusalBy = (name: string): Refusal | undefined => answers.find((a) => a.filter === name)?.verdict;
  const trapRefusal = refusalBy("trap");
  const facts: UrlFacts = {
    url, owner: owner.node, node: target.node, lease, parsing, queued, lastOutcome: scan.lines[0] ?? null, spilled, shed,
    seen: await reader.mightHaveSeen(url),
    scope,
    filter: trapRefusal ? trapRefusal.reason.replace(/^trap:/, "") : null,
    hostBudget: refusalBy("host-budget") ? { admitted, budget } : null,
    domainHosts: refusalBy("domain-hosts") ? { domain, hosts: domainCount, cap: dcap } : null,
    strippedTo: clean !== url ? clean : null,
    robots: await robotsCheck(reader, new URL(url).origin, url, config.userAgent, config.maxCrawlDelayMs),
    excluded: exclusions.match(url, host) ?? null,
    admission: answers.find((a) => a.verdict !== undefined)?.verdict ?? null,
  };
  const verdict = decideUrlVerdict(facts);
  const { url: _u, owner: _o, node: _n, ...rest } = facts;
  return {
    url, host, node: target.node, owner, ...verdict, facts: rest,
    scanned: { pageLogBytes: scan.scannedBytes, pageLogComplete: scan.complete },
  };
}
