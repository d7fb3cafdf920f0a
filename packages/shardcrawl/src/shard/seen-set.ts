// The outbox's local duplicate filter: an exact set of 53-bit URL hashes in two generations.
// When the young generation is full the old one is dropped, so memory stays bounded
// (2 x maxEntries numbers) and the filter forgets old URLs instead of refusing new ones.
// Forgetting only lets a duplicate through (the owner's Bloom filter drops it); unlike a Bloom
// filter here, it can never drop a URL that was not written before (a 53-bit collision aside:
// about 1 in 10^4 over a million URLs).
import { md5Utf8 } from "../frontier/hashing.js";

/** The digest's scratch (md5Utf8 writes into it: no OpenSSL context and Buffer per URL). */
const DIGEST = new Uint8Array(16);
const view = new DataView(DIGEST.buffer);

/** The first 53 bits of the URL's MD5 (the same bits node:crypto's digest gives). */
export function urlHash53(url: string): number {
  md5Utf8(url, DIGEST);
  return (view.getUint32(0) >>> 11) * 2 ** 32 + view.getUint32(4);
}

export class GenerationalSeenSet {
  private young = new Set<number>();
  private old = new Set<number>();

  constructor(private readonly maxEntries: number) {}

  has(h: number): boolean {
    return this.young.has(h) || this.old.has(h);
  }

  add(h: number): void {
    if (this.has(h)) return;
    if (this.young.size >= this.maxEntries) {
      this.old = this.young;
      this.young = new Set<number>();
    }
    this.young.add(h);
  }

  get size(): number {
    return this.young.size + this.old.size;
  }
}
