// Rebalancing: after the cluster changed (a node added, removed or re-weighted), a stopped node
// moves the queued URLs of hosts it no longer owns to its outbox, one file series per new owner;
// the normal exchange then delivers them and the owners ingest them. Each batch is written to the
// outbox (and the file finished) before rehome_trim.lua removes exactly those URLs from the queue,
// so a crash in between repeats URLs (the owner's Bloom filter drops them) and never loses one.
import { readFileSync } from "node:fs";
import type { Redis } from "ioredis";
import { MAX_TIER } from "../shared/types.js";
import { decodeElement } from "../frontier/element.js";
import { OutboxWriter } from "./outbox-writer.js";
import type { ShardRouter } from "./shard-spec.js";

const TRIM_LUA = readFileSync(new URL("../../src/shard/lua/rehome_trim.lua", import.meta.url), "utf8");
const BATCH = 10_000;

export interface RehomeReport {
  hostsScanned: number;
  hostsMoved: number;
  urlsMoved: number;
  byOwner: Record<string, number>;
}

/** The full URL of a queue element (path+query elements get the host's stored origin back). */
export function elementUrl(element: string | Buffer, origin: string | null): { url: string; depth: number } {
  const d = decodeElement(element);
  const url = d.url.startsWith("/") && origin ? origin + d.url : d.url;
  return { url, depth: d.depth };
}

export async function rehomeQueues(redis: Redis, prefix: string, router: ShardRouter, outbox: OutboxWriter): Promise<RehomeReport> {
  const report: RehomeReport = { hostsScanned: 0, hostsMoved: 0, urlsMoved: 0, byOwner: {} };
  const hostKey = `${prefix}h:`;
  let cursor = "0";
  do {
    const [next, keys] = await redis.scan(cursor, "MATCH", `${hostKey}*`, "COUNT", 1000);
    cursor = next;
    for (const key of keys) {
      const host = key.slice(hostKey.length);
      report.hostsScanned++;
      const owner = router.ownerOfHost(host);
      if (owner === router.spec.self) continue;
      const origin = await redis.hget(key, "o");
      let moved = 0;
      for (let tier = 0; tier <= MAX_TIER; tier++) {
        const qk = `${prefix}q${tier}:${host}`;
        for (;;) {
          const elements = await redis.lrangeBuffer(qk, 0, BATCH - 1); // packed elements are binary (frontier/element.ts)
          if (elements.length === 0) break;
          await outbox.append(owner, elements.map((e) => elementUrl(e, origin)));
          // On disk and finished before the queue forgets them.
          await outbox.close();
          await redis.eval(TRIM_LUA, 0, prefix, host, String(tier), String(elements.length));
          moved += elements.length;
        }
      }
      if (moved) {
        report.hostsMoved++;
        report.urlsMoved += moved;
        report.byOwner[owner] = (report.byOwner[owner] ?? 0) + moved;
      }
    }
  } while (cursor !== "0");
  return report;
}
