// The crawl scope as a host predicate, from the spec stored beside the frontier (frontier/
// crawl-scope.ts). Pure: parser threads use it without loading a Redis client.
import { registrableDomain, type ScopeMode } from "./scope.js";

export interface ScopeSpec {
  mode: ScopeMode;
  /** Registrable domains (mode domains) or hosts (mode hosts) of the seeds. */
  keys: string[];
}

/** Hosts whose scope answer is remembered per process (a page's links name a few hosts, over and over). */
const SCOPE_MEMO_HOSTS = 16_384;

export function scopeAllows(spec: ScopeSpec): (host: string) => boolean {
  if (spec.mode === "any") return () => true;
  const keys = new Set(spec.keys);
  if (spec.mode === "hosts") return (h) => keys.has(h);
  // The registrable domain (tldts) costs ~0.3 us per link; a host's answer never changes.
  let memo = new Map<string, boolean>();
  return (h) => {
    let ok = memo.get(h);
    if (ok === undefined) {
      ok = keys.has(registrableDomain(h));
      if (memo.size >= SCOPE_MEMO_HOSTS) memo = new Map();
      memo.set(h, ok);
    }
    return ok;
  };
}
