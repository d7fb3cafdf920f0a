// Per-host tracking of whether conditional requests (If-None-Match / If-Modified-Since) are
// honoured. Some hosts send validators but ignore them: they answer 200 with unchanged content.
// Evidence per conditional request:
//   304                              -> honoured
//   200 and the content digest differs -> consistent (the page really changed): no evidence
//   200 and the content digest is the same -> ignored (a 304 was due)
// A host is "ignoring" once it has at least `minEvidence` answers and the ignored share exceeds
// `maxIgnoredShare`; then the scheduler stops paying header bytes for validators there and
// counts its visits at full cost.

export interface ValidatorStats {
  notModified: number;
  ignored: number;
}

export type ValidatorVerdict = "unknown" | "honoured" | "ignored";

export interface ValidatorPolicy {
  minEvidence: number;
  maxIgnoredShare: number;
}

export const DEFAULT_VALIDATOR_POLICY: ValidatorPolicy = { minEvidence: 5, maxIgnoredShare: 0.2 };

export class HostValidators {
  private readonly hosts = new Map<string, ValidatorStats>();
  constructor(private readonly policy: ValidatorPolicy = DEFAULT_VALIDATOR_POLICY) {}

  /** Records one conditional request's outcome. */
  record(host: string, status: number, contentChanged: boolean): void {
    let s = this.hosts.get(host);
    if (!s) {
      s = { notModified: 0, ignored: 0 };
      this.hosts.set(host, s);
    }
    if (status === 304) s.notModified++;
    else if (status >= 200 && status < 300 && !contentChanged) s.ignored++;
  }

  stats(host: string): ValidatorStats {
    return this.hosts.get(host) ?? { notModified: 0, ignored: 0 };
  }

  verdict(host: string): ValidatorVerdict {
    return verdictOf(this.stats(host), this.policy);
  }

  /** Share of evidence that says validators work (for the cost model); undefined when unknown. */
  honouredShare(host: string): number | undefined {
    const s = this.stats(host);
    const n = s.notModified + s.ignored;
    return n === 0 ? undefined : s.notModified / n;
  }

  hostsIgnoring(): string[] {
    return [...this.hosts.keys()].filter((h) => this.verdict(h) === "ignored").sort();
  }
}

export function verdictOf(s: ValidatorStats, policy: ValidatorPolicy = DEFAULT_VALIDATOR_POLICY): ValidatorVerdict {
  const n = s.notModified + s.ignored;
  if (n < policy.minEvidence) return "unknown";
  return s.ignored / n > policy.maxIgnoredShare ? "ignored" : "honoured";
}
