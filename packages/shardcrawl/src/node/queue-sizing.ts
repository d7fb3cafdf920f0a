// Queue bounds from the rate we want and the wait we accept (Little's law: items in a queue =
// arrival rate x time in the queue). With targetPagesPerSec and acceptedWaitMs set, the parse
// queue holds rate x wait pages, its byte bound is that times a typical page, and each parser's
// write buffer (WARC, page log, outbox bytes not yet on disk) holds its share of the same. A bound
// given explicitly (flag or config key) wins over the derived one; without a target rate the
// defaults stand. The result is recorded in the config (queueSizing) and shown in summary.json
// and /status, so an operator sees which bound came from where.

export interface SizingInput {
  /** Pages per second the node should sustain (0 = no derivation). */
  targetPagesPerSec: number;
  /** How long a page may wait in a queue at that rate (ms). */
  acceptedWaitMs: number;
  /** A typical fetched page body (bytes), e.g. the mean page size of the crawl. */
  typicalPageBytes: number;
  /** The largest body a fetch keeps: every byte bound admits at least one such page. */
  maxPageBytes: number;
  parsers: number;
}

export interface QueueBounds {
  parseQueueMax: number;
  parseQueueMaxBytes: number;
  writeBufferBytes: number;
}

export type BoundSource = "derived" | "explicit" | "default";

export interface QueueSizing {
  /** The inputs of the derivation (absent when no target rate was set). */
  derivedFrom?: SizingInput;
  bounds: QueueBounds;
  source: Record<keyof QueueBounds, BoundSource>;
}

export const BOUND_KEYS: ReadonlyArray<keyof QueueBounds> = ["parseQueueMax", "parseQueueMaxBytes", "writeBufferBytes"];

/** The bounds implied by rate x accepted wait (pure). */
export function deriveQueueBounds(i: SizingInput): QueueBounds {
  for (const k of ["targetPagesPerSec", "acceptedWaitMs", "typicalPageBytes", "maxPageBytes", "parsers"] as const) {
    if (!(Number.isFinite(i[k]) && i[k] > 0)) throw new RangeError(`queue sizing: ${k} must be > 0, got ${i[k]}`);
  }
  const items = Math.max(1, Math.ceil((i.targetPagesPerSec * i.acceptedWaitMs) / 1000));
  const perParser = Math.max(1, Math.ceil(items / i.parsers));
  return {
    parseQueueMax: items,
    parseQueueMaxBytes: Math.max(i.maxPageBytes, items * i.typicalPageBytes),
    writeBufferBytes: Math.max(i.maxPageBytes, perParser * i.typicalPageBytes),
  };
}

/**
 * Applies derived bounds to `c` (unless `explicit` names them) and records where each came from.
 * `explicit` holds the config keys the user set.
 */
export function applyQueueSizing<C extends QueueBounds & Omit<SizingInput, "parsers"> & { parsers: number; queueSizing?: QueueSizing }>(c: C, explicit: ReadonlySet<string>): void {
  const source = {} as Record<keyof QueueBounds, BoundSource>;
  let derivedFrom: SizingInput | undefined;
  let derived: QueueBounds | undefined;
  if (c.targetPagesPerSec > 0) {
    derivedFrom = { targetPagesPerSec: c.targetPagesPerSec, acceptedWaitMs: c.acceptedWaitMs, typicalPageBytes: c.typicalPageBytes, maxPageBytes: c.maxPageBytes, parsers: c.parsers };
    derived = deriveQueueBounds(derivedFrom);
  }
  for (const k of BOUND_KEYS) {
    if (explicit.has(k)) source[k] = "explicit";
    else if (derived) {
      c[k] = derived[k] as C[typeof k];
      source[k] = "derived";
    } else source[k] = "default";
  }
  c.queueSizing = { ...(derivedFrom ? { derivedFrom } : {}), bounds: { parseQueueMax: c.parseQueueMax, parseQueueMaxBytes: c.parseQueueMaxBytes, writeBufferBytes: c.writeBufferBytes }, source };
}
