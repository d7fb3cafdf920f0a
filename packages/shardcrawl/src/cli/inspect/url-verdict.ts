// "Why was this URL (not) crawled?" as a pure decision over facts gathered from one node
// (inspect-url.ts gathers them). Records win: what the node did (leased, queued, page log, spill,
// shed log) is reported as it happened; refusals that leave no record are the first refusal of the
// node's admission chain (admit/), run by inspect-url.ts over the node's stored config and state.
import type { PageLogLine } from "../../shared/types.js";
import type { Exclusion } from "../../frontier/index.js";
import { exclusionRefusal, type Refusal } from "../../admit/index.js";
import type { LeaseInfo, QueuedAt, ScopeVerdict, ShedEntry } from "./frontier-reader.js";

export type UrlStatus = "fetched" | "failed" | "leased" | "parsing" | "queued" | "refused" | "shed" | "seen" | "not-seen" | "other-node";

/** The documented exit code of `shardcrawl inspect url` for each status (docs/inspect.md). */
export const URL_EXIT_CODES: Record<UrlStatus, number> = {
  fetched: 0, leased: 3, parsing: 3, queued: 3, refused: 4, shed: 5, failed: 6, seen: 7, "not-seen": 8, "other-node": 9,
};

export interface RobotsCheck {
  /** "allowed" / "disallowed" by the cached robots.txt for our user agent; "not-cached" when the node has none. */
  verdict: "allowed" | "disallowed" | "not-cached";
  kind?: "rules" | "allow-all" | "disallow-all";
}

export interface UrlFacts {
  url: string;
  owner: string;
  node: string;
  lease: LeaseInfo | null;
  /** Fetched, its page waiting in the parse stage (not in the page log yet). */
  parsing: { id: string; status: number; fetchedAt: string; consumer: string | null } | null;
  queued: QueuedAt | null;
  /** Newest page-log line of the URL within the scanned part of the log. */
  lastOutcome: PageLogLine | null;
  spilled: { where: "redis" | "disk"; file?: string; tier: number } | null;
  shed: ShedEntry | null;
  seen: boolean;
  scope: ScopeVerdict | null;
  /** First URL filter (spider-trap defence) that refuses the URL, e.g. "path-depth". */
  filter: string | null;
  /** The host has used up its page budget (URLs ever admitted >= budget). */
  hostBudget: { admitted: number; budget: number } | null;
  /** A host never admitted whose registrable domain already holds the cap's number of hosts. */
  domainHosts?: { domain: string; hosts: number; cap: number } | null;
  /** The URL as the crawl spells it when normalization removes session-id or tracking parameters from it. */
  strippedTo?: string | null;
  robots: RobotsCheck;
  /** The site owners' opt-out entry that covers the URL (frontier/exclusions.ts), if any. */
  excluded?: Exclusion | null;
  /** The first filter of the admission chain that refuses the URL (null: every filter admits it). */
  admission?: Refusal | null;
}

export interface UrlVerdict {
  status: UrlStatus;
  /** Machine-readable reason for refused/shed/failed ("robots", "out-of-scope", "trap:path-depth", "host-budget", "shed:host-full", "spilled", an error class...). */
  reason?: string;
  /** One sentence for people. */
  detail: string;
}

function isRobotsError(e: string | null): boolean {
  return e === "robots-disallowed" || e === "robots-unavailable";
}

export function decideUrlVerdict(f: UrlFacts): UrlVerdict {
  if (f.owner !== f.node) return { status: "other-node", detail: `node ${f.owner} owns this URL's host, not ${f.node}: inspect it there` };
  if (f.lease) return { status: "leased", detail: `being fetched now (lease ${f.lease.id}, tier ${f.lease.tier})` };
  if (f.parsing) {
    const by = f.parsing.consumer ? `being parsed by ${f.parsing.consumer}` : "waiting in the parse queue";
    return { status: "parsing", reason: String(f.parsing.status), detail: `fetched at ${f.parsing.fetchedAt} (HTTP ${f.parsing.status}), ${by} (page ${f.parsing.id})` };
  }
  if (f.excluded) return { status: "refused", reason: "excluded", detail: exclusionRefusal(f.excluded).detail };
  if (f.queued) {
    const robots = f.robots.verdict === "disallowed" ? "; robots.txt disallows it, so it will be refused when its turn comes" : "";
    return { status: "queued", detail: `queued in tier ${f.queued.tier} at position ${f.queued.position} (${f.queued.ahead} URLs of its host go first)${robots}` };
  }
  const o = f.lastOutcome;
  if (o) {
    if (isRobotsError(o.error)) return { status: "refused", reason: "robots", detail: `refused by robots.txt at ${o.fetched_at} (${o.error})` };
    if (o.error === null) {
      const where = o.warc ? ` in ${o.warc.file} at offset ${o.warc.offset}` : "";
      return { status: "fetched", reason: String(o.status), detail: `fetched at ${o.fetched_at}: HTTP ${o.status}${where}` };
    }
    return { status: "failed", reason: o.error, detail: `failed at ${o.fetched_at}: ${o.error}${o.error_detail ? ` (${o.error_detail})` : ""}` };
  }
  if (f.spilled) return { status: "shed", reason: "spilled", detail: `shed to the spill store (${f.spilled.where}${f.spilled.file ? ` ${f.spilled.file}` : ""}); re-admitted when the frontier has room` };
  if (f.shed) return { status: "shed", reason: f.shed.reason, detail: `${f.shed.reason.startsWith("shed:") ? "shed from its queue" : "refused for want of room"} (${f.shed.reason.split(":")[1]}) at ${new Date(f.shed.at).toISOString()}` };
  if (!f.seen) {
    // Never admitted: normalization first, then the admission chain's first refusal (in the crawl's order).
    if (f.strippedTo) return { status: "refused", reason: "trap:params-stripped", detail: `crawled as ${f.strippedTo}: session-id and tracking parameters are removed in normalization (--strip-params)` };
    if (f.admission) return { status: "refused", reason: f.admission.reason, detail: f.admission.detail };
    return { status: "not-seen", detail: "never discovered by this node (not in its seen filter)" };
  }
  if (f.robots.verdict === "disallowed") return { status: "refused", reason: "robots", detail: "seen, and the cached robots.txt disallows it (its page-log line is older than the part of the log read)" };
  return { status: "seen", detail: "in the seen filter but not queued, leased or in the recent page log: fetched long ago, shed before the shed log's window, or a seen-filter false positive" };
}
