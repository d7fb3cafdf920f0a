// The seen filter: a Bloom filter whose bits live in Redis strings (see keys.ts, lua/bloom_*.lua)
// and whose bit positions are computed here, in the client, so Redis only flips bits.
//
// Hashing. bloom-filters' Hashing class does the double hashing (its enhanced double hashing,
// `doubleHashing(i, a, b, m)`). Its own base hash is NOT used: measured on this machine,
// `Hashing.hashTwice` (pure-JS xxhashjs h64) costs ~17 us per URL and returns only the low 32 bits
// of each hash (cuint's toNumber), so it cannot address filters above 2^32 bits -- and a node that
// sees several hundred million URLs needs several billion bits. The two base hashes are therefore
// two 48-bit halves of one MD5 (md5.ts, ~0.7 us per URL), reduced modulo m before
// `doubleHashing`, which keeps the library's arithmetic exact in doubles (a + i*b < 2^53).
// MD5 is used as a fast, stable mixing function here, not for security.
//
// Growth. The filter sized at init is stage 0 of a scalable Bloom filter (Almeida et al. 2007):
// when its insertions reach its capacity n, lua/bloom_lib.lua adds stage 1 (2n URLs at p/10),
// then stage 2 (4n at p/100) and so on, all inside the add_links script, so test-and-set and
// enqueue stay one atomic step. The compound false-positive rate is bounded by
// p (1 + 1/10 + 1/100 + ...) = 1.11 p. Stage 0 keeps the sizing it always had (tightening it to
// p x 0.9 would change m and refuse every running crawl on resume), hence the 1.11 rather than 1.
// Only stage-0 positions are computed here; later stages derive theirs from them in Lua.
//
// Layout. A new crawl's filter is BLOCKED (Putze et al. 2007): all k bits of a URL lie in one
// block of BLOOM_BLOCK_BITS bits, so Redis tests a URL with one GETRANGE and marks a new one with
// one SETRANGE (a seen URL writes nothing, so nothing reaches the AOF), where the classic layout
// cost one BITFIELD of k SET subcommands per link, seen or not. A URL's record shrinks from k
// u48 positions to a u48 block index and k u8 offsets. Blocks cost bits: m and k are sized from
// the blocked filter's own rate (blockedFalsePositiveRate), not the classic formula. Crawls
// started with the classic layout keep it (P bf:params names the scheme; both are supported).
import { createRequire } from "node:module";
import type { Redis } from "ioredis";
import type { FrontierKeys } from "./keys.js";
import type { Scripts } from "./scripts.js";
import { md5Bytes, md5Utf8 } from "./md5.js";

// The Hashing module alone: the package's entry point loads every structure it has (with lodash,
// seedrandom, long...), ~0.2 s of CPU at every process start for one function we use.
const { default: Hashing } = createRequire(import.meta.url)("bloom-filters/dist/hashing/hashing.js") as typeof import("bloom-filters/dist/hashing/hashing.js");

/** Names the classic hashing scheme, so a resumed crawl with different code refuses to run. */
export const BLOOM_SCHEME = "md5-48x2+bloom-filters-edh";
/** Names the blocked scheme: MD5 -> u48 block index + k u8 offsets (more MD5 rounds past 10). */
export const BLOOM_SCHEME_BLOCKED = "md5-blocked-u48+u8";
/** Bits of a stage-0 block: 32 bytes per GETRANGE; offsets fit one byte (B must divide 256). */
export const BLOOM_BLOCK_BITS = 256;
/**
 * Bits of a block of a later stage (derived in Lua, so not bound to byte offsets). Later stages
 * run at p/10^i, where small blocks waste bits (at 1e-5: 35 bits per URL with 256-bit blocks,
 * 25.4 with 2048, 24.0 classic) and hold most URLs of a grown filter.
 */
export const BLOOM_STAGE_BLOCK_BITS = 2048;
/** A segment is one Redis string (max 512 MB = 2^32 bits); 2^31 bits = 256 MB per key. */
export const DEFAULT_SEGMENT_BITS = 2 ** 31;
/** Fixed default seed: positions must be identical in every process and every run. */
export const DEFAULT_BLOOM_SEED = 0x5c0ffee;
/** Positions must stay exact in doubles: a + i*b with i < 64 needs m below 2^46. */
const MAX_BITS = 2 ** 46;
const MAX_K = 32;
const PROBE_URL = "https://probe.shardcrawl.invalid/bloom?check=1";
/** Each stage holds this many times the URLs of the one before. */
export const BLOOM_GROWTH = 2;
/** Each stage's false-positive rate is this fraction of the one before. */
export const BLOOM_TIGHTENING = 0.1;
/** Stages planned (n x 255 URLs in all with growth 2); past them the last stage keeps filling. */
export const BLOOM_MAX_STAGES = 8;
/** The filter's estimated false-positive rate above this multiple of the target is a warning. */
export const BLOOM_WARN_RATIO = 1.2;

/** One stage of the growing filter. */
export interface BloomStage {
  /** Capacity (URLs). */
  n: number;
  /** False-positive rate at capacity. */
  p: number;
  m: number;
  k: number;
  /** Bits per block (0 or absent: classic layout). */
  blockBits?: number;
}

/** Expected false-positive rate of a blocked filter of m bits and blocks of b bits holding c URLs
 * with k bits each: the URLs per block are Poisson(c b / m); inside a block of j URLs a probe
 * meets k set bits with the classic rate (1 - (1 - 1/b)^(kj))^k. */
export function blockedFalsePositiveRate(c: number, m: number, k: number, b: number): number {
  const lam = (c * b) / m;
  if (!(lam > 0)) return 0;
  const lo = Math.max(0, Math.floor(lam - 8 * Math.sqrt(lam) - 20));
  const hi = Math.ceil(lam + 8 * Math.sqrt(lam) + 20);
  const r = (1 - 1 / b) ** k;
  // Poisson terms start in log space (e^-lam underflows for big blocks of a much overfilled filter).
  let term = Math.exp(-lam + lo * Math.log(lam) - logFactorial(lo));
  let rj = r ** lo;
  let sum = 0;
  for (let j = lo; j <= hi; j++) {
    sum += term * (1 - rj) ** k;
    term *= lam / (j + 1);
    rj *= r;
  }
  return Math.min(1, sum);
}

function logFactorial(n: number): number {
  let s = 0;
  for (let i = 2; i <= n; i++) s += Math.log(i);
  return s;
}

const sizingMemo = new Map<string, { k: number; bitsPerUrl: number }>();

/** The k and the fewest bits per URL for which a blocked filter of b-bit blocks meets rate p (numeric search). */
export function blockedSizing(p: number, b: number): { k: number; bitsPerUrl: number } {
  const key = `${p},${b}`;
  const hit = sizingMemo.get(key);
  if (hit) return hit;
  let best: { k: number; bitsPerUrl: number } | undefined;
  const rate = (bpu: number, k: number) => blockedFalsePositiveRate(1, bpu, k, b);
  // A blocked filter needs more bits than a classic one, and a k at least near the classic optimum.
  const classic = -Math.log(p) / Math.LN2 ** 2;
  for (let k = Math.max(1, Math.floor(classic * Math.LN2 * 0.8)); k <= MAX_K; k++) {
    let lo = classic;
    let hi = 4 * classic;
    if (rate(hi, k) > p) continue;
    for (let it = 0; it < 24; it++) {
      const mid = (lo + hi) / 2;
      if (rate(mid, k) <= p) hi = mid;
      else lo = mid;
    }
    if (!best || hi < best.bitsPerUrl) best = { k, bitsPerUrl: hi };
    else if (hi > best.bitsPerUrl * 1.05) break; // past the optimum: bits only grow with k
  }
  if (!best) throw new RangeError(`bloom: no blocked filter of ${b}-bit blocks reaches p=${p}`);
  sizingMemo.set(key, best);
  return best;
}

/** m (a whole number of blocks) and k of a blocked stage of n URLs at rate p. */
function blockedStage(n: number, p: number, b: number): { m: number; k: number } {
  const { k, bitsPerUrl } = blockedSizing(p, b);
  return { m: Math.max(1, Math.ceil((n * bitsPerUrl) / b)) * b, k };
}

/** The planned stages: stage 0 is the filter of `params`; then BLOOM_GROWTH x the URLs at BLOOM_TIGHTENING x the rate. */
export function bloomStages(params: Pick<BloomParams, "n" | "p" | "m" | "k" | "blockBits">): BloomStage[] {
  const blocked = (params.blockBits ?? 0) > 0;
  const out: BloomStage[] = [{ n: params.n, p: params.p, m: params.m, k: params.k, ...(blocked ? { blockBits: params.blockBits } : {}) }];
  for (let i = 1; i < BLOOM_MAX_STAGES; i++) {
    const n = params.n * BLOOM_GROWTH ** i;
    const p = params.p * BLOOM_TIGHTENING ** i;
    if (blocked) {
      if (!Number.isSafeInteger(n)) break;
      const st = blockedStage(n, p, BLOOM_STAGE_BLOCK_BITS);
      if (st.m > MAX_BITS) break;
      out.push({ n, p, m: st.m, k: st.k, blockBits: BLOOM_STAGE_BLOCK_BITS });
      continue;
    }
    const m = Math.max(64, Math.ceil((-n * Math.log(p)) / Math.LN2 ** 2));
    // Lua's stage positions need m below 2^46 (bloom_lib.lua) and Redis a k it can afford.
    if (!Number.isSafeInteger(n) || m > MAX_BITS) break;
    out.push({ n, p, m, k: Math.min(MAX_K, Math.max(1, Math.round((m / n) * Math.LN2))) });
  }
  return out;
}

/** The plan as stored in P bf:plan: "m,k,n;" per stage, "m,k,n,blockBits;" for a blocked one. */
export function bloomPlan(stages: readonly BloomStage[]): string {
  return stages.map((s) => (s.blockBits ? `${s.m},${s.k},${s.n},${s.blockBits}` : `${s.m},${s.k},${s.n}`)).join(";");
}

/** The seen filter's state for metrics and the status page. */
export interface BloomStatus {
  /** Target false-positive rate (stage 0's p). */
  target: number;
  /** Stages in use. */
  stages: number;
  /** Stages planned. */
  plannedStages: number;
  /** URLs inserted into all stages. */
  insertions: number;
  /** Design capacity of all stages in use. */
  capacity: number;
  /** Fill ratio (bits set / bits) of the newest stage, estimated from its insertions: 1 - e^(-kc/m). */
  fillRatio: number;
  /** Estimated rate at which a new URL is taken for seen now: 1 - prod(1 - rate_i), rate_i fill_i^k_i
   * for a classic stage, blockedFalsePositiveRate for a blocked one. */
  estimatedFalsePositiveRate: number;
  /** Bits allocated in all stages in use. */
  bits: number;
  /** bits / insertions (0 before the first). */
  bitsPerUrl: number;
  /** 0 ok, 1 warning: the estimated rate exceeds BLOOM_WARN_RATIO x the target. */
  warning: number;
}

/** Computes the status from the stage plan and the insertion counts (c[i] of stage i). */
export function bloomStatusOf(stages: readonly BloomStage[], inUse: number, counts: readonly number[]): BloomStatus {
  const used = stages.slice(0, Math.max(1, Math.min(inUse, stages.length)));
  let notFp = 1;
  let bits = 0;
  let insertions = 0;
  let capacity = 0;
  let fill = 0;
  used.forEach((st, i) => {
    const c = Math.max(0, counts[i] ?? 0);
    fill = 1 - Math.exp((-st.k * c) / st.m);
    notFp *= 1 - (st.blockBits ? blockedFalsePositiveRate(c, st.m, st.k, st.blockBits) : fill ** st.k);
    bits += st.m;
    insertions += c;
    capacity += st.n;
  });
  const target = stages[0]!.p;
  const est = 1 - notFp;
  return {
    target, stages: used.length, plannedStages: stages.length, insertions, capacity, fillRatio: fill,
    estimatedFalsePositiveRate: est, bits, bitsPerUrl: insertions > 0 ? bits / insertions : 0,
    warning: est > BLOOM_WARN_RATIO * target ? 1 : 0,
  };
}

export interface BloomSizing {
  /** Expected number of distinct URLs (n). */
  expectedUrls: number;
  /** Target false-positive rate at n (p). */
  falsePositiveRate: number;
  segmentBits?: number;
  seed?: number;
  /** "blocked" (the default for a new crawl) or "classic" (the layout of crawls started before it). */
  layout?: "blocked" | "classic";
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
  /** Bits per block of a blocked filter (stage 0); absent: the classic layout. */
  blockBits?: number;
}

/** Classic: m = -n ln p / (ln 2)^2, k = round(m/n ln 2). Blocked: m and k from blockedSizing. */
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
  if (sizing.layout !== undefined && sizing.layout !== "blocked" && sizing.layout !== "classic") throw new RangeError(`bloom: layout must be "blocked" or "classic", got ${String(sizing.layout)}`);
  if (sizing.layout !== "classic") {
    // A block (of any stage) must never straddle two segments.
    if (segmentBits % BLOOM_STAGE_BLOCK_BITS !== 0) throw new RangeError(`bloom: segmentBits must be a multiple of ${BLOOM_STAGE_BLOCK_BITS} for the blocked layout, got ${segmentBits}`);
    const { m, k } = blockedStage(n, p, BLOOM_BLOCK_BITS);
    if (m > MAX_BITS) throw new RangeError(`bloom: ${m} bits needed for n=${n}, p=${p}; the limit is 2^46`);
    const params: BloomParams = { scheme: BLOOM_SCHEME_BLOCKED, n, p, m, k, segmentBits, seed, probe: [], blockBits: BLOOM_BLOCK_BITS };
    params.probe = new BloomHasher(params).positions(PROBE_URL);
    return params;
  }
  const m = Math.max(64, Math.ceil((-n * Math.log(p)) / Math.LN2 ** 2));
  if (m > MAX_BITS) throw new RangeError(`bloom: ${m} bits needed for n=${n}, p=${p}; the limit is 2^46`);
  const k = Math.min(MAX_K, Math.max(1, Math.round((m / n) * Math.LN2)));
  const params: BloomParams = { scheme: BLOOM_SCHEME, n, p, m, k, segmentBits, seed, probe: [] };
  params.probe = new BloomHasher(params).positions(PROBE_URL);
  return params;
}

/** Reads the filter's growth state (P bf:grow, P bf:plan) as a status. */
export async function readBloomStatus(redis: Redis, keys: FrontierKeys, params: BloomParams): Promise<BloomStatus> {
  const [grow, plan] = await Promise.all([redis.hgetall(keys.bloomGrow), redis.get(keys.bloomPlan)]);
  const stages = plan ? parsePlan(plan, params) : bloomStages(params);
  const inUse = Number(grow.s ?? 1);
  const counts: number[] = [];
  for (let i = 0; i < inUse - 1; i++) counts.push(Number(grow[`c${i}`] ?? 0));
  counts.push(Number(grow.c ?? 0));
  return bloomStatusOf(stages, inUse, counts);
}

function parsePlan(plan: string, params: BloomParams): BloomStage[] {
  return plan.split(";").map((part, i) => {
    const [m, k, n, b] = part.split(",").map(Number);
    return { m: m!, k: k!, n: n!, p: params.p * BLOOM_TIGHTENING ** i, ...(b ? { blockBits: b } : {}) };
  });
}

/**
 * Computes the k bit positions of a URL. Cheap to construct; safe to use in worker threads. In a
 * blocked filter all k lie in one block (packLinks sends them as block index + offsets).
 */
export class BloomHasher {
  private readonly hashing = new Hashing();
  private readonly seedPrefix: string;
  private readonly blockBits: number;
  /** The URL's MD5 (reused: positions() is synchronous). */
  private readonly digest = new Uint8Array(16);

  constructor(readonly params: Pick<BloomParams, "m" | "k" | "seed" | "blockBits">) {
    this.seedPrefix = `${params.seed}\u0000`;
    this.blockBits = params.blockBits ?? 0;
    if (this.blockBits > 0 && (256 % this.blockBits !== 0 || params.m % this.blockBits !== 0)) {
      throw new RangeError(`bloom: a block of ${this.blockBits} bits must divide 256 and m (${params.m})`);
    }
  }

  positions(url: string): number[] {
    const { m, k } = this.params;
    const digest = md5Utf8(this.seedPrefix + url, this.digest);
    if (this.blockBits > 0) return this.blocked(digest, m, k, this.blockBits);
    const a = uint48(digest, 0) % m;
    const b = uint48(digest, 6) % m;
    const out = new Array<number>(k);
    for (let i = 0; i < k; i++) out[i] = this.hashing.doubleHashing(i, a, b, m);
    return out;
  }

  /** Block from the digest's first 48 bits; one independent byte per offset (MD5 of the digest again past 10). */
  private blocked(digest: Uint8Array, m: number, k: number, b: number): number[] {
    const base = (uint48(digest, 0) % (m / b)) * b;
    const out = new Array<number>(k);
    let at = 6;
    for (let i = 0; i < k; i++) {
      if (at >= digest.length) {
        md5Bytes(digest, digest);
        at = 0;
      }
      out[i] = base + (digest[at++]! % b);
    }
    return out;
  }
}

/** The big-endian 48-bit number at bytes[at..at+6). */
function uint48(bytes: Uint8Array, at: number): number {
  return (bytes[at]! * 0x10000 + ((bytes[at + 1]! << 8) | bytes[at + 2]!)) * 0x1000000 + ((bytes[at + 3]! << 16) | (bytes[at + 4]! << 8) | bytes[at + 5]!);
}

function sameParams(a: BloomParams, b: BloomParams): boolean {
  return a.scheme === b.scheme && a.n === b.n && a.p === b.p && a.m === b.m && a.k === b.k &&
    a.segmentBits === b.segmentBits && a.seed === b.seed && (a.blockBits ?? 0) === (b.blockBits ?? 0);
}

/** The scheme a layout hashes with (a stored filter must name the one its layout implies). */
function schemeOf(p: Pick<BloomParams, "blockBits">): string {
  return (p.blockBits ?? 0) > 0 ? BLOOM_SCHEME_BLOCKED : BLOOM_SCHEME;
}

function parseStoredParams(json: string): BloomParams {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw new Error(`bloom: stored parameters are not JSON: ${json.slice(0, 200)}`);
  }
  const o = v as Partial<BloomParams>;
  const nums = [o.n, o.p, o.m, o.k, o.segmentBits, o.seed, o.blockBits ?? 0];
  if (typeof o.scheme !== "string" || nums.some((x) => typeof x !== "number") || !Array.isArray(o.probe)) {
    throw new Error(`bloom: stored parameters are malformed: ${json.slice(0, 200)}`);
  }
  return o as BloomParams;
}

/**
 * Stores the filter's parameters on first init (and allocates its segments); on resume returns
 * the stored ones. Throws when the caller asks for different parameters than the crawl was started
 * with, or when this code would hash differently than the code that built the filter.
 * `sizing` may be omitted to resume with whatever is stored. Also plans the filter's growth
 * (P bf:plan, P bf:grow) unless `readOnly` (inspect must not write to a crawl's Redis).
 */
export async function initBloom(redis: Redis, scripts: Scripts, keys: FrontierKeys, sizing?: BloomSizing, readOnly = false): Promise<BloomParams> {
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
  // A crawl started with the classic layout resumes with it unless the caller named a layout.
  if (wanted && sizing && sizing.layout === undefined && params.scheme === BLOOM_SCHEME && wanted.scheme !== BLOOM_SCHEME) {
    wanted = bloomParamsFor({ ...sizing, layout: "classic" });
  }
  if (wanted && !sameParams(wanted, params)) {
    const show = (x: BloomParams) => JSON.stringify({ scheme: x.scheme, n: x.n, p: x.p, m: x.m, k: x.k, segmentBits: x.segmentBits, seed: x.seed, blockBits: x.blockBits ?? 0 });
    throw new Error(`bloom: this crawl's filter was built with ${show(params)}; refusing ${show(wanted)} (use the stored values or a new prefix)`);
  }
  if (params.scheme !== schemeOf(params)) {
    throw new Error(`bloom: hashing differs from the code that built this filter (scheme ${params.scheme}, this code knows ${BLOOM_SCHEME} and ${BLOOM_SCHEME_BLOCKED})`);
  }
  const probe = new BloomHasher(params).positions(PROBE_URL);
  if (!readOnly && !(await growthPlanned(redis, keys))) {
    await scripts.run("bloom_stages", [keys.prefix, bloomPlan(bloomStages(params)), params.m, params.k, params.n, params.segmentBits]);
  }
  if (probe.join(",") !== params.probe.join(",")) {
    throw new Error(`bloom: hashing differs from the code that built this filter (scheme ${params.scheme}, probe ${params.probe.join(",")} vs ${probe.join(",")})`);
  }
  return params;
}

/**
 * Whether the growth plan and state are stored (bloom_stages.lua ran for this crawl): the script
 * would change nothing, and planning the stages is ~20 ms of numeric search, paid by every child
 * process and every resumed run otherwise.
 */
async function growthPlanned(redis: Redis, keys: FrontierKeys): Promise<boolean> {
  return (await redis.exists(keys.bloomPlan, keys.bloomGrow)) === 2;
}
