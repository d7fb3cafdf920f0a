// Hands queued URLs over to another owner (rebalancing, shard/rehome.ts): walks every host with
// state (P h:<host>), and for each host the caller gives away reads its tier queues in batches,
// lets the caller store each batch durably, then removes exactly that batch (lua/rehome_trim.lua),
// so a crash in between repeats URLs (the new owner's seen filter drops them) and never loses one.
// Run only on a stopped node (no fetcher or parser), after leases were recovered.
import type { Redis } from "ioredis";
import { MAX_TIER } from "../shared/types.js";
import { decodeElement } from "./element.js";
import type { FrontierKeys } from "./keys.js";
import { Scripts } from "./scripts.js";

const BATCH = 10_000;

export interface QueuedUrl {
  url: string;
  depth: number;
}

/** The full URL of a queue element (path+query elements get the host's stored origin back). */
export function elementUrl(element: string | Buffer, origin: string | null): QueuedUrl {
  const d = decodeElement(element);
  const url = d.url.startsWith("/") && origin ? origin + d.url : d.url;
  return { url, depth: d.depth };
}

export interface HandoverCounts {
  hostsScanned: number;
  hostsMoved: number;
  urlsMoved: number;
}

/**
 * `newOwner(host)` names the host's new owner, or null to keep it; `store(owner, urls)` must have
 * the batch durable when it resolves (the queue forgets it next). `moved(owner, n)` counts.
 */
export async function handOverQueues(
  redis: Redis,
  keys: FrontierKeys,
  newOwner: (host: string) => string | null,
  store: (owner: string, urls: QueuedUrl[]) => Promise<void>,
  moved: (owner: string, urls: number) => void = () => undefined,
): Promise<HandoverCounts> {
  const scripts = new Scripts(redis);
  const counts: HandoverCounts = { hostsScanned: 0, hostsMoved: 0, urlsMoved: 0 };
  const hostKey = keys.host("");
  let cursor = "0";
  do {
    const [next, found] = await redis.scan(cursor, "MATCH", `${hostKey}*`, "COUNT", 1000);
    cursor = next;
    for (const key of found) {
      const host = key.slice(hostKey.length);
      counts.hostsScanned++;
      const owner = newOwner(host);
      if (owner === null) continue;
      const origin = await redis.hget(key, "o");
      let n = 0;
      for (let tier = 0; tier <= MAX_TIER; tier++) {
        const qk = keys.queue(host, tier);
        for (;;) {
          const elements = await redis.lrangeBuffer(qk, 0, BATCH - 1); // packed elements are binary (element.ts)
          if (elements.length === 0) break;
          await store(owner, elements.map((e) => elementUrl(e, origin)));
          await scripts.run("rehome_trim", [keys.prefix, host, tier, elements.length]);
          n += elements.length;
        }
      }
      if (n) {
        counts.hostsMoved++;
        counts.urlsMoved += n;
        moved(owner, n);
      }
    }
  } while (cursor !== "0");
  return counts;
}
