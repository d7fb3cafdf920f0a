// SSRF guard: decides whether the crawler may open a connection to an IP address.
// The fetcher checks the address it is about to connect to (after connect-to mapping, --resolve
// overrides and DNS), so DNS rebinding and odd IP spellings cannot smuggle in an internal target.
import { BlockList, isIPv4, isIPv6 } from "node:net";

interface Rule {
  reason: string;
  list: BlockList;
}

function rule(reason: string, network: string, prefix: number, family: "ipv4" | "ipv6"): Rule {
  const list = new BlockList();
  list.addSubnet(network, prefix, family);
  return { reason, list };
}

// Special-purpose IPv4 ranges (RFC 6890 and friends) that are never the public web.
const V4_RULES: Rule[] = [
  rule("this-network", "0.0.0.0", 8, "ipv4"),
  rule("private", "10.0.0.0", 8, "ipv4"),
  rule("cgnat", "100.64.0.0", 10, "ipv4"),
  rule("loopback", "127.0.0.0", 8, "ipv4"),
  rule("link-local", "169.254.0.0", 16, "ipv4"),
  rule("private", "172.16.0.0", 12, "ipv4"),
  rule("ietf-protocol", "192.0.0.0", 24, "ipv4"),
  rule("documentation", "192.0.2.0", 24, "ipv4"),
  rule("6to4-relay", "192.88.99.0", 24, "ipv4"),
  rule("private", "192.168.0.0", 16, "ipv4"),
  rule("benchmarking", "198.18.0.0", 15, "ipv4"),
  rule("documentation", "198.51.100.0", 24, "ipv4"),
  rule("documentation", "203.0.113.0", 24, "ipv4"),
  rule("multicast", "224.0.0.0", 4, "ipv4"),
  // 240/4 is reserved and includes the limited broadcast address 255.255.255.255.
  rule("reserved-or-broadcast", "240.0.0.0", 4, "ipv4"),
];

const V6_RULES: Rule[] = [
  rule("unspecified", "::", 128, "ipv6"),
  rule("loopback", "::1", 128, "ipv6"),
  rule("discard", "100::", 64, "ipv6"),
  rule("nat64-local", "64:ff9b:1::", 48, "ipv6"),
  rule("documentation", "2001:db8::", 32, "ipv6"),
  rule("benchmarking", "2001:2::", 48, "ipv6"),
  rule("orchid", "2001:10::", 28, "ipv6"),
  rule("unique-local", "fc00::", 7, "ipv6"),
  rule("link-local", "fe80::", 10, "ipv6"),
  rule("site-local", "fec0::", 10, "ipv6"),
  rule("multicast", "ff00::", 8, "ipv6"),
];

/**
 * Why an address is refused, or null when it may be connected to.
 * Accepts dotted-quad IPv4, IPv6 (optionally in brackets, with a zone id), and the legacy IPv4
 * spellings a URL host may carry (2130706433, 0x7f.1, 0177.0.0.1). Anything that is not an IP
 * address is refused ("not-an-ip"): the guard fails closed.
 */
export function blockReason(address: string): string | null {
  let ip = address.trim();
  if (ip.startsWith("[") && ip.endsWith("]")) ip = ip.slice(1, -1);
  const zone = ip.indexOf("%");
  if (zone !== -1) ip = ip.slice(0, zone);

  if (isIPv4(ip)) return ipv4Reason(ip);
  if (isIPv6(ip)) return ipv6Reason(ip);
  const legacy = canonicalLegacyIPv4(ip);
  if (legacy !== null) return ipv4Reason(legacy);
  return "not-an-ip";
}

/** True when the crawler must not connect to this address (see blockReason). */
export function isBlockedAddress(address: string): boolean {
  return blockReason(address) !== null;
}

function ipv4Reason(ip: string): string | null {
  for (const r of V4_RULES) if (r.list.check(ip, "ipv4")) return r.reason;
  return null;
}

function ipv6Reason(ip: string): string | null {
  const bytes = parseIPv6(ip);
  if (bytes === null) return "not-an-ip";
  const embedded = embeddedIPv4(bytes);
  if (embedded !== null) {
    const inner = ipv4Reason(embedded.ipv4);
    if (inner !== null) return `${inner} (via ${embedded.kind})`;
  }
  for (const r of V6_RULES) if (r.list.check(ip, "ipv6")) return r.reason;
  return null;
}

/**
 * WHATWG URL host parsing turns legacy IPv4 spellings (decimal, octal, hex, short forms) into a
 * dotted quad; reuse it instead of re-implementing inet_aton. Returns null for non-IPv4 strings.
 */
function canonicalLegacyIPv4(host: string): string | null {
  if (!/^[0-9a-fA-FxX.]+$/.test(host)) return null;
  try {
    const hostname = new URL(`http://${host}/`).hostname;
    return isIPv4(hostname) ? hostname : null;
  } catch {
    return null;
  }
}

const MAPPED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff];
const TRANSLATED_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0];
const COMPATIBLE_PREFIX = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0];
const NAT64_PREFIX = [0, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0];

function startsWith(bytes: Uint8Array, prefix: number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

function quad(bytes: Uint8Array, at: number, xor = 0): string {
  return [0, 1, 2, 3].map((i) => ((bytes[at + i] ?? 0) ^ xor).toString()).join(".");
}

/** The IPv4 address an IPv6 address carries by a standard embedding, if any. */
function embeddedIPv4(bytes: Uint8Array): { ipv4: string; kind: string } | null {
  if (startsWith(bytes, MAPPED_PREFIX)) return { ipv4: quad(bytes, 12), kind: "ipv4-mapped ipv6" };
  if (startsWith(bytes, TRANSLATED_PREFIX)) return { ipv4: quad(bytes, 12), kind: "ipv4-translated ipv6" };
  if (startsWith(bytes, NAT64_PREFIX)) return { ipv4: quad(bytes, 12), kind: "nat64" };
  if (startsWith(bytes, COMPATIBLE_PREFIX)) {
    // :: and ::1 are handled by the IPv6 rules; everything else here is IPv4-compatible (deprecated).
    const v4 = quad(bytes, 12);
    return v4 === "0.0.0.0" || v4 === "0.0.0.1" ? null : { ipv4: v4, kind: "ipv4-compatible ipv6" };
  }
  if (bytes[0] === 0x20 && bytes[1] === 0x02) return { ipv4: quad(bytes, 2), kind: "6to4" };
  if (bytes[0] === 0x20 && bytes[1] === 0x01 && bytes[2] === 0 && bytes[3] === 0) {
    // Teredo: the client's IPv4 address is stored inverted in the last 32 bits.
    return { ipv4: quad(bytes, 12, 0xff), kind: "teredo" };
  }
  return null;
}

/**
 * IPv6 text -> 16 bytes. Node validates IPv6 (net.isIPv6) but exposes no inet_pton, and the
 * embedded-IPv4 checks above need the bytes. Input must already pass net.isIPv6.
 */
function parseIPv6(ip: string): Uint8Array | null {
  let text = ip.toLowerCase();
  const out = new Uint8Array(16);
  // A trailing dotted quad (::ffff:1.2.3.4) stands for the last two groups.
  const lastColon = text.lastIndexOf(":");
  const tail = text.slice(lastColon + 1);
  if (tail.includes(".")) {
    if (!isIPv4(tail)) return null;
    const [a = 0, b = 0, c = 0, d = 0] = tail.split(".").map(Number);
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const halves = text.split("::");
  if (halves.length > 2) return null;
  const head = halves[0] ? halves[0].split(":") : [];
  const rest = halves.length === 2 && halves[1] ? halves[1].split(":") : [];
  const groups = halves.length === 2 ? [...head, ...Array<string>(8 - head.length - rest.length).fill("0"), ...rest] : head;
  if (groups.length !== 8) return null;
  for (let i = 0; i < 8; i++) {
    const value = Number.parseInt(groups[i] ?? "", 16);
    if (!Number.isInteger(value) || value < 0 || value > 0xffff) return null;
    out[i * 2] = value >> 8;
    out[i * 2 + 1] = value & 0xff;
  }
  return out;
}
