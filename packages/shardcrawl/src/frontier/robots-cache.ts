// robots.txt cache: one key per origin with a TTL. The fetch stage decides what to store; this
// module only stores and checks the shape, so a damaged entry reads as "not cached" (refetch)
// instead of failing the fetch.
import type { Redis } from "ioredis";
import type { FrontierKeys } from "./keys.js";

/** disallow-all may say why (e.g. "dns: ENOTFOUND ..."), so pages refused meanwhile can tell. */
export type RobotsVerdict = { kind: "rules"; body: string } | { kind: "allow-all" } | { kind: "disallow-all"; reason?: string };
export type RobotsCacheEntry = RobotsVerdict & { fetchedAt: number };

/** Google reads the first 500 KiB of a robots.txt; a body above this bound is refused. */
export const MAX_ROBOTS_BODY_CHARS = 512 * 1024;
const MAX_TTL_MS = 30 * 24 * 3600 * 1000;
const MAX_REASON_CHARS = 500;

function isEntry(v: unknown): v is RobotsCacheEntry {
  if (!v || typeof v !== "object") return false;
  const o = v as Record<string, unknown>;
  if (typeof o.fetchedAt !== "number") return false;
  if (o.kind === "rules") return typeof o.body === "string";
  return o.kind === "allow-all" || o.kind === "disallow-all";
}

export class RobotsCache {
  constructor(private readonly redis: Redis, private readonly keys: FrontierKeys) {}

  /** The cached entry for an origin ("https://www.d1.test"), or undefined (absent, expired or damaged). */
  async get(origin: string): Promise<RobotsCacheEntry | undefined> {
    const raw = await this.redis.get(this.keys.robots(origin));
    if (raw === null) return undefined;
    try {
      const v: unknown = JSON.parse(raw);
      return isEntry(v) ? v : undefined;
    } catch {
      return undefined;
    }
  }

  async set(origin: string, entry: RobotsCacheEntry, ttlMs: number): Promise<void> {
    if (!isEntry(entry)) throw new TypeError(`robots cache: malformed entry for ${origin}`);
    if (entry.kind === "rules" && entry.body.length > MAX_ROBOTS_BODY_CHARS) {
      throw new RangeError(`robots cache: body for ${origin} is ${entry.body.length} chars, above ${MAX_ROBOTS_BODY_CHARS}`);
    }
    if (!Number.isSafeInteger(ttlMs) || ttlMs < 1 || ttlMs > MAX_TTL_MS) throw new RangeError(`robots cache: ttlMs must be in [1, 30 days], got ${ttlMs}`);
    const value = entry.kind === "rules"
      ? { kind: entry.kind, body: entry.body, fetchedAt: entry.fetchedAt }
      : entry.kind === "disallow-all" && typeof entry.reason === "string"
        ? { kind: entry.kind, fetchedAt: entry.fetchedAt, reason: entry.reason.slice(0, MAX_REASON_CHARS) }
        : { kind: entry.kind, fetchedAt: entry.fetchedAt };
    await this.redis.set(this.keys.robots(origin), JSON.stringify(value), "PX", ttlMs);
  }
}
