// The seen filter: a Bloom filter whose bits live in Redis strings (see keys.ts, lua/bloom_*.lua)
// and whose bit positions are computed here, in the client, so Redis only flips bits.
//
// Hashing. bloom-filters' Hashing class does the double hashing (its enhanced double hashing,
// `doubleHashing(i, a, b, m)`). Its own base hash is NOT used: measured on this machine,
// `Hashing.hashTwice` (pure-JS xxhashjs h64) costs ~17 us per URL and returns only the low 32 bits
// of each hash (cuint's toNumber), so it cannot address filters above 2^32 bits -- and a node that
// sees several hundred million URLs needs several billion bits. The two base hashes are therefore
// two 48-bit halves of one MD5 (node:crypto, native, ~1.1 us per URL), reduced modulo m before
// `doubleHashing`, which keeps the library's arithmetic exact in doubles (a + i*b < 2^53).
// MD5 is used as a fast, stable mixing function here, not for security.
import { hash } from "node:crypto";
import bloomFilters from "bloom-filters";
import type { Redis } from "ioredis";
import type { FrontierKeys } from "./keys.js";
import type { Scripts } from "./scripts.js";

const { Hashing } = bloomFilters;

/** Names the hashing scheme, so a resumed crawl with different code refuses to run. */
export const BLOOM_SCHEME = "md5-48x2+bloom-filters-edh";
/** A segment is one Redis string (max 512 MB = 2^32 bits); 2^31 bits = 256 MB per key. */
export const DEFAULT_SEGMENT_BITS = 2 ** 31;
/** Fixed default seed: positions must be identical in every process and every run. */
export const DEFAULT_BLOOM_SEED = 0x5c0ffee;
/** Positions must stay exact in doubles: a + i*b with i < 64 needs m below 2^46. */
const MAX_BITS = 2 ** 46;
const MAX_K = 32;
const PROBE_URL = "https://probe.shardcrawl.invalid/bloom?check=1";

export interface BloomSizing {
  /** Expected number of distinct URLs (n). */
  expectedUrls: number;
  /** Target false-positive rate at n (p). */
  falsePositiveRate: number;
  segmentBits?: number;
  seed?: number;
}

/** Everything needed to compute positions; stored in Redis on first init and reused on resume. */
export interface BloomParams {
  scheme: string;
  n: number;
  p: number;
  /** Total bits. */
  m: number;
  /** Positions per URL. */
  k: number;
  segmentBits: number;
  seed: number;
  /** Positions of a fixed probe URL, to detect a change in hashing (e.g. a library upgrade). */
  probe: number[];
}

/** m = -n ln p / (ln 2)^2, k = round(m/n ln 2). */
export function bloomParamsFor(sizing: BloomSizing): BloomParams {
  const { expectedUrls: n, falsePositiveRate: p } = sizing;
  const segmentBits = sizing.segmentBits ?? DEFAULT_SEGMENT_BITS;
  const seed = sizing.seed ?? DEFAULT_BLOOM_SEED;
  if (!Number.isSafeInteger(n) || n < 1) throw new RangeError(`bloom: expectedUrls must be a positive integer, got ${n}`);
  if (!(p > 0 && p < 0.5)) throw new RangeError(`bloom: falsePositiveRate must be in (0, 0.5), got ${p}`);
  if (!Number.isSafeInteger(segmentBits) || segmentBits < 64 || segmentBits > 2 ** 32 || segmentBits % 8 !== 0) {
    throw new RangeError(`bloom: segmentBits must be a multiple of 8 in [64, 2^32], got ${segmentBits}`);
  }
  if (!Number.isSafeInteger(seed) || seed < 0 || seed > 0xffffffff) throw new RangeError(`bloom: seed must be a uint32, got ${seed}`);
  const m = Math.max(64, Math.ceil((-n * Math.log(p)) / Math.LN2 ** 2));
  if (m > MAX_BITS) throw new RangeError(`bloom: ${m} bits needed for n=${n}, p=${p}; the limit is 2^46`);
  const k = Math.min(MAX_K, Math.max(1, Math.round((m / n) * Math.LN2)));
  const params: BloomParams = { scheme: BLOOM_SCHEME, n, p, m, k, segmentBits, seed, probe: [] };
  params.probe = new BloomHasher(params).positions(PROBE_URL);
  return params;
}

/** Computes the k bit positions of a URL. Cheap to construct; safe to use in worker threads. */
export class BloomHasher {
  private readonly hashing = new Hashing();
  private readonly seedPrefix: string;

  constructor(readonly params: Pick<BloomParams, "m" | "k" | "seed">) {
    this.seedPrefix = `${params.seed}\u0000`;
  }

  positions(url: string): number[] {
    const { m, k } = this.params;
    const digest = hash("md5", this.seedPrefix + url, "buffer");
    const a = digest.readUIntBE(0, 6) % m;
    const b = digest.readUIntBE(6, 6) % m;
    const out = new Array<number>(k);
    for (let i = 0; i < k; i++) out[i] = this.hashing.doubleHashing(i, a, b, m);
    return out;
  }
}

function sameParams(a: BloomParams, b: BloomParams): boolean {
  return a.scheme === b.scheme && a.n === b.n && a.p === b.p && a.m === b.m && a.k === b.k &&
    a.segmentBits === b.segmentBits && a.seed === b.seed;
}

function parseStoredParams(json: string): BloomParams {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw new Error(`bloom: stored parameters are not JSON: ${json.slice(0, 200)}`);
  }
  const o = v as Partial<BloomParams>;
  const nums = [o.n, o.p, o.m, o.k, o.segmentBits, o.seed];
  if (typeof o.scheme !== "string" || nums.some((x) => typeof x !== "number") || !Array.isArray(o.probe)) {
    throw new Error(`bloom: stored parameters are malformed: ${json.slice(0, 200)}`);
  }
  return o as BloomParams;
}

/**
 * Stores the filter's parameters on first init (and allocates its segments); on resume returns
 * the stored ones. Throws when the caller asks for different parameters than the crawl was started
 * with, or when this code would hash differently than the code that built the filter.
 * `sizing` may be omitted to resume with whatever is stored.
 */
export async function initBloom(redis: Redis, scripts: Scripts, keys: FrontierKeys, sizing?: BloomSizing): Promise<BloomParams> {
  let stored: string | null;
  let wanted: BloomParams | undefined;
  if (sizing) {
    wanted = bloomParamsFor(sizing);
    const r = await scripts.run("bloom_init", [keys.prefix, JSON.stringify(wanted), wanted.m, wanted.segmentBits]);
    stored = typeof r === "string" ? r : null;
  } else {
    stored = await redis.get(keys.bloomParams);
    if (stored === null) throw new Error(`bloom: no parameters stored under ${keys.bloomParams}; give expectedUrls and falsePositiveRate to start a crawl`);
  }
  if (stored === null) throw new Error(`bloom: could not store parameters under ${keys.bloomParams}`);
  const params = parseStoredParams(stored);
  if (wanted && !sameParams(wanted, params)) {
    const show = (x: BloomParams) => JSON.stringify({ scheme: x.scheme, n: x.n, p: x.p, m: x.m, k: x.k, segmentBits: x.segmentBits, seed: x.seed });
    throw new Error(`bloom: this crawl's filter was built with ${show(params)}; refusing ${show(wanted)} (use the stored values or a new prefix)`);
  }
  const probe = new BloomHasher(params).positions(PROBE_URL);
  if (params.scheme !== BLOOM_SCHEME || probe.join(",") !== params.probe.join(",")) {
    throw new Error(`bloom: hashing differs from the code that built this filter (scheme ${params.scheme}, probe ${params.probe.join(",")} vs ${probe.join(",")})`);
  }
  return params;
}
