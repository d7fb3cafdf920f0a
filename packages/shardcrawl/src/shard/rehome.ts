// Rebalancing: after the cluster changed (a node added, removed or re-weighted), a stopped node
// moves the queued URLs of hosts it no longer owns to its outbox, one file series per new owner;
// the normal exchange then delivers them and the owners ingest them. Each batch is written to the
// outbox (and the file finished) before the frontier removes exactly those URLs from the queue
// (frontier/queue-handover.ts), so a crash in between repeats URLs and never loses one.
import type { Redis } from "ioredis";
import { FrontierKeys, handOverQueues } from "../frontier/index.js";
import type { OutboxWriter } from "./outbox-writer.js";
import type { ShardRouter } from "./shard-spec.js";

export interface RehomeReport {
  hostsScanned: number;
  hostsMoved: number;
  urlsMoved: number;
  byOwner: Record<string, number>;
}

export async function rehomeQueues(redis: Redis, prefix: string, router: ShardRouter, outbox: OutboxWriter): Promise<RehomeReport> {
  const byOwner: Record<string, number> = {};
  const counts = await handOverQueues(
    redis,
    new FrontierKeys(prefix),
    (host) => {
      const owner = router.ownerOfHost(host);
      return owner === router.spec.self ? null : owner;
    },
    async (owner, urls) => {
      await outbox.append(owner, urls);
      // On disk and finished before the queue forgets them.
      await outbox.close();
    },
    (owner, n) => { byOwner[owner] = (byOwner[owner] ?? 0) + n; },
  );
  return { ...counts, byOwner };
}
