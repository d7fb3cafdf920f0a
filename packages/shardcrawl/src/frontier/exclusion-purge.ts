// Removing what an exclusion covers from the queues (exclude_purge.lua per host). A standalone
// function so `shardcrawl exclude` can run it against a node's Redis without opening a Frontier
// (which would rewrite the node's flow settings with its own).
import type { Redis } from "ioredis";
import { hostOf } from "../url/normalize.js";
import { hostUnder, type Exclusion } from "./exclusions.js";
import type { FrontierKeys } from "./keys.js";
import type { ScriptArg, Scripts } from "./scripts.js";

const globEscape = (s: string) => s.replace(/[*?[\]\\]/g, "\\$&");

/**
 * Removes the queued URLs `e` covers, on every host it names (a host pattern: the host and all
 * hosts under it, found by a SCAN of the host hashes; a URL prefix: its host only). Counted in
 * stats "excluded". `common` is ARGV[1..4] of the host scripts (prefix, now, delay, concurrency).
 * Returns how many URLs were removed.
 */
export async function purgeExcluded(redis: Redis, keys: FrontierKeys, scripts: Scripts, common: ScriptArg[], e: Exclusion): Promise<number> {
  let removed = 0;
  const purge = async (host: string, prefix: string) => {
    removed += Number(await scripts.run("exclude_purge", [...common, host, prefix]));
  };
  if (e.kind === "url-prefix") {
    const host = hostOf(e.pattern);
    if (host) await purge(host, e.pattern);
    return removed;
  }
  const hostKeyPrefix = keys.host("");
  const match = `${globEscape(hostKeyPrefix)}*${globEscape(e.pattern)}`;
  let cursor = "0";
  do {
    const [next, found] = await redis.scan(cursor, "MATCH", match, "COUNT", 1000);
    cursor = next;
    for (const key of found) {
      const host = key.slice(hostKeyPrefix.length);
      if (hostUnder(host, e.pattern)) await purge(host, "");
    }
  } while (cursor !== "0");
  return removed;
}
