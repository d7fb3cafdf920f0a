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
//
// A URL is kept as a 64-bit fingerprint (two 32-bit hashes with seeds drawn per process) in an
// open-addressing table of typed arrays, not as a string in a Set: no string copy per URL, no
// string compare per hit, and ~1 MB per generation instead of ~10 MB of strings. Two different URLs
// share a fingerprint with a chance of about 2^-64 per pair (at 2^17 entries, under 10^-14 per
// lookup, far below the seen filter's own false-positive rate); the seeds are random so a site
// cannot aim for a collision.

/**
 * Default bound: 1,048,576 URLs, 16 MB of tables per parser. A crawl's repeated links are every
 * host's navigation, so the working set grows with the hosts crawled at once: at 131,072 a node
 * crawling ~800 hosts sent 89 links per page to Redis instead of ~30 (real-page web, 40,000 pages).
 */
export const DEFAULT_SEEN_CACHE_ENTRIES = 1_048_576;

function randomSeed(): number {
  return (Math.random() * 0x1_0000_0000) >>> 0;
}

/** murmur3's 32-bit finalizer: every input bit reaches every output bit. */
function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** One generation: fingerprints as (hi, lo) pairs; (0, 0) marks an empty slot. */
class FingerprintTable {
  readonly slots: Uint32Array;
  private readonly mask: number;
  count = 0;

  constructor(capacity: number) {
    let size = 2;
    while (size < capacity * 2) size *= 2; // load factor at most 1/2: short probe runs
    this.slots = new Uint32Array(size * 2);
    this.mask = size - 1;
  }

  /** The slot holding (hi, lo), or the empty slot where it would go, as an index into `slots`. */
  private find(hi: number, lo: number): number {
    const s = this.slots;
    for (let i = lo & this.mask; ; i = (i + 1) & this.mask) {
      const at = i * 2;
      const h = s[at]!;
      const l = s[at + 1]!;
      if ((h === hi && l === lo) || (h === 0 && l === 0)) return at;
    }
  }

  has(hi: number, lo: number): boolean {
    const at = this.find(hi, lo);
    return this.slots[at] === hi && this.slots[at + 1] === lo;
  }

  add(hi: number, lo: number): void {
    const at = this.find(hi, lo);
    if (this.slots[at] === hi && this.slots[at + 1] === lo) return;
    this.slots[at] = hi;
    this.slots[at + 1] = lo;
    this.count++;
  }

  clear(): void {
    this.slots.fill(0);
    this.count = 0;
  }
}

export class SeenCache {
  private readonly generation: number;
  private current: FingerprintTable;
  private previous: FingerprintTable;
  private readonly seedHi = randomSeed();
  private readonly seedLo = randomSeed();
  private hi = 0;
  private lo = 0;
  /** Links answered here (never sent to Redis) since the process started. */
  hits = 0;

  constructor(private readonly maxEntries = DEFAULT_SEEN_CACHE_ENTRIES) {
    if (!Number.isInteger(maxEntries) || maxEntries < 2) throw new RangeError(`seen cache: maxEntries must be an integer >= 2, got ${maxEntries}`);
    this.generation = maxEntries >> 1;
    this.current = new FingerprintTable(this.generation);
    this.previous = new FingerprintTable(this.generation);
  }

  get size(): number {
    return this.current.count + this.previous.count;
  }

  /** Is the URL known to be in the seen filter? */
  has(url: string): boolean {
    this.fingerprint(url);
    const { hi, lo } = this;
    if (this.current.has(hi, lo)) return true;
    if (!this.previous.has(hi, lo)) return false;
    this.add(hi, lo);
    return true;
  }

  /** Notes a URL the seen filter now holds. */
  remember(url: string): void {
    this.fingerprint(url);
    this.add(this.hi, this.lo);
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
    this.current.clear();
    this.previous.clear();
  }

  private add(hi: number, lo: number): void {
    this.current.add(hi, lo);
    if (this.current.count >= this.generation) {
      // The older generation's table is emptied and reused as the new one.
      const old = this.previous;
      this.previous = this.current;
      old.clear();
      this.current = old;
    }
  }

  /** Sets this.hi/this.lo to the URL's fingerprint (two multiplicative hashes of its UTF-16 code units, read in pairs). */
  private fingerprint(url: string): void {
    let a = this.seedHi;
    let b = this.seedLo;
    // Two UTF-16 code units per step (a lone last unit pairs with 0; the length is mixed in below).
    const n = url.length;
    for (let i = 0; i < n; i += 2) {
      const c = url.charCodeAt(i) | ((i + 1 < n ? url.charCodeAt(i + 1) : 0) << 16);
      a = Math.imul(a ^ c, 0xcc9e2d51);
      a ^= a >>> 15;
      b = Math.imul(b ^ c, 0x5bd1e995);
      b ^= b >>> 13;
    }
    let hi = fmix32(a ^ url.length);
    const lo = fmix32(b + Math.imul(url.length, 0x9e3779b1));
    if (hi === 0 && lo === 0) hi = 1; // (0, 0) marks an empty slot
    this.hi = hi;
    this.lo = lo;
  }
}
