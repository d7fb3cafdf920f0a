// The node-wide sample of recent fetch times (P fetchtimes, newest first, capped): every fetcher
// pushes its own and reads everyone's back, so all compute the same lease TTL (schedule/lease-ttl.ts).
import type { Redis } from "ioredis";

/** Pushes `batch` to the capped list at `key` and returns the list (one round trip). */
export async function shareFetchTimes(redis: Redis, key: string, batch: readonly number[], size: number): Promise<number[]> {
  const m = redis.multi();
  if (batch.length > 0) m.lpush(key, ...batch).ltrim(key, 0, size - 1);
  m.lrange(key, 0, size - 1);
  const r = await m.exec();
  const list = r?.[r.length - 1]?.[1];
  if (!Array.isArray(list)) return [];
  return list.map(Number).filter((n) => Number.isFinite(n) && n >= 0);
}
