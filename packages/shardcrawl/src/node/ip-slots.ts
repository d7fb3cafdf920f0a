// --ip-concurrency: at most n requests in flight to one IP address across all hosts and domains of
// the node. The address is known only after DNS, so a fetcher looks it up first (the same cache,
// --connect-to and --resolve rules the connector uses: firstTargetAddress) and takes a slot in the
// node's Redis (P ip:<addr>) before it sends anything for the lease -- robots.txt included -- and
// gives it back when the lease is done. Chosen over "lease, then connect and count": undici reuses
// keep-alive connections, so counting connections would not count requests; and over keying the
// frontier's ready schedule by address: a host's address can change (TTL) and is unknown until
// first resolved. Bounded: a slot expires with its lease, and a dead fetcher's slots are returned
// with its leases (release_owner.lua). A full address makes the fetcher wait up to IP_WAIT_MS, then
// the URL goes back to its queue (stats ipFull) rather than holding a fetch slot for long.
import type { NodeFrontier } from "./open-frontier.js";
import type { Lease } from "../shared/types.js";

/** How long a fetcher waits for a slot of a full address before handing the URL back. */
export const IP_WAIT_MS = 2000;
const IP_POLL_MS = 25;

export interface IpSlot {
  readonly addr: string;
  release(): Promise<void>;
}

/**
 * Takes a slot of the address `url` connects to. Returns the slot, "full" when none freed within
 * IP_WAIT_MS, or null when the address cannot be known (the fetch then fails on DNS by itself).
 */
export async function takeIpSlot(frontier: Pick<NodeFrontier, "acquireIpSlot" | "releaseIpSlot">, addressOf: (url: string) => Promise<string | undefined>, lease: Lease, max: number, waitMs = IP_WAIT_MS): Promise<IpSlot | "full" | null> {
  const addr = await addressOf(lease.url).catch(() => undefined);
  if (addr === undefined) return null;
  const deadline = Date.now() + waitMs;
  for (;;) {
    if (await frontier.acquireIpSlot(addr, lease, max)) {
      return { addr, release: () => frontier.releaseIpSlot(addr, lease) };
    }
    if (Date.now() >= deadline) return "full";
    await new Promise((r) => setTimeout(r, IP_POLL_MS));
  }
}
