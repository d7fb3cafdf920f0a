// `--dns-server`: ask given DNS servers (a local caching resolver on a crawl box, or a test's own
// server on loopback) instead of the system's getaddrinfo. Node's c-ares Resolver does the
// protocol; this module only parses the setting and turns A/AAAA answers and DNS errors (NXDOMAIN
// -> ENOTFOUND, SERVFAIL -> ESERVFAIL, no answer -> ETIMEOUT ...) into the DnsCache's LookupAll.
import { Resolver } from "node:dns/promises";
import { isIP } from "node:net";
import type { LookupAddress, LookupAll } from "./dns-cache.js";

/** Problems with a list of "ip", "ip:port" or "[ipv6]:port" entries (empty when all are fine). */
export function checkDnsServers(servers: readonly string[]): string[] {
  const errors: string[] = [];
  for (const s of servers) {
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([0-9.]+)|([0-9a-fA-F:]+))(?::(\d{1,5}))?$/.exec(s);
    const ip = m ? (m[1] ?? m[2] ?? m[3] ?? "") : "";
    // A bare IPv6 address cannot carry a port; "[::1]:53" can.
    const port = m?.[4] !== undefined && m[3] === undefined ? Number(m[4]) : 53;
    if (!m || isIP(ip) === 0 || !(port >= 1 && port <= 65535)) errors.push(`dns-server: expected ip, ip:port or [ipv6]:port, got ${JSON.stringify(s)}`);
  }
  return errors;
}

/**
 * A resolver over `servers`; each lookup asks for A and AAAA at once. `connectMs` is the budget
 * for lookup plus TCP connect: a server that does not answer gets half of it, so the failure is
 * reported as a DNS timeout and not as the fetch's total timeout.
 */
export function dnsServerLookup(servers: readonly string[], connectMs: number): LookupAll {
  const bad = checkDnsServers(servers);
  if (bad.length > 0) throw new RangeError(bad.join("; "));
  // Two tries: one lost UDP packet should not cost a fetch. c-ares doubles the timeout for the
  // second try, so both fit in half the budget (t + 2t); the DnsCache's own timeout still bounds it.
  const resolver = new Resolver({ timeout: Math.max(100, Math.round(connectMs / 6)), tries: 2 });
  resolver.setServers([...servers]);
  return async (hostname) => {
    const [v4, v6] = await Promise.allSettled([resolver.resolve4(hostname, { ttl: true }), resolver.resolve6(hostname, { ttl: true })]);
    const out: LookupAddress[] = [];
    // The record TTLs go up to the DnsCache, which keeps the answer that long (clamped).
    if (v4.status === "fulfilled") for (const { address, ttl } of v4.value) out.push({ address, family: 4, ttl });
    if (v6.status === "fulfilled") for (const { address, ttl } of v6.value) out.push({ address, family: 6, ttl });
    if (out.length > 0) return out;
    // No address at all: report the more telling error (a name with only AAAA gives ENODATA for A).
    const errs = [v4, v6].flatMap((r) => (r.status === "rejected" ? [r.reason as Error & { code?: string }] : []));
    throw errs.find((e) => e.code !== "ENODATA") ?? errs[0] ?? Object.assign(new Error(`${hostname}: no addresses`), { code: "ENODATA" });
  };
}
