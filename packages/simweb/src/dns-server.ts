// simweb's DNS server: UDP on loopback, answers from the NameService (name-service.ts), and a query
// log (one JSON line per question) so tests judge a crawler's lookups from the server's side: how
// often a name was asked, and what it was told. dns-packet does the wire format.
import { createSocket, type Socket } from "node:dgram";
import dnsPacket from "dns-packet";
import { RequestLog } from "./log.js";
import type { NameService } from "./name-service.js";

export interface DnsLogEntry {
  /** Arrival, epoch ms. */
  ts: number;
  name: string;
  type: string;
  /** An address, or nxdomain / servfail / silent (no reply sent) / nodata. */
  answer: string;
  ttl?: number;
}

export interface RunningDns {
  port: number;
  close(): Promise<void>;
}

/** rcode is the low 4 bits of the header flags. */
const RCODE = { nxdomain: 3, servfail: 2 } as const;

export async function startDnsServer(names: NameService, opts: { bind: string; port: number; logFile?: string }): Promise<RunningDns> {
  const socket: Socket = createSocket("udp4");
  const log = opts.logFile ? new RequestLog<DnsLogEntry>(opts.logFile) : null;
  socket.on("message", (msg, rinfo) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      return; // not DNS: nothing to answer
    }
    const q = query.questions?.[0];
    if (!q) return;
    const name = q.name.toLowerCase().replace(/\.$/, "");
    const now = Date.now();
    const a = names.answer(name, now, q.type === "A");
    const entry: DnsLogEntry = { ts: now, name, type: q.type, answer: a.kind === "address" ? (q.type === "A" ? a.address : "nodata") : a.kind };
    if (a.kind === "address" && q.type === "A") entry.ttl = a.ttl;
    log?.write(entry);
    if (a.kind === "silent") return;
    const base = { id: query.id, type: "response" as const, questions: [q] };
    const flags = dnsPacket.AUTHORITATIVE_ANSWER | dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE;
    let reply: Buffer;
    if (a.kind === "nxdomain" || a.kind === "servfail") {
      reply = dnsPacket.encode({ ...base, flags: flags | RCODE[a.kind] });
    } else {
      // Only A records exist; any other type of an existing name is NODATA (NOERROR, no answers).
      const answers = q.type === "A" ? [{ type: "A" as const, name: q.name, ttl: a.ttl, class: "IN" as const, data: a.address }] : [];
      reply = dnsPacket.encode({ ...base, flags, answers });
    }
    socket.send(reply, rinfo.port, rinfo.address);
  });
  socket.on("error", () => undefined); // a send to a vanished client must not stop the server
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(opts.port, opts.bind, () => {
      socket.off("error", reject);
      resolve();
    });
  });
  return {
    port: socket.address().port,
    close: () =>
      new Promise<void>((resolve) => {
        socket.close(() => {
          log?.close();
          resolve();
        });
      }),
  };
}
