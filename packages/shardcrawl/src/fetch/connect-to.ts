// curl-style host mapping: `--connect-to HOST1:PORT1:HOST2:PORT2` (send connections for one
// host:port elsewhere, keeping Host header and SNI) and `--resolve HOST:PORT:ADDR[,ADDR]`
// (static DNS answers). Hand-written because no library parses curl's syntax; it is small.
import { isIP } from "node:net";

/** One --connect-to rule; null fields match any (from*) or keep the original (to*). */
export interface ConnectToRule {
  fromHost: string | null;
  fromPort: number | null;
  toHost: string | null;
  toPort: number | null;
}

/** One --resolve override: answers for `host` (or any host when "*") on `port` (or any port). */
export interface ResolveOverride {
  host: string;
  port: number | null;
  addresses: string[];
}

export interface HostPort {
  host: string;
  port: number;
}

export class HostMappingSyntaxError extends Error {
  override name = "HostMappingSyntaxError";
}

/** Parses "HOST1:PORT1:HOST2:PORT2"; IPv6 hosts go in brackets; empty fields are allowed. */
export function parseConnectTo(spec: string): ConnectToRule {
  const fields = splitFields(spec, 4);
  if (fields === null || fields.length !== 4) {
    throw new HostMappingSyntaxError(`invalid connect-to "${spec}": expected HOST1:PORT1:HOST2:PORT2`);
  }
  const [fromHost = "", fromPort = "", toHost = "", toPort = ""] = fields;
  return {
    fromHost: fromHost === "" ? null : normalizeHost(fromHost, spec),
    fromPort: fromPort === "" ? null : parsePort(fromPort, spec),
    toHost: toHost === "" ? null : normalizeHost(toHost, spec),
    toPort: toPort === "" ? null : parsePort(toPort, spec),
  };
}

/** Parses "HOST:PORT:ADDR[,ADDR...]" (curl --resolve); HOST or PORT may be "*"; a leading "+" is ignored. */
export function parseResolve(spec: string): ResolveOverride {
  const body = spec.startsWith("+") ? spec.slice(1) : spec;
  const fields = splitFields(body, 3);
  if (fields === null || fields.length !== 3) {
    throw new HostMappingSyntaxError(`invalid resolve "${spec}": expected HOST:PORT:ADDR[,ADDR]`);
  }
  const [host = "", port = "", addressList = ""] = fields;
  if (host === "") throw new HostMappingSyntaxError(`invalid resolve "${spec}": empty host`);
  const addresses = addressList
    .split(",")
    .map((a) => stripBrackets(a.trim()))
    .filter((a) => a !== "");
  if (addresses.length === 0) throw new HostMappingSyntaxError(`invalid resolve "${spec}": no address`);
  for (const a of addresses) {
    if (isIP(a) === 0) throw new HostMappingSyntaxError(`invalid resolve "${spec}": "${a}" is not an IP address`);
  }
  return {
    host: host === "*" ? "*" : normalizeHost(host, spec),
    port: port === "*" ? null : parsePort(port, spec),
    addresses,
  };
}

/** Where a connection for host:port really goes: the first matching rule wins, as in curl. */
export function applyConnectTo(rules: readonly ConnectToRule[], host: string, port: number): HostPort {
  const h = stripBrackets(host).toLowerCase();
  for (const r of rules) {
    if (r.fromHost !== null && r.fromHost !== h) continue;
    if (r.fromPort !== null && r.fromPort !== port) continue;
    return { host: r.toHost ?? h, port: r.toPort ?? port };
  }
  return { host: h, port };
}

/** Static answers for host:port, or undefined when no override applies. Exact host beats "*". */
export function lookupOverride(overrides: readonly ResolveOverride[], host: string, port: number): string[] | undefined {
  const h = stripBrackets(host).toLowerCase();
  const matches = (o: ResolveOverride) => o.port === null || o.port === port;
  return (overrides.find((o) => o.host === h && matches(o)) ?? overrides.find((o) => o.host === "*" && matches(o)))
    ?.addresses;
}

/** Splits on ":" outside [brackets]; null on unbalanced brackets. Extra colons stay in the last field. */
function splitFields(spec: string, count: number): string[] | null {
  const fields: string[] = [];
  let current = "";
  let inBrackets = false;
  for (const ch of spec) {
    if (ch === "[") {
      if (inBrackets) return null;
      inBrackets = true;
    } else if (ch === "]") {
      if (!inBrackets) return null;
      inBrackets = false;
    }
    if (ch === ":" && !inBrackets && fields.length < count - 1) {
      fields.push(current);
      current = "";
    } else {
      current += ch;
    }
  }
  if (inBrackets) return null;
  fields.push(current);
  return fields;
}

function stripBrackets(host: string): string {
  return host.startsWith("[") && host.endsWith("]") ? host.slice(1, -1) : host;
}

function normalizeHost(raw: string, spec: string): string {
  const bracketed = raw.startsWith("[");
  const host = stripBrackets(raw).toLowerCase();
  if (bracketed && isIP(host) !== 6) throw new HostMappingSyntaxError(`invalid host "${raw}" in "${spec}": not an IPv6 address`);
  if (!bracketed && host.includes(":")) throw new HostMappingSyntaxError(`invalid host "${raw}" in "${spec}": IPv6 must be in brackets`);
  if (!/^[a-z0-9._:*-]+$/.test(host)) throw new HostMappingSyntaxError(`invalid host "${raw}" in "${spec}"`);
  return host;
}

function parsePort(raw: string, spec: string): number {
  const port = /^\d{1,5}$/.test(raw) ? Number(raw) : NaN;
  if (!(port >= 1 && port <= 65535)) throw new HostMappingSyntaxError(`invalid port "${raw}" in "${spec}"`);
  return port;
}
