// A small bounded LRU map (Map keeps insertion order; re-inserting on hit makes it recency order).
// Hand-written because it is ten lines and byte-weighted eviction is needed for the compression cache.

export class Lru<K, V> {
  private readonly map = new Map<K, { v: V; w: number }>();
  private weight = 0;
  constructor(
    private readonly maxEntries: number,
    private readonly maxWeight = Infinity,
    private readonly weigh: (v: V) => number = () => 1,
  ) {}

  get(k: K): V | undefined {
    const e = this.map.get(k);
    if (!e) return undefined;
    this.map.delete(k);
    this.map.set(k, e);
    return e.v;
  }

  set(k: K, v: V): void {
    const old = this.map.get(k);
    if (old) {
      this.weight -= old.w;
      this.map.delete(k);
    }
    const w = this.weigh(v);
    if (w > this.maxWeight) return; // never cache what alone overflows the budget
    this.map.set(k, { v, w });
    this.weight += w;
    while (this.map.size > this.maxEntries || this.weight > this.maxWeight) {
      const first = this.map.keys().next();
      if (first.done) break;
      const e = this.map.get(first.value);
      this.map.delete(first.value);
      if (e) this.weight -= e.w;
    }
  }

  delete(k: K): void {
    const e = this.map.get(k);
    if (!e) return;
    this.map.delete(k);
    this.weight -= e.w;
  }

  get size(): number {
    return this.map.size;
  }
}

/**
 * A bounded cache with two generations instead of recency order: lookups never reorder (cheaper
 * than Lru.get on hot paths with poor locality); when the young map fills, it becomes the old one
 * and the previous old generation is dropped. Holds at most 2 x capacity entries.
 */
export class TwoGenerationCache<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  constructor(private readonly capacity: number) {}

  get(k: K): V | undefined {
    const v = this.young.get(k);
    if (v !== undefined) return v;
    const o = this.old.get(k);
    if (o !== undefined) this.set(k, o); // promote what is still in use
    return o;
  }

  set(k: K, v: V): void {
    if (this.young.size >= this.capacity) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(k, v);
  }
}
