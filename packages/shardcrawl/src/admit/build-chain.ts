// The node's admission chain in its one order. Every entry point builds it from the parts it has
// and runs the same filters in the same order:
//   scope > shard > exclusions > trap > host-budget > domain-hosts   (then robots, crawl-delay at fetch time)
// - parsed links and redirects: scope in the parser task, then shard routing, exclusions and trap
//   filters on the parser's main thread before the ack (admit/batch-admission.ts);
// - seeds and inbox ingest: shard routing (a URL another node owns goes to its outbox), exclusions
//   and trap filters (the same BatchAdmission);
// - the frontier's add_links script then decides host-budget and domain-hosts atomically;
// - the fetcher: exclusions again at lease time (a site may opt out while its URLs are queued),
//   then robots.txt and Crawl-delay (admit/fetch-time.ts);
// - `inspect url`: all of them, with the Lua-decided ones built from the node's Redis facts.
import { AdmissionChain } from "./chain.js";
import type { AdmissionCounts } from "./admission-counts.js";
import type { AdmissionFilter, FilterName } from "./verdict.js";

export const CHAIN_ORDER: readonly FilterName[] = ["scope", "shard", "exclusions", "trap", "host-budget", "domain-hosts"];
/** Decided when the host's robots.txt is known, after the chain admitted the URL. */
export const FETCH_TIME_ORDER: readonly FilterName[] = ["robots", "crawl-delay"];

/** Builds a chain from the filters given, put in CHAIN_ORDER whatever order they come in. */
export function buildAdmissionChain(filters: ReadonlyArray<AdmissionFilter | undefined | null | false>, counts?: AdmissionCounts): AdmissionChain {
  const present = filters.filter((f): f is AdmissionFilter => Boolean(f));
  for (const f of present) if (!CHAIN_ORDER.includes(f.name)) throw new RangeError(`admission: ${f.name} is not a chain filter (order: ${CHAIN_ORDER.join(", ")})`);
  const seen = new Set<FilterName>();
  for (const f of present) {
    if (seen.has(f.name)) throw new RangeError(`admission: filter ${f.name} given twice`);
    seen.add(f.name);
  }
  const ordered = [...present].sort((a, b) => CHAIN_ORDER.indexOf(a.name) - CHAIN_ORDER.indexOf(b.name));
  return new AdmissionChain(ordered, counts);
}
