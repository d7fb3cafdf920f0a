// Compact binary form of one URL's re-crawl history and schedule (a Redis hash field value, see
// history-store.ts and due-store.ts). Fixed part 59 bytes (with the ETag length byte), then the
// ETag (up to 200 bytes):
//   off size field
//    0   1   format version (2; 1 = without the next-due field, still read)
//    1   1   flags: bit0 the page's ETag follows churn (send If-Modified-Since alone);
//            bits 1-2 plans since the last recorded visit (0-3), bit3 a change hint is pending
//            (both written by the schedule's Lua, cleared by a recorded visit)
//    2   1   value tier
//    3   1   last visit, fraction of its second in 1/256 s (0 in records written before it existed)
//    4   4   last visit, seconds since the Unix epoch (u32)
//    8   4   Last-Modified, seconds (u32, 0 = none)
//   12   8   content digest of the extracted text (64 bits, content-rules.ts)
//   20   2   observations (u16)     22  2  changes (u16)
//   24   4   unchanged days (f32)   28  4  visit cost (f32)
//   32  22   11 changed-interval buckets: count (u8) + mean position inside the bucket on a log
//            scale (u8, 0..255), so a bucket's sum = count x mean (error < 1%)
//   54   1   ETag length
//   55   4   next due, seconds since the Unix epoch (u32, 0 = not in the schedule); owned by the
//            schedule's Lua (recrawl_*.lua): record_visit.lua keeps the stored value
//   59   n   the ETag bytes (latin1; longer ETags are not stored: no If-None-Match)
// When a bucket count would pass 255 every count, the unchanged time and the counters are halved:
// old behaviour fades, which also lets a page's rate drift.
import { BUCKETS, BUCKET_BASE_DAYS, type ChangeHistory } from "./estimator.js";

export interface UrlHistory {
  lastVisitMs: number;
  lastModifiedMs?: number;
  etag?: string;
  etagChurns: boolean;
  /** 16 hex chars (ContentDigester.digest). */
  digest: string;
  tier: number;
  cost: number;
  history: ChangeHistory;
  /** Next due time (epoch s, 0 = not scheduled); set by the schedule (due-store.ts), not by visits. */
  dueSec?: number;
  /** Plans since the last recorded visit (0-3). */
  missedPlans?: number;
  /** A change hint (sitemap lastmod, listing, feed) arrived after the last visit. */
  hinted?: boolean;
}

export const FIXED_BYTES = 59;
/** Fixed part of a version-1 record (no next-due field). */
const FIXED_BYTES_V1 = 55;
/** Offset of the next-due field (u32 BE, seconds). */
export const DUE_OFFSET = 55;
export const MAX_ETAG_BYTES = 200;
const VERSION = 2;

function bucketRange(k: number): [number, number] {
  const lo = k === 0 ? BUCKET_BASE_DAYS / 16 : BUCKET_BASE_DAYS * 4 ** k;
  const hi = k === BUCKETS - 1 ? lo * 64 : BUCKET_BASE_DAYS * 4 ** (k + 1);
  return [lo, hi];
}

function quantise(k: number, meanDays: number): number {
  const [lo, hi] = bucketRange(k);
  const p = Math.log(Math.max(meanDays, lo) / lo) / Math.log(hi / lo);
  return Math.max(0, Math.min(255, Math.round(p * 255)));
}

function dequantise(k: number, q: number): number {
  const [lo, hi] = bucketRange(k);
  return lo * (hi / lo) ** (q / 255);
}

/** Halves the history while any bucket count exceeds 255 (u8). */
function fit(h: ChangeHistory): ChangeHistory {
  const out: ChangeHistory = { ...h, changedCount: [...h.changedCount], changedDays: [...h.changedDays] };
  while (Math.max(...out.changedCount) > 255 || out.observations > 65_535) {
    for (let k = 0; k < BUCKETS; k++) {
      const n = out.changedCount[k] as number;
      const half = Math.ceil(n / 2);
      out.changedDays[k] = n === 0 ? 0 : ((out.changedDays[k] as number) / n) * half;
      out.changedCount[k] = half;
    }
    out.unchangedDays /= 2;
    out.changes = out.changedCount.reduce((a, b) => a + b, 0);
    out.observations = Math.ceil(out.observations / 2);
    if (out.observations < out.changes) out.observations = out.changes;
  }
  return out;
}

export class HistoryCodecError extends Error {}

/** The last-visit time as stored: whole seconds (u32) and the fraction in 1/256 s (u8). */
export function lastVisitStamp(ms: number): { seconds: number; fraction: number } {
  const t = Math.max(0, Math.min(0xffffffff * 1000, ms));
  let seconds = Math.floor(t / 1000);
  let fraction = Math.round(((t - seconds * 1000) * 256) / 1000);
  if (fraction === 256) {
    seconds++;
    fraction = 0;
  }
  return { seconds: Math.min(0xffffffff, seconds), fraction };
}

/** The compare-and-set stamp record_visit.lua reads from a stored record: seconds x 256 + fraction. */
export function casStamp(record: Buffer): number {
  return record.readUInt32BE(4) * 256 + record.readUInt8(3);
}

export function encodeHistory(u: UrlHistory): Buffer {
  if (!/^[0-9a-f]{16}$/.test(u.digest)) throw new HistoryCodecError(`history: digest must be 16 hex chars, got "${u.digest}"`);
  const etag = u.etag !== undefined && Buffer.byteLength(u.etag, "latin1") <= MAX_ETAG_BYTES ? Buffer.from(u.etag, "latin1") : Buffer.alloc(0);
  const b = Buffer.alloc(FIXED_BYTES + etag.length);
  const h = fit(u.history);
  b.writeUInt8(VERSION, 0);
  b.writeUInt8((u.etagChurns ? 1 : 0) | (Math.max(0, Math.min(3, u.missedPlans ?? 0)) << 1) | (u.hinted ? 8 : 0), 1);
  b.writeUInt8(Math.max(0, Math.min(255, u.tier)), 2);
  // Sub-second part too: revisits can be seconds apart (short cycles, simulated time), and an
  // interval measured in whole seconds would then be badly off.
  const visit = lastVisitStamp(u.lastVisitMs);
  b.writeUInt32BE(visit.seconds, 4);
  b.writeUInt8(visit.fraction, 3);
  b.writeUInt32BE(u.lastModifiedMs === undefined ? 0 : Math.max(0, Math.min(0xffffffff, Math.round(u.lastModifiedMs / 1000))), 8);
  b.write(u.digest, 12, "hex");
  b.writeUInt16BE(Math.min(65_535, h.observations), 20);
  b.writeUInt16BE(Math.min(65_535, h.changes), 22);
  b.writeFloatBE(h.unchangedDays, 24);
  b.writeFloatBE(u.cost, 28);
  for (let k = 0; k < BUCKETS; k++) {
    const n = h.changedCount[k] as number;
    b.writeUInt8(n, 32 + 2 * k);
    b.writeUInt8(n === 0 ? 0 : quantise(k, (h.changedDays[k] as number) / n), 33 + 2 * k);
  }
  b.writeUInt8(etag.length, 54);
  b.writeUInt32BE(Math.max(0, Math.min(0xffffffff, Math.round(u.dueSec ?? 0))), DUE_OFFSET);
  etag.copy(b, FIXED_BYTES);
  return b;
}

export function decodeHistory(b: Buffer): UrlHistory {
  if (b.length < FIXED_BYTES_V1) throw new HistoryCodecError(`history: record of ${b.length} bytes is shorter than ${FIXED_BYTES_V1}`);
  const version = b.readUInt8(0);
  if (version !== VERSION && version !== 1) throw new HistoryCodecError(`history: unknown record format ${version}`);
  const fixed = version === 1 ? FIXED_BYTES_V1 : FIXED_BYTES;
  const etagLen = b.readUInt8(54);
  if (b.length !== fixed + etagLen) throw new HistoryCodecError(`history: record is ${b.length} bytes, its ETag length says ${fixed + etagLen}`);
  const changedCount: number[] = [];
  const changedDays: number[] = [];
  for (let k = 0; k < BUCKETS; k++) {
    const n = b.readUInt8(32 + 2 * k);
    changedCount.push(n);
    changedDays.push(n === 0 ? 0 : n * dequantise(k, b.readUInt8(33 + 2 * k)));
  }
  const lm = b.readUInt32BE(8);
  return {
    lastVisitMs: b.readUInt32BE(4) * 1000 + Math.round((b.readUInt8(3) * 1000) / 256),
    ...(lm === 0 ? {} : { lastModifiedMs: lm * 1000 }),
    ...(etagLen === 0 ? {} : { etag: b.toString("latin1", fixed, fixed + etagLen) }),
    etagChurns: (b.readUInt8(1) & 1) === 1,
    dueSec: version === 1 ? 0 : b.readUInt32BE(DUE_OFFSET),
    missedPlans: (b.readUInt8(1) >> 1) & 3,
    hinted: (b.readUInt8(1) & 8) === 8,
    digest: b.toString("hex", 12, 20),
    tier: b.readUInt8(2),
    cost: b.readFloatBE(28),
    history: { observations: b.readUInt16BE(20), changes: b.readUInt16BE(22), unchangedDays: b.readFloatBE(24), changedCount, changedDays },
  };
}
