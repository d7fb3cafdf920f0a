// The registrable domain (eTLD+1), the unit of scope, politeness and sharding. It comes from the
// public suffix list via tldts; the private section counts too, so alice.github.io and
// bob.github.io are separate sites (as browsers treat them).

import { getDomain } from "../shared/cjs-tldts.js";
import { hostOf } from "./normalize.js";

const TLDTS_OPTIONS = { allowPrivateDomains: true, extractHostname: false, detectIp: true } as const;

/**
 * Registrable domain of a hostname (lower-case, punycode, as `hostOf` returns it): "www.example.co.uk"
 * -> "example.co.uk". IP literals, single-label hosts ("localhost") and bare public suffixes have none;
 * for those the host itself is the answer, so every host maps to some key.
 */
export function registrableDomain(host: string): string {
  if (host === "" || host.startsWith("[")) return host;
  let domain: string | null = null;
  try {
    domain = getDomain(host, TLDTS_OPTIONS);
  } catch {
    domain = null;
  }
  return domain ?? host;
}

/** Hosts whose registrable domain is remembered per process (the links of a page name a few hosts, over and over). */
const DOMAIN_MEMO_HOSTS = 16_384;
let domainMemo = new Map<string, string>();

/**
 * registrableDomain, remembered per host: the frontier needs a link's domain twice per add_links
 * call (the hosts-per-domain cap and domain politeness); tldts runs once per host.
 */
export function cachedRegistrableDomain(host: string): string {
  let d = domainMemo.get(host);
  if (d === undefined) {
    d = registrableDomain(host);
    if (domainMemo.size >= DOMAIN_MEMO_HOSTS) domainMemo = new Map();
    domainMemo.set(host, d);
  }
  return d;
}

/** Scope modes (admit/scope-filter.ts decides what each admits). */
export type ScopeMode = "domains" | "hosts" | "any";

export function isScopeMode(value: string): value is ScopeMode {
  return value === "domains" || value === "hosts" || value === "any";
}

/** The scope as the node stores it (frontier/crawl-scope.ts), from the seeds. */
export interface ScopeSpec {
  mode: ScopeMode;
  /** Registrable domains (mode domains) or hosts (mode hosts) of the seeds. */
  keys: string[];
}

/** The stored scope of a seed list (seeds that do not parse are skipped: the seeding code reports them). */
export function scopeSpecOf(seeds: readonly string[], mode: ScopeMode): ScopeSpec {
  const keys = new Set<string>();
  for (const s of seeds) {
    const h = hostOf(s);
    if (h) keys.add(mode === "domains" ? registrableDomain(h) : h);
  }
  return { mode, keys: [...keys] };
}
