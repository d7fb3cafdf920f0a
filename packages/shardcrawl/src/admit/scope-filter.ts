// Scope: which discovered URLs belong to this crawl, decided from the seeds (the one
// implementation: parser links and redirects, `inspect url`, and the keys the node stores).
// - domains: same registrable domain as a seed (www.example.com seeds blog.example.com);
// - hosts: exactly the seeds' hosts;
// - any: everything (a broad crawl; sharding and robots still apply).
import { hostOf } from "../url/normalize.js";
import { cachedRegistrableDomain, type ScopeMode, type ScopeSpec } from "../url/scope.js";
export { scopeSpecOf, type ScopeSpec } from "../url/scope.js";
import type { AdmissionFilter, Refusal } from "./verdict.js";


/** The key a host is looked up by in a scope of this mode. */
export function scopeKeyOf(host: string, mode: ScopeMode): string {
  return mode === "domains" ? cachedRegistrableDomain(host) : host;
}

/** Hosts whose answer is remembered (a page's links name a few hosts, over and over). */
const MEMO_HOSTS = 16_384;

export class ScopeFilter implements AdmissionFilter {
  readonly name = "scope" as const;
  readonly mode: ScopeMode;
  private readonly has: (key: string) => boolean;
  /** Per host: null when in scope, else its refusal (built once: the detail needs the registrable domain). */
  private memo = new Map<string, Refusal | null>();

  /** From the stored spec, or from a membership test of its keys (`inspect url` asks Redis for one key). */
  constructor(spec: ScopeSpec | { mode: ScopeMode; has(key: string): boolean }) {
    this.mode = spec.mode;
    if ("keys" in spec) {
      const keys = new Set(spec.keys);
      this.has = (k) => keys.has(k);
    } else {
      this.has = (k) => spec.has(k);
    }
  }

  /** Is this host (as `hostOf` returns it) in scope? */
  allowsHost(host: string): boolean {
    return this.check("", host) === undefined;
  }

  /** Is this absolute URL in scope? False when it does not parse. */
  allowsUrl(url: string): boolean {
    const host = hostOf(url);
    return host !== null && this.allowsHost(host);
  }

  check(_url: string, host: string): Refusal | undefined {
    if (this.mode === "any") return undefined;
    // The registrable domain (tldts) costs ~0.3 us per link; a host's answer never changes.
    let r = this.memo.get(host);
    if (r === undefined) {
      const key = scopeKeyOf(host, this.mode);
      r = this.has(key) ? null : { filter: "scope", reason: "out-of-scope", detail: `out of scope: ${key} is not among the seeds' ${this.mode}` };
      if (this.memo.size >= MEMO_HOSTS) this.memo = new Map();
      this.memo.set(host, r);
    }
    return r ?? undefined;
  }
}
