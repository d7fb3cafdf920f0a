// The crawl scope, stored beside the frontier (P scope:mode, P scope:keys; keys.ts) so a resumed
// crawl, a restarted parser and `inspect url` know it without the seed file.
import type { Redis } from "ioredis";
import { scopeSpecOf, type ScopeMode, type ScopeSpec } from "../url/scope.js";
import type { FrontierKeys } from "./keys.js";

/** Members per SADD / SSCAN call: big seed lists never make one long blocking command. */
const CHUNK = 10_000;

export class CrawlScopeStore {
  constructor(private readonly redis: Redis, private readonly keys: FrontierKeys) {}

  async save(mode: ScopeMode, seeds: readonly string[]): Promise<void> {
    const multi = this.redis.multi().set(this.keys.scopeMode, mode);
    const list = scopeSpecOf(seeds, mode).keys;
    for (let i = 0; i < list.length; i += CHUNK) multi.sadd(this.keys.scopeKeys, ...list.slice(i, i + CHUNK));
    await multi.exec();
  }

  async exists(): Promise<boolean> {
    return (await this.redis.exists(this.keys.scopeMode)) === 1;
  }

  /** The stored mode, or null when no scope was saved. */
  async mode(): Promise<ScopeMode | null> {
    return (await this.redis.get(this.keys.scopeMode)) as ScopeMode | null;
  }

  /** Whether `key` (a registrable domain or host, as the mode says) is one of the seeds'. */
  async has(key: string): Promise<boolean> {
    return (await this.redis.sismember(this.keys.scopeKeys, key)) === 1;
  }

  async load(): Promise<ScopeSpec> {
    const mode = (await this.mode()) ?? "domains";
    const keys: string[] = [];
    let cursor = "0";
    do {
      const [next, batch] = await this.redis.sscan(this.keys.scopeKeys, cursor, "COUNT", CHUNK);
      keys.push(...batch);
      cursor = next;
    } while (cursor !== "0");
    return { mode, keys };
  }
}
