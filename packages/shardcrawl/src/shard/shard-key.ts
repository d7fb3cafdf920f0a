// The shard key of a host: its registrable domain (eTLD+1, public suffix list via tldts) by
// default, so every host of one site lands on one node and that node alone paces the site; or the
// host itself, which spreads a huge domain (many subdomains) over several nodes.
import { registrableDomain } from "../url/scope.js";

export type ShardKeyKind = "domain" | "host";

export function shardKeyOf(host: string, kind: ShardKeyKind): string {
  return kind === "host" ? host : registrableDomain(host);
}

export function isShardKeyKind(v: unknown): v is ShardKeyKind {
  return v === "domain" || v === "host";
}
