// Parse stage "route": the shard filter of the admission chain splits a page's links into this
// node's own (acknowledged into its frontier) and the others', appended to the outbox for their
// owners before the page is acknowledged (so a crash repeats them, never loses them).
import type { AdmissionChain } from "../admit/chain.js";
import type { HashedLink } from "../frontier/index.js";
import type { OutboxLink } from "../shard/outbox-format.js";

export interface OutboxSink {
  append(owner: string, links: OutboxLink[]): Promise<unknown>;
}

export class LinkRouter {
  /** chain: the shard part of the admission chain; null on a single node (every link is ours). */
  constructor(private readonly chain: AdmissionChain | null, private readonly outbox: OutboxSink | null) {
    if (chain && !outbox) throw new Error("link router: a sharded node needs an outbox");
  }

  /** This node's links; the rest are in the outbox when the promise resolves. */
  async route(links: HashedLink[]): Promise<{ own: HashedLink[]; routed: number }> {
    if (!this.chain || !this.outbox) return { own: links, routed: 0 };
    const own: HashedLink[] = [];
    const elsewhere = new Map<string, OutboxLink[]>();
    for (const l of links) {
      const v = this.chain.check(l.url, l.host);
      if (v?.routeTo === undefined) {
        own.push(l);
        continue;
      }
      let list = elsewhere.get(v.routeTo);
      if (!list) elsewhere.set(v.routeTo, (list = []));
      list.push({ url: l.url, depth: l.depth });
    }
    let routed = 0;
    for (const [owner, list] of elsewhere) {
      await this.outbox.append(owner, list);
      routed += list.length;
    }
    return { own, routed };
  }
}
