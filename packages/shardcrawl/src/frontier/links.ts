// Packs links into the ARGV layout of lib.lua's add_links (used by add_links.lua and ack_page.lua):
//   k, segment bits, per-host cap, total cap, then per link: host, origin, rest, tier, suffix, k positions.
// Bad links are counted and skipped here, never sent, so one bad link cannot fail a page's batch.
import { MAX_TIER, type DiscoveredLink } from "../shared/types.js";
import type { BloomHasher, BloomParams } from "./bloom.js";
import { encodeSuffix, splitOrigin } from "./element.js";
import type { ScriptArg } from "./scripts.js";

/** A link with its Bloom positions already computed (e.g. in a parser worker thread). */
export interface HashedLink extends DiscoveredLink {
  bloom?: number[];
}

export interface QueueCaps {
  /** URLs queued per host (all tiers) beyond which new links of that host are dropped (0 = none). */
  maxQueuedPerHost: number;
  /** URLs queued in the whole frontier beyond which new links are dropped (0 = none). */
  maxQueuedTotal: number;
}

/** One call carries at most this many links (a page's links are capped well below it by the parser). */
export const MAX_LINKS_PER_CALL = 20_000;
/** Longer URLs are refused: they would bloat queues and are almost always traps. */
export const MAX_QUEUED_URL_LENGTH = 8192;

const HOST_RE = /^[^\s/?#\t]{1,255}$/;

/** Why a link is unusable, or undefined when it is fine. */
export function invalidLinkReason(link: HashedLink, params: Pick<BloomParams, "m" | "k">): string | undefined {
  if (typeof link.url !== "string" || link.url.length === 0) return "url-missing";
  if (link.url.length > MAX_QUEUED_URL_LENGTH) return "url-too-long";
  if (/[\t\r\n]/.test(link.url)) return "url-control-char";
  if (typeof link.host !== "string" || !HOST_RE.test(link.host)) return "host-invalid";
  if (!Number.isInteger(link.tier) || link.tier < 0 || link.tier > MAX_TIER) return "tier-invalid";
  if (!Number.isSafeInteger(link.depth) || link.depth < 0) return "depth-invalid";
  if (!Number.isSafeInteger(link.hops) || link.hops < 0) return "hops-invalid";
  if (link.bloom !== undefined) {
    if (!Array.isArray(link.bloom) || link.bloom.length !== params.k) return "bloom-invalid";
    for (const p of link.bloom) if (!Number.isSafeInteger(p) || p < 0 || p >= params.m) return "bloom-invalid";
  }
  return undefined;
}

export interface PackedLinks {
  args: ScriptArg[];
  /** Links skipped as unusable (never sent). */
  invalid: number;
}

export function packLinks(links: readonly HashedLink[], hasher: BloomHasher, params: BloomParams, caps: QueueCaps): PackedLinks {
  const args: ScriptArg[] = [params.k, params.segmentBits, caps.maxQueuedPerHost, caps.maxQueuedTotal];
  let invalid = 0;
  for (const link of links) {
    if (invalidLinkReason(link, params) !== undefined) {
      invalid++;
      continue;
    }
    const { origin, rest } = splitOrigin(link.url);
    args.push(link.host, origin, rest, link.tier, encodeSuffix(link.depth, link.hops, 0));
    for (const p of link.bloom ?? hasher.positions(link.url)) args.push(p);
  }
  return { args, invalid };
}
