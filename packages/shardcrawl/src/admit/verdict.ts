// The one answer every admission step gives, whether it runs in-process (scope, opt-out list, trap
// filters, shard routing), atomically in Lua (host page budget, hosts per domain) or at fetch time
// (robots.txt, Crawl-delay): undefined admits the URL here, a Refusal names the filter that said no.

/** Filter names, in the order the chain applies them (admit/build-chain.ts). */
export type FilterName =
  | "scope"
  | "exclusions"
  | "trap"
  | "host-budget"
  | "domain-hosts"
  | "shard"
  | "robots"
  | "crawl-delay";

export interface Refusal {
  /** The filter that refused (one metric label per filter). */
  filter: FilterName;
  /** Machine-readable reason, as the page log, the counters and `inspect url` spell it ("out-of-scope", "trap:path-depth", "robots-disallowed"...). */
  reason: string;
  /** One sentence for people. */
  detail: string;
  /** Shard routing: not refused for the crawl, only for this node; the URL goes to this node. */
  routeTo?: string;
  /**
   * The stats field the refusal is counted under (default admit:<filter>): the opt-out list and
   * the trap filters keep the counters they always had (excluded:refused, filtered:<reason>).
   */
  counter?: string;
}

/** undefined: admitted. */
export type Verdict = Refusal | undefined;

/** A filter of the chain: looks at one URL (normalized) and its host, never does I/O. */
export interface AdmissionFilter {
  readonly name: FilterName;
  check(url: string, host: string): Verdict;
}
