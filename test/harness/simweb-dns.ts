// simweb with its name service: its own DNS server (query log) and hosts on their own loopback
// addresses (request log field `addr`). The crawl asks simweb's DNS server (--dns-server) and
// --connect-to changes only the port, so each request goes to the address DNS gave.
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startSimwebProcess, type SimwebProcess } from "./simweb.js";
import { TEST_UA } from "./crawl.js";

export interface SimwebWithDns extends SimwebProcess {
  /** UDP port of simweb's DNS server. */
  dns: number;
  /** Loopback addresses simweb serves hosts on (besides 127.0.0.1). */
  addresses: string[];
  dnsLogFile: string;
}

export interface DnsLogLine {
  ts: number;
  name: string;
  type: string;
  answer: string;
  ttl?: number;
}

export interface AddressedRequest {
  ts: number;
  end: number;
  host: string;
  path: string;
  status: number;
  addr?: string;
  conn?: number;
}

/** `configArgs` must give a config with dns.addresses >= 1. */
export async function startSimwebWithDns(configArgs: string[]): Promise<SimwebWithDns> {
  const dnsLogFile = join(mkdtempSync(join(tmpdir(), "simweb-dns-")), "dns.jsonl");
  const sim = await startSimwebProcess({ extraArgs: [...configArgs, "--dns-port", "0", "--dns-log", dnsLogFile], startTimeoutMs: 60_000 });
  const info = sim as SimwebProcess & { dns?: number; addresses?: string[] };
  if (info.dns === undefined || !info.addresses) throw new Error("simweb started without its DNS server");
  return Object.assign(sim, { dns: info.dns, addresses: info.addresses, dnsLogFile });
}

/** Crawl flags: names through simweb's DNS server, connections to the address it answered. */
export function dnsCrawlFlags(sim: SimwebWithDns): string[] {
  return [
    "--allow-private", "--ca-file", sim.ca, "--user-agent", TEST_UA,
    "--dns-server", `127.0.0.1:${sim.dns}`,
    "--connect-to", `:80::${sim.http}`, "--connect-to", `:443::${sim.https}`,
  ];
}

export function readDnsLog(file: string): DnsLogLine[] {
  return readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as DnsLogLine);
}

export function readAddressedLog(file: string): AddressedRequest[] {
  return readFileSync(file, "utf8").split("\n").filter((l) => l.trim()).map((l) => JSON.parse(l) as AddressedRequest);
}

/** Most requests in flight at once per key (an end at t comes before a start at t). */
export function maxInFlightBy<T extends { ts: number; end: number }>(log: T[], key: (r: T) => string): Map<string, number> {
  const events = new Map<string, Array<[number, number]>>();
  for (const r of log) {
    const k = key(r);
    let list = events.get(k);
    if (!list) events.set(k, (list = []));
    list.push([r.ts, 1], [Math.max(r.ts, r.end), -1]);
  }
  const out = new Map<string, number>();
  for (const [k, list] of events) {
    list.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    let active = 0, max = 0;
    for (const [, d] of list) max = Math.max(max, (active += d));
    out.set(k, max);
  }
  return out;
}
