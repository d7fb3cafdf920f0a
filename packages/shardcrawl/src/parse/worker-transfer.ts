// What a parse worker sends back, shaped for a cheap trip between threads: structured clone walks
// every property of every object, so a page's links (dozens of objects, each with an array of
// Bloom positions) cost more to clone than the WARC bytes. Links travel as parallel arrays and
// one Float64Array of positions (exact: positions are below 2^46), and the ArrayBuffers are
// transferred, not copied.
import type { HashedLink } from "../frontier/hashing.js";
import type { WorkerResult } from "./worker.js";

export interface PackedLinks {
  urls: string[];
  hosts: string[];
  /** tier, depth, hops per link. */
  numbers: Int32Array;
  /** k Bloom positions per link. */
  bloom: Float64Array;
  k: number;
}

/** Every link must carry exactly k Bloom positions. */
export function packWorkerLinks(links: readonly HashedLink[], k: number): PackedLinks {
  const n = links.length;
  const numbers = new Int32Array(n * 3);
  const bloom = new Float64Array(n * k);
  const urls = new Array<string>(n);
  const hosts = new Array<string>(n);
  links.forEach((l, i) => {
    urls[i] = l.url;
    hosts[i] = l.host;
    numbers[i * 3] = l.tier;
    numbers[i * 3 + 1] = l.depth;
    numbers[i * 3 + 2] = l.hops;
    const b = l.bloom;
    if (!b || b.length !== k) throw new RangeError(`link ${l.url} has no ${k} Bloom positions`);
    for (let j = 0; j < k; j++) bloom[i * k + j] = b[j]!;
  });
  return { urls, hosts, numbers, bloom, k };
}

export function unpackWorkerLinks(p: PackedLinks): HashedLink[] {
  const out = new Array<HashedLink>(p.urls.length);
  for (let i = 0; i < p.urls.length; i++) {
    out[i] = {
      url: p.urls[i]!, host: p.hosts[i]!, tier: p.numbers[i * 3]!, depth: p.numbers[i * 3 + 1]!, hops: p.numbers[i * 3 + 2]!,
      bloom: p.bloom.subarray(i * p.k, (i + 1) * p.k),
    };
  }
  return out;
}

/** A WorkerResult as it crosses from a worker thread: its links packed. */
export type PackedWorkerResult = Omit<WorkerResult, "links"> & { links: PackedLinks };
