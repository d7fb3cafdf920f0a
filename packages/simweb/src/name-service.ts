// The name side of the synthetic web (opt-in, config `dns`): which loopback address each host has,
// and the DNS failures of the real web a crawler must live with. The wire format is dns-server.ts;
// this module only decides answers, so it is a pure function of the config and the query history.
//  - Addresses: domain N lives on 127.0.1.(1 + N mod `addresses`), so several domains share one
//    address (shared hosting) and a host's requests arrive on its own address, for real on the wire.
//  - A SERVFAIL (or silent: no answer) window opens at a name's (afterQueries+1)-th lookup and lasts
//    `forMs` (absent: never ends), then the name resolves again.
//  - An NXDOMAIN name: the host is in the link graph but its name does not exist.
//  - A moving record: `afterMs` after the name's first lookup its address changes to a spare one
//    (127.0.2.k); a crawler that honours the record's TTL connects to the new address after it.
//  - A wildcard farm (config `wildcardFarm`): every name under its domain resolves.
import type { World } from "./world.js";

export type DnsFaultSpec =
  | { host: number; kind: "servfail" | "silent"; afterQueries?: number; forMs?: number; ttl?: number }
  | { host: number; kind: "nxdomain" }
  | { host: number; kind: "move"; afterMs: number; ttl?: number };

export interface DnsConfig {
  /** Loopback addresses hosts are spread over (1..250); 0 = no name service (the default). */
  addresses: number;
  /** TTL of every record, seconds (a fault may set its host's own). */
  ttl: number;
  faults: DnsFaultSpec[];
}

export const DEFAULT_DNS: DnsConfig = { addresses: 0, ttl: 60, faults: [] };

export interface WildcardFarmConfig {
  /** Registrable domain of the farm: every name under it resolves. */
  domain: string;
  /** Links to fresh random subdomains on every farm page. */
  linksPerPage: number;
}

export type NameAnswer =
  | { kind: "address"; address: string; ttl: number }
  | { kind: "nxdomain" }
  | { kind: "servfail" }
  | { kind: "silent" };

export function validateDns(dns: DnsConfig, farm: WildcardFarmConfig | null, hosts: number, fail: (msg: string) => never): void {
  if (!(Number.isInteger(dns.addresses) && dns.addresses >= 0 && dns.addresses <= 250)) fail("dns.addresses must be an integer in 0..250");
  if (!(Number.isInteger(dns.ttl) && dns.ttl >= 0)) fail("dns.ttl must be an integer >= 0");
  if (!Array.isArray(dns.faults)) fail("dns.faults must be a list");
  if (dns.faults.length > 0 && dns.addresses === 0) fail("dns.faults need dns.addresses >= 1");
  if (dns.faults.length > 250) fail("dns.faults: at most 250");
  for (const f of dns.faults) {
    if (!(Number.isInteger(f.host) && f.host >= 0 && f.host < hosts)) fail(`dns.faults: host must be an index in 0..${hosts - 1}`);
    if (!["servfail", "silent", "nxdomain", "move"].includes(f.kind)) fail("dns.faults: kind must be servfail, silent, nxdomain or move");
    if (f.kind === "servfail" || f.kind === "silent") {
      if (f.afterQueries !== undefined && !(Number.isInteger(f.afterQueries) && f.afterQueries >= 0)) fail("dns.faults: afterQueries must be an integer >= 0");
      if (f.forMs !== undefined && !(Number.isFinite(f.forMs) && f.forMs >= 0)) fail("dns.faults: forMs must be >= 0");
    }
    if (f.kind === "move" && !(Number.isFinite(f.afterMs) && f.afterMs >= 0)) fail("dns.faults: move needs afterMs >= 0");
    if ("ttl" in f && f.ttl !== undefined && !(Number.isInteger(f.ttl) && f.ttl >= 0)) fail("dns.faults: ttl must be an integer >= 0");
  }
  if (farm !== null) {
    if (!/^[a-z0-9-]+(\.[a-z0-9-]+)+$/.test(farm.domain)) fail("wildcardFarm.domain must be a lower-case domain name");
    if (!(Number.isInteger(farm.linksPerPage) && farm.linksPerPage >= 1 && farm.linksPerPage <= 100)) fail("wildcardFarm.linksPerPage must be in 1..100");
  }
}

/** The address of the k-th (0-based) pool slot. */
export function poolAddress(k: number): string {
  return `127.0.1.${1 + k}`;
}

/** The spare address a moving record changes to (one per fault, so each move is told apart). */
export function movedAddress(faultIndex: number): string {
  return `127.0.2.${1 + faultIndex}`;
}

interface NameState {
  queries: number;
  firstAt: number;
  windowFrom: number | null;
}

/** Names tracked for faults are few (the configured ones); this caps the farm's endless names too. */
const MAX_TRACKED = 10_000;

export class NameService {
  private readonly faults = new Map<string, { spec: DnsFaultSpec; index: number }>();
  private readonly state = new Map<string, NameState>();

  constructor(private readonly world: World) {
    world.config.dns.faults.forEach((spec, index) => this.faults.set(world.model(spec.host).info.name, { spec, index }));
  }

  get enabled(): boolean {
    return this.world.config.dns.addresses > 0;
  }

  /** Every address a host may be answered with: the server listens on all of them. */
  addresses(): string[] {
    const dns = this.world.config.dns;
    const out: string[] = [];
    for (let k = 0; k < dns.addresses; k++) out.push(poolAddress(k));
    dns.faults.forEach((f, i) => {
      if (f.kind === "move") out.push(movedAddress(i));
    });
    return out;
  }

  /** Where a host lives when nothing is wrong (its domain's pool slot). */
  homeAddress(name: string): string | null {
    const dns = this.world.config.dns;
    if (dns.addresses === 0) return null;
    const h = this.world.hostByName(name);
    if (h) return poolAddress(domainOrdinal(h.info.domain) % dns.addresses);
    if (this.world.isFarmName(name)) return poolAddress(0);
    return null;
  }

  /**
   * True for a request to a host whose record has moved, arriving on an address it no longer has:
   * the old server still answers but closes the connection, as a decommissioned one drains, so a
   * client has to connect again (and look the name up again once its cached answer expires).
   */
  movedAway(name: string, localAddress: string | undefined, now: number): boolean {
    const fault = this.faults.get(name);
    if (fault?.spec.kind !== "move") return false;
    const st = this.state.get(name);
    return st !== undefined && now - st.firstAt >= fault.spec.afterMs && localAddress !== movedAddress(fault.index);
  }

  /**
   * Hosts with a SERVFAIL/silent fault keep no connection alive (many real servers do not): each
   * request needs a new connection, so a crawler's page requests, not only its first, meet the
   * name's failures once its cached answer has expired.
   */
  closesConnections(name: string): boolean {
    const kind = this.faults.get(name)?.spec.kind;
    return kind === "servfail" || kind === "silent";
  }

  /** The answer to an A lookup of `name` at `now` (also called for AAAA: same faults, no v6 address). */
  answer(name: string, now: number, countQuery: boolean): NameAnswer {
    const dns = this.world.config.dns;
    const home = this.homeAddress(name);
    if (home === null) return { kind: "nxdomain" };
    const fault = this.faults.get(name);
    if (!fault) return { kind: "address", address: home, ttl: dns.ttl };
    let st = this.state.get(name);
    if (!st) {
      if (this.state.size >= MAX_TRACKED) this.state.clear();
      st = { queries: 0, firstAt: now, windowFrom: null };
      this.state.set(name, st);
    }
    if (countQuery) st.queries++;
    const f = fault.spec;
    switch (f.kind) {
      case "nxdomain":
        return { kind: "nxdomain" };
      case "move":
        return { kind: "address", address: now - st.firstAt >= f.afterMs ? movedAddress(fault.index) : home, ttl: f.ttl ?? dns.ttl };
      default: {
        if (st.windowFrom === null && st.queries > (f.afterQueries ?? 0)) st.windowFrom = now;
        const open = st.windowFrom !== null && (f.forMs === undefined || now - st.windowFrom < f.forMs);
        return open ? { kind: f.kind } : { kind: "address", address: home, ttl: f.ttl ?? dns.ttl };
      }
    }
  }
}

/** simweb names domains d<N>.test; N orders them (any other name hashes to a slot). */
function domainOrdinal(domain: string): number {
  const m = /^d(\d+)\./.exec(domain);
  if (m) return Number(m[1]);
  let h = 0;
  for (let i = 0; i < domain.length; i++) h = (h * 31 + domain.charCodeAt(i)) >>> 0;
  return h;
}
