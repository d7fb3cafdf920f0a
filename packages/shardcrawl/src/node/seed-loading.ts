// Loads a node's seed file into its frontier as a stream: batches of SEED_BATCH URLs go through
// the scope store, the admission chain (shard filter, opt-out list, trap filters) and the
// frontier's add_links (seen filter, caps, host budget) with two batches in flight, so reading and
// packing the next batch overlaps the add_links script of the last one. Memory is bounded by the
// batches, not the file: a seed file of 10^7 lines loads in minutes.
import { AdmissionCounts, BatchAdmission } from "../admit/index.js";
import type { ShardRouter } from "../shard/shard-spec.js";
import type { ScopeMode } from "../url/scope.js";
import { hostOf } from "../url/normalize.js";
import type { NodeFrontier } from "./open-frontier.js";
import { readSeedBatches, type SeedTally } from "./seeds.js";

export interface SeedReport {
  /** Lines that gave a URL or were rejected. */
  read: number;
  /** URLs new to the frontier. */
  accepted: number;
  rejected: number;
  /** Seeds another node of the cluster owns. */
  otherShards: number;
}

export interface SeedLoadOptions {
  file: string;
  scope: ScopeMode;
  maxUrlLength: number;
  stripParams: readonly string[];
  router?: ShardRouter | null;
  /** Trap filter specs (config urlFilters). */
  urlFilters?: readonly string[];
  /** Called every `progressEveryMs` while loading (long files). */
  onProgress?: (tally: SeedTally, added: number) => void;
  progressEveryMs?: number;
}

/** Batches handed to the frontier at once: one being packed here while the other runs in Redis. */
const IN_FLIGHT = 2;

export async function loadSeeds(frontier: NodeFrontier, o: SeedLoadOptions): Promise<{ report: SeedReport; tally: SeedTally }> {
  const tally: SeedTally = { accepted: 0, rejected: 0, firstRejected: [] };
  const admission = new BatchAdmission({ router: o.router, exclusions: frontier.exclusions, urlFilters: o.urlFilters ?? [], counts: new AdmissionCounts() });
  let added = 0, otherShards = 0;
  const inFlight = new Set<Promise<void>>();
  let failure: Error | undefined;
  const every = o.progressEveryMs ?? 10_000;
  let lastNote = Date.now();
  for await (const batch of readSeedBatches(o.file, o.maxUrlLength, o.stripParams, tally)) {
    // The scope is the whole cluster's (every node reads the same list); the seeds are our share.
    // Saving adds the batch's domains or hosts to the stored set.
    const step = frontier.saveScope(o.scope, batch)
      .then(() => admission.admit(batch.map((url) => ({ url, host: hostOf(url) ?? "" }))))
      .then(({ own, elsewhere }) => {
        for (const list of elsewhere.values()) otherShards += list.length;
        return frontier.addSeeds(own.map((l) => l.url), Date.now());
      })
      .then((n) => { added += n; })
      // Every node reads the whole list: seeds another node owns are not refusals (admit:shard not written).
      .then(() => admission.writeCounts(frontier, (f) => f === "admit:shard"))
      .catch((err: unknown) => { failure ??= err instanceof Error ? err : new Error(String(err)); });
    inFlight.add(step);
    void step.finally(() => inFlight.delete(step));
    if (inFlight.size >= IN_FLIGHT) await Promise.race(inFlight);
    if (failure !== undefined) break;
    if (o.onProgress && Date.now() - lastNote >= every) {
      lastNote = Date.now();
      o.onProgress(tally, added);
    }
  }
  await Promise.all(inFlight);
  if (failure !== undefined) throw failure;
  // A file with no URL still records the scope mode: the crawl can be resumed without --seeds.
  if (tally.accepted === 0) await frontier.saveScope(o.scope, []);
  return { report: { read: tally.accepted + tally.rejected, accepted: added, rejected: tally.rejected, otherShards }, tally };
}
