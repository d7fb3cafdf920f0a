// Per-URL re-crawl history in the node's Redis: one hash per host (P rp:<host>), field = the 8-byte
// hash of path+query, value = the record with the ETag and the Huffman-coded path (history-codec.ts
// format 3; its next-due field belongs to due-store.ts). Small hashes are listpack-encoded, so a
// URL costs about the record (see docs/recrawl.md for the measured bytes per URL). Records from
// before format 3 (P rh:<host>, keyed by the path) are still read, and moved by the next visit.
// A visit is recorded by frontier/lua/record_visit.lua: record + per-host and node metrics in one
// step, compare-and-set on the last-visit stamp.
import type { Redis } from "ioredis";
import { FrontierKeys, Scripts } from "../../frontier/index.js";
import { type RatePrior, emptyHistory, estimateRate, observe } from "./estimator.js";
import { casStamp, decodeRecord, encodeRecord, pathKey, type UrlHistory } from "./history-codec.js";
import { DAY_MS } from "./poisson.js";
import type { Evidence } from "./validators.js";


export interface VisitRecord {
  atMs: number;
  /** 200-class or 304. */
  status: number;
  /** Body bytes received (a 304 has none). */
  bytes: number;
  /** Content digest of the extracted text (ignored on 304: the stored one stays). */
  digest?: string;
  etag?: string;
  lastModifiedMs?: number;
  etagChurns?: boolean;
  tier: number;
  cost: number;
  /** What the exchange said about the host's validators (validators.ts). */
  evidence?: Evidence;
}

export interface RecordResult {
  /** null on a first visit (nothing to compare with). */
  changed: boolean | null;
  history: UrlHistory;
}

export interface RecrawlMetrics {
  fetches: number;
  changes: number;
  unchanged: number;
  notModified: number;
  bytes: number;
  /** Cost per detected change: what a re-crawl budget actually buys. */
  fetchesPerChange: number;
  bytesPerChange: number;
  noChangeShare: number;
  notModifiedShare: number;
  validators: { honoured: number; ignored: number; churningEtag: number };
}

/** One entry of the outcome stream P rv. */
export interface VisitOutcome {
  id: string;
  url: string;
  /** null on a first visit. */
  changed: boolean | null;
  atMs: number;
  /** Visit cost in the budget unit, as the recorder computed it. */
  cost: number;
}

export class StaleHistoryError extends Error {}

function splitUrl(url: string): { host: string; field: string } {
  const u = new URL(url);
  return { host: u.host, field: u.pathname + u.search };
}

export class RecrawlHistoryStore {
  private readonly scripts: Scripts;
  private readonly names: FrontierKeys;
  /**
   * `outcomeStreamCap` > 0 also appends every recorded visit (url, changed, time) to the capped
   * stream P rv, from which the node's scheduler learns (see docs/recrawl.md).
   */
  constructor(private readonly redis: Redis, private readonly prefix = "", private readonly outcomeStreamCap = 0) {
    this.scripts = new Scripts(redis);
    this.names = new FrontierKeys(prefix);
  }

  private keys(host: string): [string, string, string, string, string] {
    const k = this.names;
    return [k.recrawlHistory(host), k.recrawlHostMetrics(host), k.recrawlMetrics, k.recrawlOutcomes, k.legacyRecrawlHistory(host)];
  }

  /**
   * The stored record of host + path: format 3 by the path's hash (a record holding another path is
   * a hash collision: that page has no record of its own), else one from before format 3.
   */
  private async read(host: string, field: string): Promise<Buffer | null> {
    const [hk, , , , lk] = this.keys(host);
    const b = await this.redis.hgetBuffer(hk, pathKey(field));
    if (b) {
      if (decodeRecord(b).path !== field) throw new StaleHistoryError(`recrawl history: ${host}${field} shares its record key with another path`);
      return b;
    }
    return this.redis.hgetBuffer(lk, field);
  }

  /** Visit outcomes after stream id `afterId` ("0" = from the start), oldest first. */
  async outcomes(afterId = "0", count = 1000): Promise<VisitOutcome[]> {
    const rows = await this.redis.xrange(this.names.recrawlOutcomes, `(${afterId}`, "+", "COUNT", count);
    return rows.map(([id, f]) => {
      const m = new Map<string, string>();
      for (let i = 0; i + 1 < f.length; i += 2) m.set(f[i] as string, f[i + 1] as string);
      const c = m.get("c");
      return { id, url: m.get("u") ?? "", changed: c === "1" ? true : c === "0" ? false : null, atMs: Number(m.get("t")), cost: Number(m.get("k") ?? 1) };
    });
  }

  async get(url: string): Promise<UrlHistory | undefined> {
    const { host, field } = splitUrl(url);
    const b = await this.read(host, field);
    return b ? decodeRecord(b).history : undefined;
  }

  /**
   * Records a visit: updates the change history (changed = a different content digest; a 304 is
   * "unchanged") and the metrics. Retries a lost compare-and-set a few times, then throws.
   */
  async recordVisit(url: string, v: VisitRecord): Promise<RecordResult> {
    const { host, field } = splitUrl(url);
    const [hk, mk, gk, sk, lk] = this.keys(host);
    const key = pathKey(field);
    for (let attempt = 0; attempt < 3; attempt++) {
      const oldBuf = await this.read(host, field);
      const old = oldBuf ? decodeRecord(oldBuf).history : undefined;
      const notModified = v.status === 304;
      if (!old && notModified) throw new StaleHistoryError(`recrawl history: a 304 for ${url}, which has no stored copy`);
      const digest = notModified ? (old as UrlHistory).digest : v.digest;
      if (digest === undefined) throw new StaleHistoryError(`recrawl history: a ${v.status} for ${url} without a content digest`);
      const history = old ? { ...old.history, changedCount: [...old.history.changedCount], changedDays: [...old.history.changedDays] } : emptyHistory();
      let changed: boolean | null = null;
      if (old) {
        changed = !notModified && digest !== old.digest;
        observe(history, (v.atMs - old.lastVisitMs) / DAY_MS, changed);
      }
      const rec: UrlHistory = {
        lastVisitMs: v.atMs,
        lastModifiedMs: v.lastModifiedMs ?? old?.lastModifiedMs,
        etag: v.etag ?? (notModified ? old?.etag : undefined),
        etagChurns: v.etagChurns ?? old?.etagChurns ?? false,
        digest, tier: v.tier, cost: v.cost, history,
      };
      const counters: Array<string | number> = ["fetches", 1, "bytes", v.bytes];
      if (notModified) counters.push("not_modified", 1);
      if (changed === true) counters.push("changes", 1);
      if (changed === false) counters.push("unchanged", 1);
      if (v.evidence === "honoured") counters.push("v_honoured", 1);
      if (v.evidence === "ignored") counters.push("v_ignored", 1);
      if (v.evidence === "churning-etag") counters.push("v_churning", 1);
      const seen = oldBuf ? casStamp(oldBuf) : -1;
      const changedFlag = changed === null ? "-" : changed ? "1" : "0";
      const stored = encodeRecord(rec, field);
      const ok = await this.scripts.runWithKeys("record_visit", [hk, mk, gk, sk, lk], [key, stored, seen, this.outcomeStreamCap, url, changedFlag, v.atMs, v.cost, field, ...counters]);
      if (ok === 1) return { changed, history: decodeRecord(stored).history };
    }
    throw new StaleHistoryError(`recrawl history: ${url} kept changing under us (3 compare-and-set failures)`);
  }

  /** All stored URLs of a host, as path+query and history (HSCAN: no long blocking call on a big host). */
  async *scanHost(host: string): AsyncGenerator<[string, UrlHistory]> {
    for (const [key, legacy] of [[this.keys(host)[0], false], [this.keys(host)[4], true]] as const) {
      let cursor = "0";
      do {
        const [next, flat] = await this.redis.hscanBuffer(key, cursor, "COUNT", 500);
        cursor = next.toString();
        for (let i = 0; i + 1 < flat.length; i += 2) {
          const r = decodeRecord(flat[i + 1] as Buffer);
          yield [legacy ? (flat[i] as Buffer).toString() : (r.path ?? ""), r.history];
        }
      } while (cursor !== "0");
    }
  }

  /** Re-crawl metrics of one host, or of the node without a host. */
  async metrics(host?: string): Promise<RecrawlMetrics> {
    const [, mk, gk] = this.keys(host ?? "");
    const raw = await this.redis.hgetall(host === undefined ? gk : mk);
    const n = (k: string) => Number(raw[k] ?? 0);
    const fetches = n("fetches"), changes = n("changes");
    return {
      fetches, changes, unchanged: n("unchanged"), notModified: n("not_modified"), bytes: n("bytes"),
      fetchesPerChange: changes === 0 ? Infinity : fetches / changes,
      bytesPerChange: changes === 0 ? Infinity : n("bytes") / changes,
      noChangeShare: fetches === 0 ? 0 : n("unchanged") / fetches,
      notModifiedShare: fetches === 0 ? 0 : n("not_modified") / fetches,
      validators: { honoured: n("v_honoured"), ignored: n("v_ignored"), churningEtag: n("v_churning") },
    };
  }

  /** Estimated share of a host's stored pages that are still fresh at `nowMs` (model-based). */
  async estimatedFreshness(host: string, nowMs: number, prior: RatePrior): Promise<number> {
    let sum = 0;
    let n = 0;
    for await (const [, h] of this.scanHost(host)) {
      sum += Math.exp(-estimateRate(h.history, prior) * Math.max(0, nowMs - h.lastVisitMs) / DAY_MS);
      n++;
    }
    return n === 0 ? 1 : sum / n;
  }
}
