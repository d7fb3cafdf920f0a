// A DNS server on loopback UDP for tests (the crawler reaches it with --dns-server): each name's
// answer comes from a rule -- addresses, NXDOMAIN, SERVFAIL, or silence (the client times out).
import { createSocket, type Socket } from "node:dgram";
import dnsPacket from "dns-packet";

/** `ttl`: the records' TTL in seconds (default 60). */
export type DnsAnswer = { addresses: string[]; ttl?: number } | "nxdomain" | "servfail" | "silent";

export interface TestDnsServer {
  port: number;
  /** "127.0.0.1:<port>", as --dns-server takes it. */
  address: string;
  /** Questions asked, "<name> <type>" in arrival order. */
  questions: string[];
  close(): Promise<void>;
}

/** `answer(name)` decides per name (lower case, no trailing dot). */
export async function startDnsServer(answer: (name: string) => DnsAnswer): Promise<TestDnsServer> {
  const socket: Socket = createSocket("udp4");
  const questions: string[] = [];
  socket.on("message", (msg, rinfo) => {
    let query: dnsPacket.Packet;
    try {
      query = dnsPacket.decode(msg);
    } catch {
      return;
    }
    const q = query.questions?.[0];
    if (!q) return;
    const name = q.name.toLowerCase().replace(/\.$/, "");
    questions.push(`${name} ${q.type}`);
    const a = answer(name);
    if (a === "silent") return;
    const base = { id: query.id, type: "response" as const, questions: [q] };
    let reply: Buffer;
    if (a === "nxdomain" || a === "servfail") {
      // The rcode is the low 4 bits of the header flags: 3 = NXDOMAIN, 2 = SERVFAIL.
      reply = dnsPacket.encode({ ...base, flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE | (a === "nxdomain" ? 3 : 2) });
    } else {
      const family = q.type === "AAAA" ? 6 : 4;
      const addrs = a.addresses.filter((x) => (family === 6 ? x.includes(":") : !x.includes(":")));
      reply = dnsPacket.encode({
        ...base,
        flags: dnsPacket.RECURSION_DESIRED | dnsPacket.RECURSION_AVAILABLE,
        answers: addrs.map((data) => ({ type: family === 6 ? ("AAAA" as const) : ("A" as const), name: q.name, ttl: a.ttl ?? 60, class: "IN" as const, data })),
      });
    }
    socket.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once("error", reject);
    socket.bind(0, "127.0.0.1", () => resolve());
  });
  const port = socket.address().port;
  return {
    port,
    address: `127.0.0.1:${port}`,
    questions,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
