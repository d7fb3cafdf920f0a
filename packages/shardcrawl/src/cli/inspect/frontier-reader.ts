// Read-only queries on one node's frontier keyspace (frontier/keys.ts) for `shardcrawl inspect`.
// Nothing here writes: an inspection of a running node must not change its crawl. Scans of
// queues and lists are chunked and bounded (maxScan), so a host with a million queued URLs costs
// a bounded number of round trips.
import type { Redis } from "ioredis";
import {
  BloomHasher, CrawlScopeStore, FrontierKeys, RobotsCache, Scripts, decodeElement, initBloom, packBloomProbe, type BloomParams, type RobotsCacheEntry,
} from "../../frontier/index.js";
import { MAX_TIER } from "../../shared/types.js";
import { registrableDomain, type ScopeMode } from "../../url/scope.js";

const CHUNK = 1000;

export interface QueuedAt {
  tier: number;
  /** 0-based position in its tier's queue. */
  position: number;
  /** URLs of this host that will be leased before it (higher tiers first, then its own tier). */
  ahead: number;
  depth: number;
  attempt: number;
}

export interface LeaseInfo {
  id: string;
  tier: number;
  url: string;
  expiresAt: number | null;
}

export interface ShedEntry {
  at: number;
  reason: string;
  host: string;
  url: string;
}

export interface ScopeVerdict {
  mode: ScopeMode;
  /** The key the scope compares (registrable domain or host); absent in mode any. */
  key?: string;
  inScope: boolean;
}

function toInt(v: unknown): number {
  const n = Number(v);
  return Number.isFinite(n) ? n : 0;
}

export class FrontierReader {
  readonly keys: FrontierKeys;
  /** Hosts admitted under a registrable domain (P dh), for the hosts-per-domain cap. */
  async domainHosts(domain: string): Promise<number> {
    return Number((await this.redis.hget(this.keys.domainHosts, domain)) ?? 0);
  }

  private constructor(readonly redis: Redis, readonly bloom: BloomParams, keys: FrontierKeys, private readonly scripts: Scripts) {
    this.keys = keys;
  }

  /** Opens the crawl under `prefix`; throws when that Redis holds none. */
  static async open(redis: Redis, prefix: string): Promise<FrontierReader> {
    const keys = new FrontierKeys(prefix);
    const scripts = new Scripts(redis);
    if (!(await redis.exists(keys.bloomParams))) throw new Error(`inspect: this Redis holds no crawl under the key prefix ${JSON.stringify(prefix)}`);
    return new FrontierReader(redis, await initBloom(redis, scripts, keys, undefined, true), keys, scripts);
  }

  /** The raw host hash (one-letter fields, keys.ts), empty when the host is unknown. */
  hostFields(host: string): Promise<Record<string, string>> {
    return this.redis.hgetall(this.keys.host(host));
  }

  async tierSizes(host: string): Promise<number[]> {
    const m = this.redis.multi();
    for (let t = 0; t <= MAX_TIER; t++) m.llen(this.keys.queue(host, t));
    const r = (await m.exec()) ?? [];
    return r.map(([, v]) => toInt(v));
  }

  /** The host's score in the ready schedule (earliest start, epoch ms), or null when it is not there. */
  async readyAt(host: string): Promise<number | null> {
    const s = await this.redis.zscore(this.keys.ready, host);
    return s === null ? null : Number(s);
  }

  /** The first `n` URLs of each non-empty tier, in lease order. */
  async queueHeads(host: string, origin: string | undefined, n: number): Promise<Array<{ tier: number; urls: string[] }>> {
    const out: Array<{ tier: number; urls: string[] }> = [];
    for (let t = 0; t <= MAX_TIER; t++) {
      const els = await this.redis.lrangeBuffer(this.keys.queue(host, t), 0, n - 1); // packed elements are binary (element.ts)
      if (els.length) out.push({ tier: t, urls: els.map((e) => fullUrl(decodeElement(e).url, origin)) });
    }
    return out;
  }

  /** Where `url` waits in its host's queues, scanning at most `maxScan` elements. */
  async findQueued(host: string, origin: string | undefined, url: string, maxScan: number): Promise<{ at: QueuedAt | null; scanned: number; complete: boolean }> {
    let scanned = 0;
    let ahead = 0;
    for (let t = 0; t <= MAX_TIER; t++) {
      const key = this.keys.queue(host, t);
      const len = await this.redis.llen(key);
      for (let i = 0; i < len; i += CHUNK) {
        if (scanned >= maxScan) return { at: null, scanned, complete: false };
        const els = await this.redis.lrangeBuffer(key, i, i + CHUNK - 1);
        for (let j = 0; j < els.length; j++) {
          const el = decodeElement(els[j]!);
          if (fullUrl(el.url, origin) === url) return { at: { tier: t, position: i + j, ahead: ahead + i + j, depth: el.depth, attempt: el.attempt }, scanned: scanned + j + 1, complete: true };
        }
        scanned += els.length;
      }
      ahead += len;
    }
    return { at: null, scanned, complete: true };
  }

  /** Active leases of a host (requests in flight). */
  async leasesOf(host: string, origin: string | undefined): Promise<LeaseInfo[]> {
    const out: LeaseInfo[] = [];
    let cursor = "0";
    do {
      const [next, flat] = await this.redis.hscan(this.keys.leaseData, cursor, "COUNT", CHUNK);
      cursor = next;
      for (let i = 0; i + 1 < flat.length; i += 2) {
        const [h, tier, ...rest] = flat[i + 1]!.split("\t");
        if (h !== host) continue;
        const el = decodeElement(rest.join("\t"));
        const exp = await this.redis.zscore(this.keys.leases, flat[i]!);
        out.push({ id: flat[i]!, tier: toInt(tier), url: fullUrl(el.url, origin), expiresAt: exp === null ? null : Number(exp) });
      }
    } while (cursor !== "0");
    return out;
  }

  /**
   * A fetched page of `url` waiting in the parse queue, or taken by a parser and not yet
   * acknowledged (P pq, P pi:<consumer>, P pg:<id> m), reading at most `maxScan` page ids.
   */
  async inParseStage(url: string, maxScan: number): Promise<{ id: string; status: number; fetchedAt: string; consumer: string | null } | null> {
    const lists: Array<{ key: string; consumer: string | null }> = [{ key: this.keys.parseQueue, consumer: null }];
    for (const c of await this.redis.smembers(this.keys.parseConsumers)) lists.push({ key: this.keys.parseInFlight(c), consumer: c });
    let budget = maxScan;
    for (const { key, consumer } of lists) {
      const ids = await this.redis.lrange(key, 0, Math.max(0, budget - 1));
      budget -= ids.length;
      for (let i = 0; i < ids.length; i += CHUNK) {
        const m = this.redis.multi();
        for (const id of ids.slice(i, i + CHUNK)) m.hget(this.keys.page(id), "m");
        const metas = (await m.exec()) ?? [];
        for (let j = 0; j < metas.length; j++) {
          const raw = metas[j]![1];
          if (typeof raw !== "string" || !raw.includes(url)) continue;
          try {
            const meta = JSON.parse(raw) as { url?: string; status?: number; fetchedAt?: string };
            if (meta.url === url) return { id: ids[i + j]!, status: toInt(meta.status), fetchedAt: String(meta.fetchedAt ?? ""), consumer };
          } catch {
            // a damaged record: the parser reports it; not ours to explain
          }
        }
      }
      if (budget <= 0) break;
    }
    return null;
  }

  /** Seen filter test (true = maybe seen, false = certainly never admitted). */
  async mightHaveSeen(url: string): Promise<boolean> {
    const { layout, blob } = packBloomProbe(this.bloom, [new BloomHasher(this.bloom).positions(url)]);
    const r = (await this.scripts.run("bloom_test", [this.keys.prefix, this.bloom.segmentBits, layout, blob])) as unknown[];
    return toInt(r[0]) === 1;
  }

  /** P shedlog entries, newest first, optionally only those matching. */
  async shedEntries(match: (e: ShedEntry) => boolean = () => true): Promise<ShedEntry[]> {
    const raw = await this.redis.lrange(this.keys.shedLog, 0, -1);
    const out: ShedEntry[] = [];
    for (const line of raw) {
      const [at, reason, host, ...url] = line.split("\t");
      const e = { at: toInt(at), reason: reason ?? "", host: host ?? "", url: url.join("\t") };
      if (match(e)) out.push(e);
    }
    return out;
  }

  /** Whether `url` waits in P spill (shed in spill mode, not yet moved to disk). */
  async inSpillList(url: string, maxScan: number): Promise<{ found: { tier: number } | null; complete: boolean }> {
    const len = await this.redis.llen(this.keys.spill);
    for (let i = 0; i < Math.min(len, maxScan); i += CHUNK) {
      for (const line of await this.redis.lrange(this.keys.spill, i, i + CHUNK - 1)) {
        const hit = matchSpillLine(line, url);
        if (hit) return { found: hit, complete: true };
      }
    }
    return { found: null, complete: len <= maxScan };
  }

  async robots(origin: string): Promise<{ entry: RobotsCacheEntry; ttlMs: number } | null> {
    const cache = new RobotsCache(this.redis, this.keys, { scripts: this.scripts });
    const entry = await cache.get(origin);
    if (!entry) return null;
    return { entry, ttlMs: (await cache.freshForMs(origin)) ?? 0 };
  }

  /** The scope stored by the node at start (frontier/crawl-scope.ts), evaluated for one host. */
  async scopeOf(host: string): Promise<ScopeVerdict | null> {
    const scope = new CrawlScopeStore(this.redis, this.keys);
    const mode = await scope.mode();
    if (mode === null) return null;
    if (mode === "any") return { mode, inScope: true };
    const key = mode === "domains" ? registrableDomain(host) : host;
    return { mode, key, inScope: await scope.has(key) };
  }

  /** Flow-control settings the node published (P flowcfg): host page budget, shed mode... */
  flowConfig(): Promise<Record<string, string>> {
    return this.redis.hgetall(this.keys.flowCfg);
  }

  counters(): Promise<Record<string, string>> {
    return this.redis.hgetall(this.keys.stats);
  }
}

/** A queue element's URL part: a path gets the host's origin back. */
export function fullUrl(el: string, origin: string | undefined): string {
  return origin && el.startsWith("/") ? origin + el : el;
}

/** A spill line "<host>\t<tier>\t<url + suffix>" for `url`, or null. */
export function matchSpillLine(line: string, url: string): { tier: number } | null {
  const a = line.indexOf("\t");
  const b = line.indexOf("\t", a + 1);
  if (a < 0 || b < 0) return null;
  return decodeElement(line.slice(b + 1)).url === url ? { tier: toInt(line.slice(a + 1, b)) } : null;
}
