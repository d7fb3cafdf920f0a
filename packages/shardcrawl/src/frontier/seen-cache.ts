// A per-process memory of URLs the node's seen filter (Bloom, in Redis) is known to hold: links a
// page acknowledgement sent and Redis took in (added or already seen). A site's navigation repeats
// on every one of its pages, so most links of a crawl with host locality are such repeats; skipping
// them here saves their Bloom hashing, their encoding and, above all, their BITFIELD calls in the
// node's single-threaded Redis (about 9 us of Redis CPU per link, BENCHMARKS.md per-link table).
//
// Safe because the filter only ever gains bits: a URL once in it stays in it, so "known seen" never
// turns false while Redis keeps its data. Two things can take bits away, and both are handled by
// the caller: a link refused for want of room keeps its bits clear (a batch with refusals is not
// remembered), and a Redis restart may lose its last second of writes (the cache is cleared when
// the client reconnects). Bounded: two generations of at most maxEntries/2 URLs each; a URL found in
// the older one moves to the newer, so repeats stay while one-off links age out.

/** Default bound: about 10-20 MB of URL strings per process. */
export const DEFAULT_SEEN_CACHE_ENTRIES = 131_072;

/**
 * The URL as a string of its own. A link's URL is often a slice of the decoded page (V8 keeps the
 * whole parent string alive for a slice): kept as it is, each cached URL would hold on to a chunk
 * of its page, measured at about 2 KB per entry (+130-195 MB of parser RSS over a 3,000-page crawl).
 * Concatenating and slicing again forces a flat copy of just the URL.
 */
function ownCopy(url: string): string {
  return (" " + url).slice(1);
}

export class SeenCache {
  private current = new Set<string>();
  private previous = new Set<string>();
  /** Links answered here (never sent to Redis) since the process started. */
  hits = 0;

  constructor(private readonly maxEntries = DEFAULT_SEEN_CACHE_ENTRIES) {
    if (!Number.isInteger(maxEntries) || maxEntries < 2) throw new RangeError(`seen cache: maxEntries must be an integer >= 2, got ${maxEntries}`);
  }

  get size(): number {
    return this.current.size + this.previous.size;
  }

  /** Is the URL known to be in the seen filter? */
  has(url: string): boolean {
    if (this.current.has(url)) return true;
    if (!this.previous.has(url)) return false;
    this.remember(url);
    return true;
  }

  /** Notes a URL the seen filter now holds. */
  remember(url: string): void {
    this.current.add(ownCopy(url));
    if (this.current.size >= this.maxEntries >> 1) {
      this.previous = this.current;
      this.current = new Set();
    }
  }

  /** The links not known to be seen, in order; counts the others as hits. */
  unknown<L extends { url: string }>(links: readonly L[]): L[] {
    const out: L[] = [];
    for (const l of links) {
      if (this.has(l.url)) this.hits++;
      else out.push(l);
    }
    return out;
  }

  clear(): void {
    this.current = new Set();
    this.previous = new Set();
  }
}
