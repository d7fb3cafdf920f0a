// Packs links into the argument layout of lib.lua's add_links (used by add_links.lua and
// ack_page.lua): segment bits, caps, the Bloom layout (bloomLayoutArg), ONE binary blob of
// per-link records (host index, origin index, tier, element length, the URL's Bloom record), the counts of distinct hosts and origins, and
// ONE text argument: those hosts and origins, each ended by "\n", then every link's queue element
// back to back. A fixed number of arguments whatever the link count: the client encodes no
// per-link argument (ioredis' per-argument framing and copying was most of its cost of an ack),
// and the script cuts out only the elements of links it queues (most links of a crawl are
// already seen), where Redis used to create a Lua string for every argument.
// Bad links are counted and skipped here, never sent, so one bad link cannot fail a page's batch.
// Admission (opt-out list, trap filters) happened before, at the caller (admit/batch-admission.ts).
import { MAX_TIER, type DiscoveredLink } from "../shared/types.js";
import type { BloomHasher, BloomParams } from "./bloom.js";
import { encodeRelative, encodeSuffix, isPacked, splitOrigin } from "./element.js";
import type { ScriptArg } from "./scripts.js";
import { cachedRegistrableDomain } from "../url/scope.js";

/** A link with its Bloom positions already computed (e.g. in a parser worker thread). */
export interface HashedLink extends DiscoveredLink {
  /** k positions (an array, or a view into a parser worker's Float64Array). */
  bloom?: ArrayLike<number>;
}

export interface QueueCaps {
  /** URLs queued per host (all tiers) beyond which new links of that host are dropped (0 = none). */
  maxQueuedPerHost: number;
  /** URLs queued in the whole frontier beyond which new links are dropped (0 = none). */
  maxQueuedTotal: number;
  /** Hosts admitted per registrable domain (0 or absent = none): new hosts past it admit nothing. */
  maxHostsPerDomain?: number;
}

/** One call carries at most this many links (a page's links are capped well below it by the parser). */
export const MAX_LINKS_PER_CALL = 20_000;
/** Longer URLs are refused: they would bloat queues and are almost always traps. */
export const MAX_QUEUED_URL_LENGTH = 8192;
/** Bytes of a link record before its Bloom positions: host u16, origin u16, tier u8, element bytes u16. */
const LINK_RECORD_BYTES = 7;
/** Origin index meaning "no origin: the element is the full URL". */
const NO_ORIGIN = 0xffff;

const HOST_RE = /^[^\s/?#\t]{1,255}$/;

function hasControlChar(s: string): boolean {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x7f) return true;
  }
  return false;
}

/** Why a link is unusable, or undefined when it is fine. */
export function invalidLinkReason(link: HashedLink, params: Pick<BloomParams, "m" | "k" | "blockBits">): string | undefined {
  if (typeof link.url !== "string" || link.url.length === 0) return "url-missing";
  if (link.url.length > MAX_QUEUED_URL_LENGTH) return "url-too-long";
  // Queue elements use control bytes as separators (element.ts); normalized URLs have none.
  if (hasControlChar(link.url)) return "url-control-char";
  if (typeof link.host !== "string" || !HOST_RE.test(link.host)) return "host-invalid";
  if (!Number.isInteger(link.tier) || link.tier < 0 || link.tier > MAX_TIER) return "tier-invalid";
  if (!Number.isSafeInteger(link.depth) || link.depth < 0) return "depth-invalid";
  if (!Number.isSafeInteger(link.hops) || link.hops < 0) return "hops-invalid";
  if (link.bloom !== undefined) {
    const b = link.bloom as unknown;
    if (!(Array.isArray(b) || b instanceof Float64Array) || link.bloom.length !== params.k) return "bloom-invalid";
    const b0 = params.blockBits ? Math.floor(link.bloom[0]! / params.blockBits) * params.blockBits : 0;
    for (let i = 0; i < link.bloom.length; i++) {
      const p = link.bloom[i]!;
      if (!Number.isSafeInteger(p) || p < 0 || p >= params.m) return "bloom-invalid";
      // A blocked filter's positions must share one block (the record carries one block index).
      if (params.blockBits && (p < b0 || p >= b0 + params.blockBits)) return "bloom-invalid";
    }
  }
  return undefined;
}

export interface PackedLinks {
  args: ScriptArg[];
  /** Links packed (sent). */
  count: number;
  /** Links skipped as unusable (never sent). */
  invalid: number;
  /** The URLs packed (sent), in order. */
  sentUrls: string[];
}

/**
 * Writes a URL's Bloom record: classic, k positions as big-endian u48 (positions are below 2^46,
 * see bloom.ts); blocked (blockBits > 0), the u48 block index then k u8 offsets in the block
 * (all positions lie in one block: BloomHasher).
 */
export function writePositions(buf: Buffer, offset: number, positions: ArrayLike<number>, blockBits = 0): void {
  if (blockBits > 0) {
    const block = Math.floor(positions[0]! / blockBits);
    buf.writeUIntBE(block, offset, 6);
    const base = block * blockBits;
    for (let i = 0; i < positions.length; i++) buf[offset + 6 + i] = positions[i]! - base;
    return;
  }
  for (let i = 0; i < positions.length; i++) buf.writeUIntBE(positions[i]!, offset + i * 6, 6);
}

/** Bytes of one URL's Bloom record (writePositions). */
export function bloomRecordBytes(params: Pick<BloomParams, "k" | "blockBits">): number {
  return params.blockBits ? 6 + params.k : 6 * params.k;
}

/** The layout argument of the Lua scripts (bloom_lib.lua bf_layout): "k" classic, "k" + "b" + block bits blocked. */
export function bloomLayoutArg(params: Pick<BloomParams, "k" | "blockBits">): string {
  return params.blockBits ? `${params.k}b${params.blockBits}` : String(params.k);
}

/** The blob and layout argument of bloom_test.lua for some URLs' positions. */
export function packBloomProbe(params: Pick<BloomParams, "k" | "blockBits">, positions: ReadonlyArray<ArrayLike<number>>): { layout: string; blob: Buffer } {
  const rec = bloomRecordBytes(params);
  const blob = Buffer.allocUnsafe(positions.length * rec);
  positions.forEach((p, j) => writePositions(blob, j * rec, p, params.blockBits));
  return { layout: bloomLayoutArg(params), blob };
}

export function packLinks(links: readonly HashedLink[], hasher: BloomHasher, params: BloomParams, caps: QueueCaps): PackedLinks {
  if (links.length > MAX_LINKS_PER_CALL) throw new RangeError(`frontier: at most ${MAX_LINKS_PER_CALL} links per call, got ${links.length}`);
  const rec = LINK_RECORD_BYTES + bloomRecordBytes(params);
  const blob = Buffer.allocUnsafe(links.length * rec);
  const hosts = new Map<string, number>();
  const origins = new Map<string, number>();
  const elements: string[] = [];
  const sentUrls: string[] = [];
  // Some host, origin or unpacked element has a char beyond ASCII: the text is then written piece
  // by piece (UTF-8, packed elements as latin1), else as one latin1 string.
  let wide = false;
  let invalid = 0;
  for (const link of links) {
    if (invalidLinkReason(link, params) !== undefined) {
      invalid++;
      continue;
    }
    const { origin, rest } = splitOrigin(link.url);
    const el = origin !== "" ? encodeRelative(rest, link.depth, link.hops, 0) : rest + encodeSuffix(link.depth, link.hops, 0);
    const packed = isPacked(el);
    const elBytes = packed ? el.length : Buffer.byteLength(el);
    if (elBytes > 0xffff) {
      invalid++;
      continue;
    }
    if (!packed && elBytes !== el.length) wide = true;
    let hi = hosts.get(link.host);
    if (hi === undefined) {
      hosts.set(link.host, (hi = hosts.size));
      if (Buffer.byteLength(link.host) !== link.host.length) wide = true;
    }
    let oi = NO_ORIGIN;
    if (origin !== "") {
      let o = origins.get(origin);
      if (o === undefined) {
        origins.set(origin, (o = origins.size));
        if (Buffer.byteLength(origin) !== origin.length) wide = true;
      }
      oi = o;
    }
    const at = elements.length * rec;
    blob.writeUInt16BE(hi, at);
    blob.writeUInt16BE(oi, at + 2);
    blob.writeUInt8(link.tier, at + 4);
    blob.writeUInt16BE(elBytes, at + 5);
    writePositions(blob, at + LINK_RECORD_BYTES, link.bloom ?? hasher.positions(link.url), params.blockBits);
    elements.push(el);
    sentUrls.push(link.url);
  }
  let names = "";
  for (const h of hosts.keys()) names += `${h}\n`;
  for (const o of origins.keys()) names += `${o}\n`;
  const text = wide
    ? Buffer.concat([Buffer.from(names), ...elements.map((e) => Buffer.from(e, isPacked(e) ? "latin1" : "utf8"))])
    : Buffer.from(names + elements.join(""), "latin1");
  const count = elements.length;
  const args: ScriptArg[] = [
    params.segmentBits, caps.maxQueuedPerHost, caps.maxQueuedTotal, bloomLayoutArg(params), blob.subarray(0, count * rec),
    hosts.size, origins.size, text,
  ];
  // The cap on hosts per registrable domain needs each host's domain (public suffix list, tldts).
  const dcap = caps.maxHostsPerDomain ?? 0;
  if (dcap > 0) {
    let doms = "";
    for (const h of hosts.keys()) doms += `${cachedRegistrableDomain(h)}\n`;
    args.push(dcap, Buffer.from(doms));
  }
  return { args, count, invalid, sentUrls };
}
