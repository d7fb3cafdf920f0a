// The in-process part of the admission chain that runs where URLs enter this node's frontier
// (seeds, a parsed page's links and redirect, inbox URLs): shard routing, the site owners' opt-out
// list and the trap filters, in CHAIN_ORDER, over a batch. The frontier then runs the Lua-decided
// filters (host budget, hosts per domain) in the add_links call. Scope is decided earlier, in the
// parser task (parse/worker.ts); seeds define it.
import type { ShardRouter } from "../shard/shard-spec.js";
import { buildAdmissionChain } from "./build-chain.js";
import type { AdmissionChain } from "./chain.js";
import { takeAdmissionFields, type AdmissionCounts } from "./admission-counts.js";
import { ExclusionFilter, type ExclusionMatcher } from "./exclusion-filter.js";
import { ShardFilter } from "./shard-filter.js";
import { TrapFilter } from "./trap-filters.js";

/** The opt-out list as the frontier keeps it: `current()` is cached and re-read when the list changes. */
export interface ExclusionSource {
  current(): Promise<ExclusionMatcher>;
}

export interface BatchAdmissionParts {
  /** A cluster node's shard router: URLs another node owns are handed back by owner. */
  router?: ShardRouter | null;
  exclusions?: ExclusionSource;
  /** Trap filter specs (name=n); empty or absent: none. */
  urlFilters?: readonly string[];
  /**
   * Where refusals are counted: this process's counts (default; a parser drains them into its
   * stats batch), or the caller's own, written with writeCounts (the supervisor has no stats batch).
   */
  counts?: AdmissionCounts;
}

export interface AdmittedBatch<T> {
  /** Admitted here: on to the frontier. */
  own: T[];
  /** Owned by other nodes, by owner (shard routing). */
  elsewhere: Map<string, T[]>;
  /** Refused (opt-out list, trap filters): counted by the chain, dropped. */
  refused: number;
}

const NOTHING_EXCLUDED: ExclusionMatcher = { match: () => undefined };

export class BatchAdmission {
  readonly chain: AdmissionChain;
  private excluded: ExclusionMatcher = NOTHING_EXCLUDED;
  private readonly exclusions: ExclusionSource | undefined;
  private readonly counts: AdmissionCounts | undefined;

  constructor(parts: BatchAdmissionParts) {
    this.exclusions = parts.exclusions;
    this.counts = parts.counts;
    const trap = parts.urlFilters?.length ? new TrapFilter(parts.urlFilters) : undefined;
    this.chain = buildAdmissionChain([
      parts.router ? new ShardFilter(parts.router) : undefined,
      parts.exclusions ? new ExclusionFilter(() => this.excluded) : undefined,
      trap,
    ], parts.counts);
  }

  /** True when no filter is configured (a single node with no trap filters and no opt-out list). */
  get empty(): boolean {
    return this.chain.filters.length === 0;
  }

  /**
   * Runs the chain over a batch. The opt-out list is the frontier's current one (re-read when it
   * changed), so an exclusion added mid-crawl refuses the next batch.
   */
  async admit<T extends { url: string; host: string }>(links: readonly T[]): Promise<AdmittedBatch<T>> {
    const out: AdmittedBatch<T> = { own: [], elsewhere: new Map(), refused: 0 };
    if (this.empty) {
      out.own = [...links];
      return out;
    }
    if (this.exclusions) this.excluded = await this.exclusions.current();
    for (const l of links) {
      const v = this.chain.check(l.url, l.host);
      if (v === undefined) out.own.push(l);
      else if (v.routeTo !== undefined) {
        let list = out.elsewhere.get(v.routeTo);
        if (!list) out.elsewhere.set(v.routeTo, (list = []));
        list.push(l);
      } else out.refused++;
    }
    return out;
  }

  /** Writes the refusals and timings counted since the last call (own counts only) to the node's stats. */
  async writeCounts(stats: { addCounters(deltas: Iterable<readonly [string, number]>): Promise<void> }, skip?: (field: string) => boolean): Promise<void> {
    if (!this.counts) return;
    const fields = takeAdmissionFields(this.counts).filter(([f]) => !skip?.(f));
    if (fields.length > 0) await stats.addCounters(fields);
  }
}
