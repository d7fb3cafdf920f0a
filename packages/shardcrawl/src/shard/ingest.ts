// Ingest: outbox files from other nodes into this node's frontier, through the admission chain
// (shard routing, the opt-out list, trap filters); the frontier's Bloom filter drops URLs the node
// has already seen. A URL this node does not own (the cluster changed, or a file went to the wrong
// node) is not dropped: it goes to this node's outbox for its owner.
import { existsSync, mkdirSync, readdirSync, renameSync } from "node:fs";
import { basename, join } from "node:path";
import type { AddLinksResult, HashedLink } from "../frontier/index.js";
import { tierFor, type UrlPrioritizer } from "../schedule/priority.js";
import { normalizeUrlDetailed, hostOf } from "../url/normalize.js";
import type { DiscoveredLink } from "../shared/types.js";
import { OUTBOX_SUFFIX, inboxDir, type OutboxLink } from "./outbox-format.js";
import { readOutboxFile, type ReadReport } from "./outbox-reader.js";
import type { OutboxWriter } from "./outbox-writer.js";
import type { ShardRouter } from "./shard-spec.js";
import { AdmissionCounts, BatchAdmission, type ExclusionSource } from "../admit/index.js";

/** Where ingested links go: the node's frontier (its seen filter drops repeats), and its stats. */
export interface LinkSink {
  addLinks(links: readonly HashedLink[], opts: { now?: number; kind?: "seeds" | "discovered" }): Promise<AddLinksResult>;
  addCounters(deltas: Iterable<readonly [string, number]>): Promise<void>;
}

export interface IngestReport {
  files: number;
  lines: number;
  added: number;
  seen: number;
  /** Dropped by the frontier's caps (recorded in its counters). */
  dropped: number;
  invalid: number;
  /** Owned by another node: re-routed to this node's outbox. */
  rerouted: number;
  problems: Array<{ file: string; rejected: ReadReport["rejected"]; damaged?: string }>;
}

export function emptyIngestReport(): IngestReport {
  return { files: 0, lines: 0, added: 0, seen: 0, dropped: 0, invalid: 0, rerouted: 0, problems: [] };
}

export interface IngestContext {
  frontier: LinkSink;
  router?: ShardRouter;
  /** The site owners' opt-out list (the frontier's). */
  exclusions?: ExclusionSource;
  /** Trap filter specs (config urlFilters). */
  urlFilters?: readonly string[];
  /** Where links owned by others go; required when router is given. */
  outbox?: OutboxWriter;
  maxUrlLength: number;
  /** The node's URL priority rules (default: the heuristic alone). */
  priority?: UrlPrioritizer;
}

export async function ingestFile(ctx: IngestContext, path: string, report: IngestReport): Promise<void> {
  const fileReport: ReadReport = { lines: 0, rejected: [] };
  // The Lua-decided filters (host budget, hosts per domain) follow in add_links.
  const admission = new BatchAdmission({ router: ctx.router, exclusions: ctx.exclusions, urlFilters: ctx.urlFilters ?? [], counts: new AdmissionCounts() });
  for await (const batch of readOutboxFile(path, fileReport)) {
    const links: DiscoveredLink[] = [];
    for (const l of batch) {
      const n = normalizeUrlDetailed(l.url, undefined, { maxLength: ctx.maxUrlLength });
      const host = n.ok ? hostOf(n.url) : null;
      if (!n.ok || !host) {
        report.invalid++;
        continue;
      }
      links.push({ url: n.url, host, tier: ctx.priority ? ctx.priority.tier(n.url, l.depth) : tierFor(n.url, l.depth), depth: l.depth, hops: 0 });
    }
    const { own, elsewhere } = await admission.admit(links);
    if (own.length) {
      const r = await ctx.frontier.addLinks(own, { now: Date.now(), kind: "discovered" });
      report.added += r.added;
      report.seen += r.seen;
      report.dropped += r.dropped;
      report.invalid += r.invalid;
    }
    await admission.writeCounts(ctx.frontier);
    for (const [owner, list] of elsewhere) {
      if (!ctx.outbox) throw new Error(`ingest: ${path} holds URLs owned by ${owner} and no outbox is open`);
      await ctx.outbox.append(owner, list.map((l): OutboxLink => ({ url: l.url, depth: l.depth })));
      report.rerouted += list.length;
    }
  }
  report.files++;
  report.lines += fileReport.lines;
  if (fileReport.rejected.length || fileReport.damaged) report.problems.push({ file: path, rejected: fileReport.rejected, ...(fileReport.damaged ? { damaged: fileReport.damaged } : {}) });
}

/** Finished files waiting in out/inbox/ (oldest name first). */
export function inboxFiles(out: string): string[] {
  const dir = inboxDir(out);
  if (!existsSync(dir)) return [];
  return readdirSync(dir).filter((f) => f.endsWith(OUTBOX_SUFFIX)).sort().map((f) => join(dir, f));
}

/**
 * Ingests every finished file in out/inbox/ and moves it to out/inbox/done/. A crash between the
 * two repeats the file: harmless, the Bloom filter drops what was added.
 */
export async function ingestInbox(ctx: IngestContext, out: string, report: IngestReport): Promise<number> {
  const files = inboxFiles(out);
  if (!files.length) return 0;
  const done = join(inboxDir(out), "done");
  mkdirSync(done, { recursive: true });
  for (const f of files) {
    await ingestFile(ctx, f, report);
    renameSync(f, join(done, basename(f)));
  }
  return files.length;
}
