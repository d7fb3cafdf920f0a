// robots.txt cache: one key per origin with a TTL. The fetch stage decides what to store; this
// module only stores and checks the shape, so a damaged entry reads as "not cached" (refetch)
// instead of failing the fetch. A good entry may be kept past its freshness (keepMs) as the
// "last cached copy" RFC 9309 2.3.1.4 lets a crawler use once robots.txt has been unreachable
// for a long time (fetch/robots-outage.ts); get() never returns a stale entry, getLast() does.
//
// The cache's total bytes are bounded (maxBytes): it is the one part of the node's Redis that grows
// with the hosts ever met, not with the work queued, and at millions of hosts per node it would
// outgrow any budget. Each write runs lua/robots_set.lua, which stores the entry, charges its bytes
// and evicts the oldest writes past the bound in one step. An evicted origin reads as "not cached":
// its robots.txt is simply fetched again when its host comes up (counted in P stats robots:evicted).
// Long bodies are stored deflated (COMPRESS_MIN_CHARS): a 500 KiB file costs ~60 KB.
import { promisify } from "node:util";
import { deflateRaw, inflateRaw } from "node:zlib";
import type { Redis } from "ioredis";
import type { FrontierKeys } from "./keys.js";
import { Scripts } from "./scripts.js";

const deflate = promisify(deflateRaw);
const inflate = promisify(inflateRaw);

/** disallow-all may say why (e.g. "dns: ENOTFOUND ..."), so pages refused meanwhile can tell. */
/** disallow-all may carry the error class its pages fail with (a permanent failure: "dns", "tls"). */
export type RobotsVerdict = { kind: "rules"; body: string } | { kind: "allow-all" } | { kind: "disallow-all"; reason?: string; errorClass?: string };
export type RobotsCacheEntry = RobotsVerdict & { fetchedAt: number };

/** Google reads the first 500 KiB of a robots.txt; a body above this bound is refused. */
export const MAX_ROBOTS_BODY_CHARS = 512 * 1024;
const MAX_TTL_MS = 30 * 24 * 3600 * 1000;
/** How long a good entry may be kept past its freshness (above the longest sensible --robots-outage-max). */
const MAX_KEEP_MS = 365 * 24 * 3600 * 1000;
const MAX_REASON_CHARS = 500;
/**
 * Default bound: 256 MiB holds ~500,000 origins at the few hundred bytes a trimmed file costs
 * (fetch/robots-trim.ts; simweb's and the real web bench's files trim to 0.1-2 KB) or ~500 of the
 * 500 KiB files RFC 9309 lets a site serve, a small share of a node's Redis whatever the host count.
 */
export const DEFAULT_ROBOTS_CACHE_MAX_BYTES = 256 * 1024 * 1024;
/**
 * The bound for --robots-cache-max-bytes `configured` (0: the default, or a quarter of the node's
 * Redis memory budget when that is less, so a tight budget is not mostly robots.txt files).
 */
export function robotsCacheMaxBytes(configured: number, redisBudgetBytes = 0): number {
  if (configured > 0) return configured;
  return redisBudgetBytes > 0 ? Math.min(DEFAULT_ROBOTS_CACHE_MAX_BYTES, Math.floor(redisBudgetBytes / 4)) : DEFAULT_ROBOTS_CACHE_MAX_BYTES;
}
/**
 * A rules body longer than this is stored deflated (field z, base64): the long files are long lists
 * of paths (simweb's 500 KiB "large" file: 512,000 chars -> 58,540), and a memo reloads one at most
 * once a minute per host. Shorter ones stay plain (compression would save little and cost a call).
 */
const COMPRESS_MIN_CHARS = 2048;
/** Entries one write may remove (bounded work per write; writes come one per robots.txt fetch). */
const MAX_EVICT_PER_WRITE = 32;
/** What Redis spends per entry besides the value and the origin's three copies (key, hash field, zset member). */
const ENTRY_OVERHEAD_BYTES = 160;

function isEntry(v: unknown): v is RobotsCacheEntry {
  if (!v || typeof v !== "object") return false;
  const o = v as Record<string, unknown>;
  if (typeof o.fetchedAt !== "number") return false;
  if (o.kind === "rules") return typeof o.body === "string";
  return o.kind === "allow-all" || o.kind === "disallow-all";
}

export class RobotsCache {
  private readonly scripts: Scripts;
  /** The cache's byte bound (0 = none): the node's --robots-cache-max-bytes (robotsCacheMaxBytes). */
  maxBytes: number;

  /** `scripts`: the frontier's, when it has them (one function library loader per client). */
  constructor(private readonly redis: Redis, private readonly keys: FrontierKeys, opts: { scripts?: Scripts; maxBytes?: number } = {}) {
    this.scripts = opts.scripts ?? new Scripts(redis);
    this.maxBytes = opts.maxBytes ?? DEFAULT_ROBOTS_CACHE_MAX_BYTES;
  }

  /** The cached entry for an origin ("https://www.d1.test"), or undefined (absent, expired or damaged). */
  async get(origin: string, now: number = Date.now()): Promise<RobotsCacheEntry | undefined> {
    const v = await this.read(origin);
    return v && (v.fresh === undefined || v.fresh > now) ? v.entry : undefined;
  }

  /** The last good entry (rules or allow-all), fresh or kept past its freshness; undefined when none. */
  async getLast(origin: string): Promise<RobotsCacheEntry | undefined> {
    const v = await this.read(origin);
    return v && v.entry.kind !== "disallow-all" ? v.entry : undefined;
  }

  /** Milliseconds the entry stays fresh (get() returns it), or null when there is none. */
  async freshForMs(origin: string, now: number = Date.now()): Promise<number | null> {
    const v = await this.read(origin);
    if (!v) return null;
    if (v.fresh !== undefined) return v.fresh > now ? v.fresh - now : null;
    const pttl = await this.redis.pttl(this.keys.robots(origin));
    return pttl >= 0 ? pttl : null;
  }

  private async read(origin: string): Promise<{ entry: RobotsCacheEntry; fresh?: number } | undefined> {
    const raw = await this.redis.get(this.keys.robots(origin));
    if (raw === null) return undefined;
    try {
      const v: unknown = JSON.parse(raw);
      if (v && typeof v === "object" && (v as { kind?: unknown }).kind === "rules" && typeof (v as { z?: unknown }).z === "string") {
        const o = v as { z?: string; body?: string };
        // Bounded: a damaged or hostile value cannot inflate to more than a body may hold.
        o.body = (await inflate(Buffer.from(o.z!, "base64"), { maxOutputLength: 4 * MAX_ROBOTS_BODY_CHARS })).toString("utf8");
        delete o.z;
      }
      if (!isEntry(v)) return undefined;
      const fresh = (v as { fresh?: unknown }).fresh;
      return typeof fresh === "number" ? { entry: v, fresh } : { entry: v };
    } catch {
      return undefined;
    }
  }

  /**
   * Stores an entry fresh for ttlMs. keepMs > 0 keeps a rules/allow-all entry that much longer as
   * the last cached copy (getLast); get() treats it as absent once ttlMs has passed.
   */
  async set(origin: string, entry: RobotsCacheEntry, ttlMs: number, keepMs = 0, now: number = Date.now()): Promise<void> {
    if (!isEntry(entry)) throw new TypeError(`robots cache: malformed entry for ${origin}`);
    if (entry.kind === "rules" && entry.body.length > MAX_ROBOTS_BODY_CHARS) {
      throw new RangeError(`robots cache: body for ${origin} is ${entry.body.length} chars, above ${MAX_ROBOTS_BODY_CHARS}`);
    }
    if (!Number.isSafeInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_TTL_MS) throw new RangeError(`robots cache: ttlMs must be in [1, 30 days], got ${ttlMs}`);
    const keep = entry.kind === "disallow-all" ? 0 : Math.min(MAX_KEEP_MS, Math.max(0, Math.round(keepMs)));
    const value: Record<string, unknown> = entry.kind === "rules"
      ? entry.body.length > COMPRESS_MIN_CHARS
        ? { kind: entry.kind, z: (await deflate(entry.body)).toString("base64"), fetchedAt: entry.fetchedAt }
        : { kind: entry.kind, body: entry.body, fetchedAt: entry.fetchedAt }
      : entry.kind === "disallow-all" && typeof entry.reason === "string"
        ? { kind: entry.kind, fetchedAt: entry.fetchedAt, reason: entry.reason.slice(0, MAX_REASON_CHARS) }
        : { kind: entry.kind, fetchedAt: entry.fetchedAt };
    if (entry.kind === "disallow-all" && typeof entry.errorClass === "string" && /^[a-z-]{1,40}$/.test(entry.errorClass)) value.errorClass = entry.errorClass;
    if (keep > 0) value.fresh = now + ttlMs;
    const json = JSON.stringify(value);
    const charged = Buffer.byteLength(json) + 3 * Buffer.byteLength(origin) + ENTRY_OVERHEAD_BYTES;
    await this.scripts.run("robots_set", [this.keys.prefix, origin, json, ttlMs + keep, charged, this.maxBytes, MAX_EVICT_PER_WRITE]);
  }

  /** Bytes the cache is charged now (entries past their TTL included until they are evicted) and entries evicted so far. */
  async usage(): Promise<{ bytes: number; evicted: number }> {
    const [bytes, evicted] = await this.redis.hmget(this.keys.stats, "robots:bytes", "robots:evicted");
    return { bytes: Number(bytes ?? 0), evicted: Number(evicted ?? 0) };
  }
}
