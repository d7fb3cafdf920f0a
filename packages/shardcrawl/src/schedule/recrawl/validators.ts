// Per-host tracking of whether conditional requests (If-None-Match / If-Modified-Since) are
// honoured. Some hosts send validators but ignore them, others send none and ignore an
// If-Modified-Since carrying the time of our last fetch. Evidence per conditional request:
//   304                                                    -> honoured
//   200, content changed                                   -> no evidence (a 200 was due)
//   200, content unchanged, same ETag as sent (or no ETag
//        and a Last-Modified not after the date we sent)  -> ignored (the server itself says
//                                                            nothing changed, yet sent the body)
//   200, content unchanged, a NEW ETag                    -> churning ETag (the ETag follows
//        bytes that change on every load, e.g. a timestamp): If-None-Match is useless there,
//        but If-Modified-Since may still work, so the host is not blamed (the page's copy is
//        marked, see http-revisit.ts).
// A host is "ignoring" once it has `minEvidence` answers and the ignored share exceeds
// `maxIgnoredShare`; then its visits are costed at full size and no validators are sent.

export interface ValidatorStats {
  notModified: number;
  ignored: number;
  churningEtag: number;
}

export type ValidatorVerdict = "unknown" | "honoured" | "ignored";

export interface ValidatorPolicy {
  minEvidence: number;
  maxIgnoredShare: number;
}

export const DEFAULT_VALIDATOR_POLICY: ValidatorPolicy = { minEvidence: 5, maxIgnoredShare: 0.2 };

export interface ConditionalExchange {
  status: number;
  /** Validators we sent. */
  sentEtag?: string;
  sentIfModifiedSinceMs?: number;
  /** Validators in the answer. */
  gotEtag?: string;
  gotLastModifiedMs?: number;
  /** By content digest of the extracted text. */
  contentChanged: boolean;
}

export type Evidence = "honoured" | "ignored" | "churning-etag" | "none";

export function evidenceOf(x: ConditionalExchange): Evidence {
  if (x.sentEtag === undefined && x.sentIfModifiedSinceMs === undefined) return "none";
  if (x.status === 304) return "honoured";
  if (x.status < 200 || x.status >= 300 || x.contentChanged) return "none";
  if (x.sentEtag !== undefined && x.gotEtag !== undefined) return x.gotEtag === x.sentEtag ? "ignored" : "churning-etag";
  if (x.gotEtag !== undefined && x.sentEtag === undefined) return "ignored";
  if (x.gotLastModifiedMs !== undefined && x.sentIfModifiedSinceMs !== undefined) return x.gotLastModifiedMs <= x.sentIfModifiedSinceMs ? "ignored" : "none";
  return "ignored";
}

export class HostValidators {
  private readonly hosts = new Map<string, ValidatorStats>();
  constructor(private readonly policy: ValidatorPolicy = DEFAULT_VALIDATOR_POLICY) {}

  /** Records one conditional request's outcome; returns the evidence it gave. */
  record(host: string, x: ConditionalExchange): Evidence {
    const ev = evidenceOf(x);
    if (ev === "none") return ev;
    let s = this.hosts.get(host);
    if (!s) {
      s = { notModified: 0, ignored: 0, churningEtag: 0 };
      this.hosts.set(host, s);
    }
    if (ev === "honoured") s.notModified++;
    else if (ev === "ignored") s.ignored++;
    else s.churningEtag++;
    return ev;
  }

  stats(host: string): ValidatorStats {
    return this.hosts.get(host) ?? { notModified: 0, ignored: 0, churningEtag: 0 };
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

  knownHosts(): string[] {
    return [...this.hosts.keys()].sort();
  }
}

export function verdictOf(s: ValidatorStats, policy: ValidatorPolicy = DEFAULT_VALIDATOR_POLICY): ValidatorVerdict {
  const n = s.notModified + s.ignored;
  if (n < policy.minEvidence) return "unknown";
  return s.ignored / n > policy.maxIgnoredShare ? "ignored" : "honoured";
}
