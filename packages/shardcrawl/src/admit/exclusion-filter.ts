// The site owners' opt-out list as a filter of the chain. The list itself (kept in Redis, re-read
// when it changes) belongs to the frontier (frontier/exclusions.ts); the filter reads the current
// compiled set through `current`, so it always sees the list the process last loaded.
import type { AdmissionFilter, Refusal } from "./verdict.js";

/** What the filter needs of an exclusion set (frontier's ExclusionSet). */
export interface ExclusionMatcher {
  match(url: string, host: string): { pattern: string; reason: string; at: number } | undefined;
}

export function exclusionRefusal(e: { pattern: string; reason: string; at: number }, counter?: string): Refusal {
  return {
    filter: "exclusions", reason: "excluded", ...(counter ? { counter } : {}),
    detail: `excluded by ${e.pattern}${e.at ? ` since ${new Date(e.at).toISOString()}` : ""}${e.reason ? ` (reason: ${e.reason})` : ""}: no request starts, links to it are refused`,
  };
}

export class ExclusionFilter implements AdmissionFilter {
  readonly name = "exclusions" as const;

  /**
   * `at`: "admission" counts refusals as excluded:refused (a link, redirect, seed or inbox URL
   * refused); "lease" as admit:exclusions (a queued URL whose site opted out meanwhile).
   */
  constructor(private readonly current: () => ExclusionMatcher, private readonly at: "admission" | "lease" = "admission") {}

  check(url: string, host: string): Refusal | undefined {
    const e = this.current().match(url, host);
    return e ? exclusionRefusal(e, this.at === "admission" ? "excluded:refused" : undefined) : undefined;
  }
}
