// The admission chain: an ordered list of named filters behind one interface (StormCrawler's
// URLFilters). The first filter that refuses a URL decides; its refusal is counted. Timing every
// check would cost more than the cheap filters themselves (~0.1 us a link on the parser's hot path),
// so one check in TIME_EVERY is timed, filter by filter: enough for a per-filter mean.
import { processAdmissionCounts, type AdmissionCounts } from "./admission-counts.js";
import type { AdmissionFilter, FilterName, Verdict } from "./verdict.js";

const TIME_EVERY = 256;

export class AdmissionChain {
  private untilTimed = TIME_EVERY;

  constructor(
    readonly filters: readonly AdmissionFilter[],
    private readonly counts: AdmissionCounts = processAdmissionCounts,
  ) {}

  get names(): FilterName[] {
    return this.filters.map((f) => f.name);
  }

  /** The first refusal, or undefined when every filter admits the URL. */
  check(url: string, host: string): Verdict {
    if (--this.untilTimed === 0) return this.checkTimed(url, host);
    for (const f of this.filters) {
      const r = f.check(url, host);
      if (r !== undefined) {
        this.counts.refused(r.filter, 1, r.counter);
        return r;
      }
    }
    return undefined;
  }

  private checkTimed(url: string, host: string): Verdict {
    this.untilTimed = TIME_EVERY;
    for (const f of this.filters) {
      const t0 = process.hrtime.bigint();
      const r = f.check(url, host);
      this.counts.timedCheck(f.name, Number(process.hrtime.bigint() - t0));
      if (r !== undefined) {
        this.counts.refused(r.filter, 1, r.counter);
        return r;
      }
    }
    return undefined;
  }

  /** Every filter's answer, in order, without counting (`inspect url` shows them all). */
  explain(url: string, host: string): Array<{ filter: FilterName; verdict: Verdict }> {
    return this.filters.map((f) => ({ filter: f.name, verdict: f.check(url, host) }));
  }
}
