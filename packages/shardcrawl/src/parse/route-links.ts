// Parse stage "route": the admission chain's in-process filters after scope (shard routing, the
// site owners' opt-out list, trap filters; admit/batch-admission.ts) split a page's links and
// redirect into this node's own (acknowledged into its frontier), the refused (counted, dropped)
// and the others', appended to the outbox for their owners before the page is acknowledged (so a
// crash repeats them, never loses them).
import type { BatchAdmission } from "../admit/batch-admission.js";
import type { HashedLink } from "../frontier/index.js";
import type { OutboxLink } from "../shard/outbox-format.js";

export interface OutboxSink {
  append(owner: string, links: OutboxLink[]): Promise<unknown>;
}

export class LinkRouter {
  /** outbox: null on a single node (the admission has no shard filter, every admitted link is ours). */
  constructor(private readonly admission: BatchAdmission, private readonly outbox: OutboxSink | null) {}

  /** This node's admitted links; the others' are in the outbox when the promise resolves. */
  async route(links: HashedLink[]): Promise<{ own: HashedLink[]; routed: number; refused: number }> {
    const { own, elsewhere, refused } = await this.admission.admit(links);
    let routed = 0;
    // Every destination at once: with group commit each append waits for its group's write.
    const appends: Array<Promise<unknown>> = [];
    for (const [owner, list] of elsewhere) {
      if (!this.outbox) throw new Error(`link router: links owned by ${owner} and no outbox (a sharded node needs one)`);
      appends.push(this.outbox.append(owner, list.map((l) => ({ url: l.url, depth: l.depth }))));
      routed += list.length;
    }
    await Promise.all(appends);
    return { own, routed, refused };
  }
}
