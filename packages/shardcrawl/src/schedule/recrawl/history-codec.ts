// Compact binary form of one URL's re-crawl history and schedule (a Redis hash field value, see
// history-store.ts and due-store.ts). Format 3, keyed by the path's 8-byte hash (pathKey), carries
// the path itself (path-code.ts) so a record alone gives the URL to fetch:
//   off size field
//    0   1   format version (3)
//    1   1   flags: bit0 the page's ETag follows churn (send If-Modified-Since alone);
//            bits 1-2 plans since the last recorded visit (0-3), bit3 a change hint is pending
//            (both written by the schedule's Lua, cleared by a recorded visit); bit4 a
//            Last-Modified follows; bit5 an extension byte follows; bits 6-7 value tier (3 = 3 or more)
//    2   4   next due, seconds since the Unix epoch (u32, 0 = not in the schedule); owned by the
//            schedule's Lua (recrawl_*.lua): record_visit.lua keeps the stored value
//    6   1   last visit, fraction of its second in 1/256 s
//    7   4   last visit, seconds since the Unix epoch (u32)
//   11   8   content digest of the extracted text (64 bits, content-rules.ts)
//   19   .   observations, changes (varints); unchanged days (u16: log2(1 + minutes) x 2048); a u16 mask of the changed-interval
//            buckets in use (11 buckets), then per bucket in use: count (u8) + mean position inside
//            the bucket on a log scale (u8), so a bucket's sum = count x mean (error < 1%)
//        .   Last-Modified, seconds (u32; flag bit4)
//        .   extension (flag bit5): bit0 visit cost (f32) follows (else the cost is 1), bit1 the path
//            is stored as is (else Huffman-coded), bit2 the tier (u8) follows
//        .   ETag length (u8), the ETag bytes (latin1; longer than 200 bytes: not stored)
//        .   the path + query, to the end
// Format 2 (the same fields at fixed offsets, 59 bytes + ETag, keyed by the path itself) and 1
// (format 2 without the next due) are still read, and converted when the schedule opens.
// When a bucket count would pass 255 every count, the unchanged time and the counters are halved:
// old behaviour fades, which also lets a page's rate drift.
import { createHash } from "node:crypto";
import { BUCKETS, BUCKET_BASE_DAYS, type ChangeHistory } from "./estimator.js";
import { decodePath, encodePath } from "./path-code.js";

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

/** Fixed part of a format-2 record (with the ETag length byte). */
const FIXED_BYTES_V2 = 59;
/** Fixed part of a format-1 record (no next-due field). */
const FIXED_BYTES_V1 = 55;
/** Offset of the next-due field in a format-2 record (u32 BE, seconds). */
const DUE_OFFSET_V2 = 55;
/** Bytes of a format-3 record before its variable part. */
export const FIXED_BYTES = 19;
export const MAX_ETAG_BYTES = 200;
const VERSION = 3;
/** Unchanged days are stored as log2(1 + minutes) in 1/2048 steps (u16): 0.04% apart, up to ~1.6 million days. */
const MINUTES_PER_DAY = 1440;
const UNCHANGED_STEPS = 2048;
/** Bytes of a record's key (the path's hash) in its host's hash. */
export const PATH_KEY_BYTES = 8;

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
  if (h.observations <= 65_535 && h.changedCount.every((n) => n <= 255)) return h;
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
  if (record.readUInt8(0) === VERSION) return record.readUInt32BE(7) * 256 + record.readUInt8(6);
  return record.readUInt32BE(4) * 256 + record.readUInt8(3);
}

/** A record's key in its host's hash: the first 8 bytes of SHA-1 of the path + query (collisions are found: the record holds the path). */
export function pathKey(path: string): Buffer {
  return createHash("sha1").update(path, "utf8").digest().subarray(0, PATH_KEY_BYTES);
}

function checkDigest(u: UrlHistory): void {
  if (!/^[0-9a-f]{16}$/.test(u.digest)) throw new HistoryCodecError(`history: digest must be 16 hex chars, got "${u.digest}"`);
}

function etagBytes(u: UrlHistory): Buffer {
  return u.etag !== undefined && Buffer.byteLength(u.etag, "latin1") <= MAX_ETAG_BYTES ? Buffer.from(u.etag, "latin1") : Buffer.alloc(0);
}

/** The record of one page (format 3): its history, schedule fields and its path + query. */
export function encodeRecord(u: UrlHistory, path: string): Buffer {
  checkDigest(u);
  const h = fit(u.history);
  const etag = etagBytes(u);
  const coded = encodePath(path);
  const raw = Buffer.from(path, "utf8");
  const rawPath = coded.length >= raw.length;
  const pathBytes = rawPath ? raw : coded;
  const tier = Math.max(0, Math.min(255, Math.round(u.tier)));
  const cost = Math.fround(u.cost);
  const ext = (cost !== 1 ? 1 : 0) | (rawPath ? 2 : 0) | (tier >= 3 ? 4 : 0);
  const hasLm = u.lastModifiedMs !== undefined && u.lastModifiedMs >= 1000;
  // Fixed part, 2 varints (<= 3 bytes each), unchanged days, mask, buckets, LM, extension, ETag length.
  const b = Buffer.allocUnsafe(FIXED_BYTES + 6 + 4 + 2 * BUCKETS + 4 + 6 + 1 + etag.length + pathBytes.length);
  let o = 0;
  const varint = (x: number) => {
    let v = Math.max(0, Math.floor(x));
    while (v >= 128) {
      b[o++] = (v & 127) | 128;
      v = Math.floor(v / 128);
    }
    b[o++] = v;
  };
  b[o++] = VERSION;
  b[o++] = (u.etagChurns ? 1 : 0) | (Math.max(0, Math.min(3, u.missedPlans ?? 0)) << 1) | (u.hinted ? 8 : 0) | (hasLm ? 16 : 0) | (ext ? 32 : 0) | (Math.min(3, tier) << 6);
  o = b.writeUInt32BE(Math.max(0, Math.min(0xffffffff, Math.round(u.dueSec ?? 0))), o);
  const visit = lastVisitStamp(u.lastVisitMs);
  b[o++] = visit.fraction;
  o = b.writeUInt32BE(visit.seconds, o);
  o += b.write(u.digest, o, "hex");
  varint(Math.min(65_535, h.observations));
  varint(Math.min(65_535, h.changes));
  const unchanged = Math.min(65_535, Math.round(Math.log2(1 + Math.max(0, h.unchangedDays) * MINUTES_PER_DAY) * UNCHANGED_STEPS));
  o = b.writeUInt16BE(unchanged, o);
  let mask = 0;
  for (let k = 0; k < BUCKETS; k++) if ((h.changedCount[k] as number) > 0) mask |= 1 << k;
  o = b.writeUInt16BE(mask, o);
  for (let k = 0; k < BUCKETS; k++) {
    const n = h.changedCount[k] as number;
    if (n > 0) {
      b[o++] = n;
      b[o++] = quantise(k, (h.changedDays[k] as number) / n);
    }
  }
  if (hasLm) o = b.writeUInt32BE(Math.min(0xffffffff, Math.round((u.lastModifiedMs as number) / 1000)), o);
  if (ext) {
    b[o++] = ext;
    if (ext & 1) o = b.writeFloatBE(cost, o);
    if (ext & 4) b[o++] = tier;
  }
  b[o++] = etag.length;
  o += etag.copy(b, o);
  o += pathBytes.copy(b, o);
  return b.subarray(0, o);
}

/** A stored record: its history, and its path (format 3; older formats are keyed by the path). */
export function decodeRecord(b: Buffer): { history: UrlHistory; path?: string } {
  if (b.length >= 1 && b.readUInt8(0) !== VERSION) return { history: decodeV2(b) };
  if (b.length < FIXED_BYTES + 6) throw new HistoryCodecError(`history: record of ${b.length} bytes is too short`);
  let o = FIXED_BYTES;
  const need = (n: number) => {
    if (o + n > b.length) throw new HistoryCodecError("history: record ends early");
  };
  const varint = () => {
    let v = 0;
    for (let mul = 1; ; mul *= 128) {
      need(1);
      const x = b.readUInt8(o++);
      v += (x & 127) * mul;
      if (x < 128 || mul > 2 ** 21) return v;
    }
  };
  const flags = b.readUInt8(1);
  const observations = varint();
  const changes = varint();
  need(4);
  const unchangedDays = (2 ** (b.readUInt16BE(o) / UNCHANGED_STEPS) - 1) / MINUTES_PER_DAY;
  const mask = b.readUInt16BE(o + 2);
  o += 4;
  const changedCount: number[] = [];
  const changedDays: number[] = [];
  for (let k = 0; k < BUCKETS; k++) {
    if (!(mask & (1 << k))) {
      changedCount.push(0);
      changedDays.push(0);
      continue;
    }
    need(2);
    const n = b.readUInt8(o);
    changedCount.push(n);
    changedDays.push(n * dequantise(k, b.readUInt8(o + 1)));
    o += 2;
  }
  let lm = 0;
  if (flags & 16) {
    need(4);
    lm = b.readUInt32BE(o);
    o += 4;
  }
  let ext = 0;
  let cost = 1;
  let tier = flags >> 6;
  if (flags & 32) {
    need(1);
    ext = b.readUInt8(o++);
    if (ext & 1) {
      need(4);
      cost = b.readFloatBE(o);
      o += 4;
    }
    if (ext & 4) {
      need(1);
      tier = b.readUInt8(o++);
    }
  }
  need(1);
  const etagLen = b.readUInt8(o++);
  need(etagLen);
  const etag = b.toString("latin1", o, o + etagLen);
  o += etagLen;
  const pathBytes = b.subarray(o);
  let path: string;
  try {
    path = ext & 2 ? pathBytes.toString("utf8") : decodePath(pathBytes);
  } catch (err) {
    throw new HistoryCodecError(`history: ${(err as Error).message}`);
  }
  return {
    path,
    history: {
      lastVisitMs: b.readUInt32BE(7) * 1000 + Math.round((b.readUInt8(6) * 1000) / 256),
      ...(lm === 0 ? {} : { lastModifiedMs: lm * 1000 }),
      ...(etagLen === 0 ? {} : { etag }),
      etagChurns: (flags & 1) === 1,
      dueSec: b.readUInt32BE(2),
      missedPlans: (flags >> 1) & 3,
      hinted: (flags & 8) === 8,
      digest: b.toString("hex", 11, 19),
      tier,
      cost,
      history: { observations, changes, unchangedDays, changedCount, changedDays },
    },
  };
}

/** The history of a stored record of any format. */
export function decodeHistory(b: Buffer): UrlHistory {
  return decodeRecord(b).history;
}

/** A format-2 record (keyed by its path): what nodes before format 3 stored; kept to test the conversion. */
export function encodeHistoryV2(u: UrlHistory): Buffer {
  checkDigest(u);
  const etag = etagBytes(u);
  const b = Buffer.alloc(FIXED_BYTES_V2 + etag.length);
  const h = fit(u.history);
  b.writeUInt8(2, 0);
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
  b.writeUInt32BE(Math.max(0, Math.min(0xffffffff, Math.round(u.dueSec ?? 0))), DUE_OFFSET_V2);
  etag.copy(b, FIXED_BYTES_V2);
  return b;
}

function decodeV2(b: Buffer): UrlHistory {
  const version = b.length > 0 ? b.readUInt8(0) : 0;
  if (version !== 2 && version !== 1) throw new HistoryCodecError(`history: unknown record format ${version}`);
  if (b.length < FIXED_BYTES_V1) throw new HistoryCodecError(`history: record of ${b.length} bytes is shorter than ${FIXED_BYTES_V1}`);
  const fixed = version === 1 ? FIXED_BYTES_V1 : FIXED_BYTES_V2;
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
    dueSec: version === 1 ? 0 : b.readUInt32BE(DUE_OFFSET_V2),
    missedPlans: (b.readUInt8(1) >> 1) & 3,
    hinted: (b.readUInt8(1) & 8) === 8,
    digest: b.toString("hex", 12, 20),
    tier: b.readUInt8(2),
    cost: b.readFloatBE(28),
    history: { observations: b.readUInt16BE(20), changes: b.readUInt16BE(22), unchangedDays: b.readFloatBE(24), changedCount, changedDays },
  };
}
