// The outbox file format, shared by the writer and the reader. An outbox file holds URLs for one
// destination node: text lines "url<TAB>depth", in a series of gzip members (one per page's batch),
// so `zcat` reads it and a crash can only cut the last member. Files being written end in ".open";
// finished files end in OUTBOX_SUFFIX and only those are exchanged.
import { join } from "node:path";

export const OUTBOX_SUFFIX = ".urls.gz";
export const OPEN_SUFFIX = ".open";

/** out/outbox/<destination node>/ */
export function outboxDir(out: string, dest?: string): string {
  return dest === undefined ? join(out, "outbox") : join(out, "outbox", dest);
}

/** out/inbox/: files put here are ingested by the node (at start and while it runs). */
export function inboxDir(out: string): string {
  return join(out, "inbox");
}

export interface OutboxLink {
  url: string;
  depth: number;
}

export function formatLine(l: OutboxLink): string {
  return `${l.url}\t${l.depth}\n`;
}
