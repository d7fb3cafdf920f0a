// Politeness per registrable domain: add_links.lua learns each new host's domain from a list this
// module builds ("pk\n" then "<host>\t<domain>\n" per distinct host). The domain comes from the
// public suffix list (url/scope.ts registrableDomain, tldts); the Lua scripts cannot compute it.
import { cachedRegistrableDomain } from "../url/scope.js";
import type { HashedLink } from "./links.js";

/** The add_links.lua argument naming the politeness domain of each host of links[from, from+count). */
export function politenessDomains(links: readonly HashedLink[], from: number, count: number): string {
  const seen = new Set<string>();
  let out = "pk\n";
  const end = Math.min(links.length, from + count);
  for (let i = from; i < end; i++) {
    const host = (links[i] as HashedLink).host;
    if (seen.has(host) || host.includes("\t") || host.includes("\n")) continue;
    seen.add(host);
    out += `${host}\t${cachedRegistrableDomain(host)}\n`;
  }
  return out;
}
