// Lease ownership: every fetcher process leases under its own owner id, so when the supervisor
// sees it die it returns exactly that process's leases to their queues at once, instead of leaving
// them until the lease TTL (minutes) expires. Other fetchers' leases are not touched, so nothing
// still in flight is handed out twice; a restarted fetcher has a new pid, hence a new owner.
import type { NodeFrontier } from "./open-frontier.js";

/** The owner id of one fetcher process (index within the node, and pid: unique per life). */
export function fetcherLeaseOwner(index: number, pid: number): string {
  return `f${index}.${pid}`;
}

/**
 * Returns the leases of a fetcher that exited (crashed, was killed, or stopped). Never throws: a
 * failure is logged, and the lease TTL reaper remains the fallback.
 */
export async function releaseDeadFetcher(frontier: Pick<NodeFrontier, "releaseOwner">, index: number, pid: number, log: (m: string) => void): Promise<number> {
  try {
    const n = await frontier.releaseOwner(fetcherLeaseOwner(index, pid));
    if (n > 0) log(`fetcher ${index} (pid ${pid}) is gone: returned its ${n} leased URLs to their queues`);
    return n;
  } catch (err) {
    log(`could not return the leases of fetcher ${index} (pid ${pid}): ${(err as Error).message}; the lease TTL will`);
    return 0;
  }
}
