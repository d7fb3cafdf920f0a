// Test helpers for the frontier: link builders, a fake-free page builder and an invariant checker
// that recomputes every gauge from the raw keys.
import type { Redis } from "ioredis";
import { expect } from "vitest";
import type { DiscoveredLink, FetchedPage } from "../../src/shared/types.js";
import { MAX_TIER } from "../../src/shared/types.js";
import type { Frontier } from "../../src/frontier/index.js";

export function link(url: string, tier = 0, depth = 0, hops = 0): DiscoveredLink {
  return { url, host: new URL(url).hostname, tier, depth, hops };
}

export function page(url: string, body = `<html><a href="/x">${url}</a></html>`): FetchedPage {
  return {
    url, host: new URL(url).hostname, depth: 0, hops: 0, fetchedAt: new Date(0).toISOString(), status: 200,
    httpVersion: "1.1", statusText: "OK", headers: [["Content-Type", "text/html"]], requestHeaders: [["User-Agent", "t"]],
    body: Buffer.from(body), timings: { total: 1 },
  };
}

async function scanKeys(redis: Redis, match: string): Promise<string[]> {
  const out: string[] = [];
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", match, "COUNT", 1000);
    out.push(...keys);
    cursor = next;
  } while (cursor !== "0");
  return out;
}

/**
 * Recomputes queued URLs, hosts with queued URLs, in-flight per host and ready-schedule membership
 * from the raw keys and compares them with the stored gauges. Returns all queued elements.
 */
export async function checkInvariants(redis: Redis, f: Frontier, defaultConcurrency = 1): Promise<string[]> {
  const p = f.keys.prefix;
  const elements: string[] = [];
  const perHost = new Map<string, number>();
  for (const key of await scanKeys(redis, `${p}q*`)) {
    const m = new RegExp(`^${p}q(\\d+):(.*)$`).exec(key);
    if (!m) continue;
    expect(Number(m[1])).toBeLessThanOrEqual(MAX_TIER);
    const items = await redis.lrange(key, 0, -1);
    elements.push(...items);
    perHost.set(m[2]!, (perHost.get(m[2]!) ?? 0) + items.length);
  }
  const leaseData = await redis.hgetall(f.keys.leaseData);
  const leasesPerHost = new Map<string, number>();
  for (const v of Object.values(leaseData)) {
    const host = v.split("\t")[0]!;
    leasesPerHost.set(host, (leasesPerHost.get(host) ?? 0) + 1);
  }
  expect(await redis.zcard(f.keys.leases)).toBe(Object.keys(leaseData).length);
  const ready = new Set(await redis.zrange(f.keys.ready, 0, -1));
  let hostsQueued = 0;
  // Domain politeness: per domain, its hosts' leases, whether one has queued URLs, its ready hosts.
  const domains = new Map<string, { leases: number; queued: boolean; ready: number }>();
  for (const hk of await scanKeys(redis, `${p}h:*`)) {
    const host = hk.slice(`${p}h:`.length);
    const h = await redis.hgetall(hk);
    const q = Number(h.q ?? 0);
    const fl = Number(h.f ?? 0);
    expect(q, `queued of ${host}`).toBe(perHost.get(host) ?? 0);
    expect(fl, `in-flight of ${host}`).toBe(leasesPerHost.get(host) ?? 0);
    if (q > 0) hostsQueued++;
    if (h.k !== undefined && (await redis.hget(f.keys.flowCfg, "pk")) === "domain") {
      const d = domains.get(h.k) ?? { leases: 0, queued: false, ready: 0 };
      domains.set(h.k, d);
      d.leases += fl;
      d.queued ||= q > 0;
      if (ready.has(host)) d.ready++;
      // Not ready with queued URLs: it waits in the domain's line, or it is the representative of a
      // domain whose slots are full (a one-host domain keeps its representative while leased).
      if (q > 0 && !ready.has(host)) {
        const waits = (await redis.zscore(f.keys.domainWaiting(h.k), host)) !== null;
        const rep = (await redis.hget(f.keys.politenessDomain(h.k), "r")) === host;
        expect(waits || rep, `${host} waits for ${h.k} or represents it`).toBe(true);
      }
      continue;
    }
    // Effective concurrency as lib.lua conc_of: the adaptive limit a (AIMD) under the hard limit.
    const hard = h.c ? Number(h.c) : defaultConcurrency;
    const c = h.a ? Math.min(hard, Math.max(1, Math.floor(Number(h.a)))) : hard;
    expect(ready.has(host), `ready membership of ${host} (q=${q} f=${fl} c=${c})`).toBe(q > 0 && fl < c);
  }
  for (const [domain, d] of domains) {
    const dh = await redis.hgetall(f.keys.politenessDomain(domain));
    expect(Number(dh.f ?? 0), `in-flight of domain ${domain}`).toBe(d.leases);
    const hard = dh.c ? Number(dh.c) : defaultConcurrency;
    const c = dh.a ? Math.min(hard, Math.max(1, Math.floor(Number(dh.a)))) : hard;
    expect(d.ready, `ready hosts of domain ${domain} (f=${d.leases} c=${c})`).toBe(d.queued && d.leases < c ? 1 : 0);
  }
  const s = await f.stats();
  expect(s.queued).toBe(elements.length);
  expect(s.hostsQueued).toBe(hostsQueued);
  expect(s.readyHosts).toBe(ready.size);
  expect(s.leases).toBe(Object.keys(leaseData).length);
  return elements;
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
