// DNS cache counters of one HTTP client, turned into increments of the node's stats hash
// (exported as shardcrawl_dns_lookups_total, shardcrawl_dns_cache_hits_total,
// shardcrawl_dns_failures_total{class} and shardcrawl_dns_lookup_seconds_total). A falling hit
// rate or a rising mean lookup time points at the resolver, not the sites.
import type { DnsCounters } from "./dns-cache.js";

/** Stats-hash field of each counter. */
export const DNS_STAT_FIELDS: Readonly<Record<keyof DnsCounters, string>> = {
  lookups: "dns:lookups",
  hits: "dns:hits",
  nxdomain: "dnsFail:nxdomain",
  transient: "dnsFail:transient",
  lookupMs: "dns:lookupMs",
};

/** Remembers what was already reported, so each flush adds only what is new. */
export class DnsStatsReporter {
  private reported: DnsCounters = { lookups: 0, hits: 0, nxdomain: 0, transient: 0, lookupMs: 0 };

  constructor(private readonly counters: Readonly<DnsCounters>) {}

  /** [stats field, increment] for every counter that moved since the last call. */
  take(): Array<[string, number]> {
    const out: Array<[string, number]> = [];
    for (const key of Object.keys(DNS_STAT_FIELDS) as Array<keyof DnsCounters>) {
      const delta = this.counters[key] - this.reported[key];
      if (delta !== 0) out.push([DNS_STAT_FIELDS[key], delta]);
    }
    this.reported = { ...this.counters };
    return out;
  }
}
