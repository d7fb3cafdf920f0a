// Shard routing as the chain's last filter: a URL whose host another node owns (rendezvous hashing)
// is not admitted here; its refusal carries routeTo, and the caller hands it to the outbox.
import type { ShardRouter } from "../shard/shard-spec.js";
import type { AdmissionFilter, Refusal } from "./verdict.js";

export class ShardFilter implements AdmissionFilter {
  readonly name = "shard" as const;

  constructor(readonly router: ShardRouter) {}

  check(_url: string, host: string): Refusal | undefined {
    const owner = this.router.ownerOfHost(host);
    if (owner === this.router.spec.self) return undefined;
    return { filter: "shard", reason: "other-node", detail: `node ${owner} owns this URL's host, not ${this.router.spec.self}`, routeTo: owner };
  }
}
