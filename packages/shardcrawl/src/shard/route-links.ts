// Splits links by the node that owns their host: this node keeps its own, the others go to the
// outbox, one list per owner (the parser's route step and inbox ingest share this).
import type { OutboxLink } from "./outbox-format.js";
import type { ShardRouter } from "./shard-spec.js";

export interface RoutedLinks<T> {
  own: T[];
  /** Owner -> links for that node's outbox. */
  elsewhere: Map<string, OutboxLink[]>;
}

export function splitByOwner<T extends { host: string; url: string; depth: number }>(router: ShardRouter, links: Iterable<T>): RoutedLinks<T> {
  const own: T[] = [];
  const elsewhere = new Map<string, OutboxLink[]>();
  for (const l of links) {
    const owner = router.ownerOfHost(l.host);
    if (owner === router.spec.self) {
      own.push(l);
      continue;
    }
    const list = elsewhere.get(owner);
    if (list) list.push({ url: l.url, depth: l.depth });
    else elsewhere.set(owner, [{ url: l.url, depth: l.depth }]);
  }
  return { own, elsewhere };
}
