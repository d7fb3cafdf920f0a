// Scope: which discovered URLs belong to this crawl, decided from the seeds. The registrable domain
// (eTLD+1) comes from the public suffix list via tldts; the private section counts too, so
// alice.github.io and bob.github.io are separate sites (as browsers treat them).

import { getDomain } from "tldts";
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

/**
 * - `domains`: same registrable domain as a seed (www.example.com seeds blog.example.com);
 * - `hosts`: exactly the seeds' hosts;
 * - `any`: everything (a broad crawl; sharding and robots still apply).
 */
export type ScopeMode = "domains" | "hosts" | "any";

export interface ScopeFilter {
  readonly mode: ScopeMode;
  /** Is this host (as `hostOf` returns it) in scope? */
  allowsHost(host: string): boolean;
  /** Is this absolute URL in scope? False when it does not parse. */
  allowsUrl(url: string): boolean;
}

/**
 * Build a scope filter from seed URLs (seeds that do not parse are ignored here; the seeding code
 * reports them). With no usable seed, `domains` and `hosts` allow nothing.
 */
export function createScopeFilter(seeds: readonly string[], mode: ScopeMode): ScopeFilter {
  const keys = new Set<string>();
  for (const seed of seeds) {
    const host = hostOf(seed);
    if (host === null) continue;
    keys.add(mode === "domains" ? registrableDomain(host) : host);
  }
  const allowsHost =
    mode === "any"
      ? (_host: string): boolean => true
      : mode === "hosts"
        ? (host: string): boolean => keys.has(host)
        : (host: string): boolean => keys.has(registrableDomain(host));
  return {
    mode,
    allowsHost,
    allowsUrl(url: string): boolean {
      const host = hostOf(url);
      return host !== null && allowsHost(host);
    },
  };
}

export function isScopeMode(value: string): value is ScopeMode {
  return value === "domains" || value === "hosts" || value === "any";
}
