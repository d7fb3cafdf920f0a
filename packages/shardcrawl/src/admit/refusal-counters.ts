// Every refusal of the admission chain, wherever it was decided, as one count per filter: the
// in-process filters count admit:<filter>; the frontier, Lua and the fetcher count theirs under the
// names they always had. This maps a node's stats counters to refusals by filter (metrics:
// shardcrawl_admission_refused_total{filter}).
import type { FilterName } from "./verdict.js";

/** Stats fields (exact, or a prefix ending in ":") counted as refusals of a filter decided outside the in-process chain. */
const DECIDED_ELSEWHERE: Array<[string, FilterName]> = [
  ["excluded:refused", "exclusions"],
  ["filtered:", "trap"],
  ["dropped:host-budget", "host-budget"],
  ["dropped:domain-hosts", "domain-hosts"],
  ["err:robots-disallowed", "robots"],
  ["err:robots-unavailable", "robots"],
  ["err:crawl-delay-too-long", "crawl-delay"],
];

export function refusalsByFilter(counters: Readonly<Record<string, number>>): Map<string, number> {
  const out = new Map<string, number>();
  const add = (f: string, n: number) => {
    if (n) out.set(f, (out.get(f) ?? 0) + n);
  };
  for (const [k, v] of Object.entries(counters)) {
    if (k.startsWith("admit:")) add(k.slice(6), v);
    else for (const [field, filter] of DECIDED_ELSEWHERE) if (field.endsWith(":") ? k.startsWith(field) : k === field) add(filter, v);
  }
  return out;
}

/** Sampled check time by filter (admitNs:, admitTimed:): seconds and checks. */
export function admissionTimings(counters: Readonly<Record<string, number>>): Map<string, { seconds: number; checks: number }> {
  const out = new Map<string, { seconds: number; checks: number }>();
  for (const [k, v] of Object.entries(counters)) {
    if (k.startsWith("admitNs:")) {
      const f = k.slice(8);
      out.set(f, { seconds: v / 1e9, checks: counters[`admitTimed:${f}`] ?? 0 });
    }
  }
  return out;
}
