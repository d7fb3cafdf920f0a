// Deterministic hashing and pseudo-random numbers. Everything simweb generates is a pure function of
// (seed, config, what is asked), so each decision draws from a small PRNG seeded by hashing the
// identifiers involved: no global stream, no order dependence, nothing to store.

/** Murmur3's 32-bit finalizer: a cheap, well-mixed avalanche. */
export function fmix32(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** Combines any number of 32-bit integers into one well-mixed uint32. */
export function mix(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const p of parts) {
    // Fold numbers wider than 32 bits (ids, epoch ms) in two halves so nothing is lost.
    const lo = p >>> 0;
    const hi = Math.floor(p / 4294967296) >>> 0;
    h = fmix32((h ^ lo) + 0x7f4a7c15 + Math.imul(h, 31));
    if (hi !== 0) h = fmix32((h ^ hi) + 0x165667b1);
  }
  return h >>> 0;
}

/** FNV-1a over UTF-16 code units, finalized; for hashing names and paths. */
export function hashString(s: string, seed = 0): number {
  let h = (0x811c9dc5 ^ seed) >>> 0;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return fmix32(h);
}

/** Uniform [0,1) from a uint32 hash (for one-off decisions without a generator). */
export function unit(h: number): number {
  return (h >>> 0) / 4294967296;
}

/** mulberry32: tiny, fast, good enough for content generation (not for cryptography). */
export class Rng {
  private s: number;
  constructor(seed: number) {
    this.s = seed >>> 0;
  }
  /** Next uint32. */
  u32(): number {
    this.s = (this.s + 0x6d2b79f5) >>> 0;
    let t = this.s;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return (t ^ (t >>> 14)) >>> 0;
  }
  /** Uniform [0,1). */
  next(): number {
    return this.u32() / 4294967296;
  }
  /** Uniform integer in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }
  /** Uniform integer in [lo, hi]. */
  range(lo: number, hi: number): number {
    return lo + this.int(hi - lo + 1);
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  pick<T>(arr: readonly T[]): T {
    if (arr.length === 0) throw new Error("pick from an empty list");
    return arr[this.int(arr.length)] as T;
  }
  /** Standard normal (Box-Muller). */
  normal(): number {
    const u = 1 - this.next();
    const v = this.next();
    return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
  }
  /** Log-normal with the given median and shape sigma. */
  lognormal(median: number, sigma: number): number {
    return median * Math.exp(sigma * this.normal());
  }
  /** Exponential with the given mean. */
  exponential(mean: number): number {
    return -Math.log(1 - this.next()) * mean;
  }
  /** Poisson-distributed count with mean lambda (Knuth; fine for small lambda, normal approx above 30). */
  poisson(lambda: number): number {
    if (lambda <= 0) return 0;
    if (lambda > 30) return Math.max(0, Math.round(lambda + Math.sqrt(lambda) * this.normal()));
    const l = Math.exp(-lambda);
    let k = 0;
    let p = 1;
    do {
      k++;
      p *= this.next();
    } while (p > l);
    return k - 1;
  }
  /** Index drawn with probability proportional to weights. */
  weighted(weights: readonly number[]): number {
    let total = 0;
    for (const w of weights) total += Math.max(0, w);
    if (total <= 0) return 0;
    let x = this.next() * total;
    for (let i = 0; i < weights.length; i++) {
      x -= Math.max(0, weights[i] ?? 0);
      if (x < 0) return i;
    }
    return weights.length - 1;
  }
}

/** Converts (median, mean) of a log-normal into its sigma; mean must be >= median. */
export function lognormalSigma(median: number, mean: number): number {
  if (mean <= median) return 0;
  return Math.sqrt(2 * Math.log(mean / median));
}
