// One node's frontier in Redis: per-host queues, the ready schedule, leases, the seen filter and
// the crawl counters. Every operation that changes more than one key is ONE Lua script (lua/), so
// a crash never leaves half a step. The parse queue and the robots cache are separate classes
// (parse-queue.ts, robots-cache.ts) over the same keyspace (keys.ts).
//
// Times are epoch ms passed in by the caller (default Date.now()), so every process of a node
// agrees on one clock and tests can drive time. The Redis client belongs to the caller; give it a
// commandTimeout so no call can hang.
import type { Redis } from "ioredis";
import type { FetchedPage, FetchErrorClass, Lease } from "../shared/types.js";
import { BloomHasher, initBloom, readBloomStatus, type BloomParams, type BloomSizing, type BloomStatus } from "./bloom.js";
import { decodeElement } from "./element.js";
import { DEFAULT_PREFIX, FrontierKeys } from "./keys.js";
import { MAX_LINKS_PER_CALL, packBloomProbe, packLinks, type HashedLink, type QueueCaps } from "./links.js";
import { encodePage, type SpooledPage } from "./page-codec.js";
import { ParseQueue } from "./parse-queue.js";
import { RobotsCache } from "./robots-cache.js";
import { RobotsOutages } from "./robots-outages.js";
import { Scripts, type ScriptArg } from "./scripts.js";
import { CrawlScopeStore } from "./crawl-scope.js";
import { shareFetchTimes } from "./fetch-times.js";
import { politenessDomains } from "./politeness-key.js";
import { ExclusionList, type Exclusion } from "./exclusions.js";
import { purgeExcluded } from "./exclusion-purge.js";

export interface FrontierOptions {
  /** Key prefix of this crawl (default "sc:"). */
  prefix?: string;
  /** Seen-filter sizing: required on the first start of a crawl, optional on resume (must match if given). */
  bloom?: BloomSizing;
  /** Default gap between the end of one request and the start of the next to a host (default 1000). */
  delayMs?: number;
  /** Default requests in flight per host (default 1). */
  hostConcurrency?: number;
  /** Lease lifetime: longer than the slowest legitimate fetch (default 120 s). */
  leaseTtlMs?: number;
  /** Stop leasing when fetched + failed + active leases reaches this (default: no budget). */
  maxPages?: number;
  /** Parse queue bound in pages; no leasing while it is full (default 256). */
  parseQueueMax?: number;
  /** Parse stage bound in body bytes (queued or being parsed); no leasing while it is reached (default 0 = none). */
  parseQueueMaxBytes?: number;
  /** Queue bound per host; a hot host's extra links are dropped, not queued (default 1,000,000). */
  maxQueuedPerHost?: number;
  /** Queue bound for the whole frontier (default 100,000,000). */
  maxQueuedTotal?: number;
  /** Hosts admitted per registrable domain: wildcard-DNS host farms (default 0 = none). */
  maxHostsPerDomain?: number;
  /** Flow control shared by every process of the node (written to P flowcfg at open). */
  flow?: Partial<FlowSettings>;
  /**
   * Write P flowcfg at open (default true). A node's supervisor writes it before it starts its
   * children, which open with the same config and pass false (checked, not written again).
   */
  publishFlow?: boolean;
  /** Bound on the robots.txt cache in bytes (0 = none; default DEFAULT_ROBOTS_CACHE_MAX_BYTES). */
  robotsCacheMaxBytes?: number;
  /**
   * What shares one politeness clock and in-flight limit: each "host", or each registrable
   * "domain" across all its hosts (default "domain"; lib.lua domain_fill).
   */
  politenessKey?: PolitenessKey;
}

export type PolitenessKey = "host" | "domain";

/** Flow-control settings the Lua scripts read from P flowcfg (see lib.lua feedback and add_links). */
export interface FlowSettings {
  /** Lowest adaptive per-host concurrency (default 1). */
  aimdFloor: number;
  /** Additive increase: + this / limit per successful request (default 0.1). */
  aimdIncrease: number;
  /** Multiplicative decrease factor on a back-off signal (default 0.5). */
  aimdDecrease: number;
  /** A response slower than this times the host's baseline latency is a back-off signal (0 = off; default 5). */
  aimdLatencyFactor: number;
  /** ... and slower than this many ms (default 2000). */
  aimdLatencyMinMs: number;
  /** After a decrease, the limit that failed is retried only after this long (default 60 s). */
  aimdProbeMs: number;
  /** Largest delay multiplier once concurrency is at the floor (default 16). */
  aimdMaxDelayMultiplier: number;
  /** URLs ever admitted per host (spider-trap defence; 0 = none). */
  hostPageBudget: number;
  /** Past a queue cap: "drop" shed URLs (counted) or "spill" them to disk for later re-admission. */
  shedMode: "drop" | "spill";
  /** Requests in flight across the node (our upstream plan's cap; 0 = none). */
  globalConcurrency: number;
}

export const DEFAULT_FLOW: FlowSettings = {
  aimdFloor: 1, aimdIncrease: 0.1, aimdDecrease: 0.5, aimdLatencyFactor: 5, aimdLatencyMinMs: 2000, aimdProbeMs: 60_000,
  aimdMaxDelayMultiplier: 16, hostPageBudget: 0, shedMode: "drop", globalConcurrency: 0,
};

/**
 * What a finished request says about its host (lib.lua feedback): "ok" (a normal answer, counts
 * for additive increase and the latency baseline), "backoff" (429/503, timeout, challenge page:
 * multiplicative decrease), "none" (nothing to learn about the host's capacity).
 */
export interface HostFeedback {
  signal: "ok" | "backoff" | "none";
  /** Time to the response headers (or the whole fetch), ms. */
  latencyMs?: number;
  /** When the request started (epoch ms): a decrease happens once per window of requests. */
  startedAt?: number;
  /** The host may not start another request before this epoch ms (Retry-After). */
  notBefore?: number;
}

/** A host under back-off, for pressure metrics. */
export interface HostPressure {
  host: string;
  pressure: number;
  inFlight: number;
  limit: number;
  delayMultiplier: number;
  queued: number;
  /** Retries / (retries + fetched + failed) of this host. */
  retryRatio: number;
}

export type LeaseBlock = "budget" | "parse-full" | "storage" | "global-full" | "upstream" | "quota" | "disk-full" | "memory";

export interface LeaseBatch {
  leases: Lease[];
  /**
   * Why nothing was leased although work may exist: the page budget is used up, the parse queue
   * is full (because parsing is slow, or -- "storage" -- because writing is), the global
   * concurrency cap is reached, our upstream plan asked for a pause, our upstream quota is
   * exhausted, or the output disk is full (then `message` says so).
   */
  blocked?: LeaseBlock;
  message?: string;
}

export interface AddLinksResult {
  /** New URLs queued. */
  added: number;
  /** Already in the seen filter (or a false positive). */
  seen: number;
  /** New but refused: the host's or the frontier's queue bound was reached. */
  dropped: number;
  /** Unusable links (bad tier, tab in URL, ...), never sent to Redis. */
  invalid: number;
}

export interface RequeueOptions {
  /** Count one more attempt on the URL (retries: yes; after fetching robots.txt first: no). */
  countAttempt: boolean;
  /** The host may not start another request before this epoch ms (e.g. Retry-After). */
  notBefore?: number;
  /** Reason counted as stats "retry:<reason>" (and "retries"). */
  reason?: string;
  /** What the request said about its host. */
  feedback?: HostFeedback;
}

export interface HostLimits {
  /** Delay override in ms (robots Crawl-delay); null clears it. The larger of it and the default applies. */
  delayMs?: number | null;
  /** Concurrency for this host; null returns it to the crawl default. */
  concurrency?: number | null;
}

export interface HostState {
  host: string;
  origin?: string;
  inFlight: number;
  /** Next allowed start: the host's, or its domain's under domain politeness. */
  nextAt: number;
  /** Registrable domain whose clock the host shares (domain politeness), if any. */
  politenessDomain?: string;
  delayMs?: number;
  concurrency?: number;
  queued: number;
  fetched: number;
  errors: number;
  errorsByClass: Record<string, number>;
  requeues: number;
}

export interface FrontierStats {
  /** URLs waiting in host queues. */
  queued: number;
  /** Hosts with queued URLs. */
  hostsQueued: number;
  /** Hosts in the ready schedule (queued work and a free slot). */
  readyHosts: number;
  /** Ready hosts whose next start time has come. */
  dueHosts: number;
  /** Active leases (requests in flight). */
  leases: number;
  parseQueue: number;
  parseInFlight: number;
  /** Cumulative counters (seeds, discovered, duplicates, leased, fetched, failed, parsed, err:<class>, ...). */
  counters: Record<string, number>;
}

/** A lease as the completion calls need it. */
export type LeaseRef = Pick<Lease, "id" | "host">;

/** Leases returned to their queues per reap script call (keeps each script call short). */
const REAP_BATCH = 500;
/** Largest lease batch per call. */
const MAX_LEASE_BATCH = 10_000;
const ERROR_CLASS_RE = /^[a-z0-9-]{1,40}$/;

function toInt(v: unknown): number {
  const n = typeof v === "number" ? v : Number(v);
  return Number.isFinite(n) ? n : 0;
}

function positiveInt(name: string, v: number): number {
  if (!Number.isSafeInteger(v) || v < 1) throw new RangeError(`frontier: ${name} must be a positive integer, got ${v}`);
  return v;
}

function nonNegative(name: string, v: number): number {
  if (!Number.isFinite(v) || v < 0) throw new RangeError(`frontier: ${name} must be >= 0, got ${v}`);
  return v;
}

function feedbackArgs(fb: HostFeedback | undefined): ScriptArg[] {
  if (!fb) return [];
  const ms = (v: number | undefined) => (v === undefined || !Number.isFinite(v) || v < 0 ? 0 : Math.round(v));
  return [fb.signal, ms(fb.latencyMs), ms(fb.startedAt), ms(fb.notBefore)];
}

/** The affinity slot of a lease owner, as lease.lua reads it: the index of "f<index>.<pid>", else the whole id. */
function affinitySlot(owner: string): string {
  return /^f(\d+)\./.exec(owner)?.[1] ?? owner;
}

/** A lease owner names a process; '@' separates it from the sequence number in lease ids. */
function checkOwner(owner: string): string {
  if (!/^[A-Za-z0-9_.:-]{1,64}$/.test(owner)) throw new RangeError(`frontier: invalid lease owner ${JSON.stringify(owner)} (expected 1-64 of [A-Za-z0-9_.:-])`);
  return owner;
}

function epochMs(now: number): number {
  if (!Number.isFinite(now) || now < 0) throw new RangeError(`frontier: time must be epoch ms, got ${now}`);
  return Math.floor(now);
}

/**
 * Host queues are lists of a few hundred short elements (quicklist nodes of listpacks). Redis
 * grows a listpack to its exact size and jemalloc rounds that up to a size class (1 KB apart
 * between 4 and 8 KB, 512 bytes between 2 and 4 KB): a list's last node wastes half a class step
 * on average. Nodes of at most 4 KB instead of the default 8 KB cut that waste (measured: 40.2 ->
 * 39.8 bytes per queued URL at 10^6 URLs over 10^4 hosts; count-limited nodes of 64 or 128
 * elements: 41.7 and 41.1, their per-node structs cost more than they save). Best effort: a Redis
 * that refuses CONFIG still works. The setting is not persisted, so every open sets it again.
 */
const LIST_MAX_LISTPACK_SIZE = "-1";

async function tuneListNodes(redis: Redis): Promise<void> {
  try {
    await redis.config("SET", "list-max-listpack-size", LIST_MAX_LISTPACK_SIZE);
  } catch {
    // CONFIG disabled or renamed (a managed Redis): the default node size only costs memory.
  }
}

export class Frontier {
  readonly keys: FrontierKeys;
  readonly hasher: BloomHasher;
  readonly parse: ParseQueue;
  readonly robots: RobotsCache;
  /** Hosts waiting out a robots.txt outage (robots-outages.ts). */
  readonly outages: RobotsOutages;
  private readonly scripts: Scripts;
  private readonly delayMs: number;
  private readonly hostConcurrency: number;
  private readonly politenessKey: PolitenessKey;
  /** The site owners' opt-out list (P excl), cached and re-read when it changes. */
  readonly exclusions: ExclusionList;
  private readonly leaseTtlMs: number;
  private readonly maxPages: number;
  private readonly parseQueueMax: number;
  private readonly parseQueueMaxBytes: number;
  private readonly caps: QueueCaps;
  readonly flow: FlowSettings;
  /** The crawl scope stored beside the queues (crawl-scope.ts). */
  readonly scope: CrawlScopeStore;

  private constructor(readonly redis: Redis, readonly bloom: BloomParams, opts: FrontierOptions, keys: FrontierKeys, scripts: Scripts) {
    this.keys = keys;
    this.exclusions = new ExclusionList(redis, keys);
    this.scripts = scripts;
    this.hasher = new BloomHasher(bloom);
    this.delayMs = Math.round(nonNegative("delayMs", opts.delayMs ?? 1000));
    this.hostConcurrency = positiveInt("hostConcurrency", opts.hostConcurrency ?? 1);
    this.politenessKey = opts.politenessKey ?? "domain";
    if (this.politenessKey !== "host" && this.politenessKey !== "domain") throw new RangeError(`frontier: politenessKey must be host or domain, got ${String(this.politenessKey)}`);
    this.leaseTtlMs = positiveInt("leaseTtlMs", opts.leaseTtlMs ?? 120_000);
    this.maxPages = opts.maxPages === undefined ? 0 : positiveInt("maxPages", opts.maxPages);
    this.parseQueueMax = positiveInt("parseQueueMax", opts.parseQueueMax ?? 256);
    this.parseQueueMaxBytes = Math.round(nonNegative("parseQueueMaxBytes", opts.parseQueueMaxBytes ?? 0));
    this.caps = {
      maxQueuedPerHost: positiveInt("maxQueuedPerHost", opts.maxQueuedPerHost ?? 1_000_000),
      maxQueuedTotal: positiveInt("maxQueuedTotal", opts.maxQueuedTotal ?? 100_000_000),
      maxHostsPerDomain: Math.round(nonNegative("maxHostsPerDomain", opts.maxHostsPerDomain ?? 0)),
    };
    this.flow = { ...DEFAULT_FLOW, ...opts.flow };
    this.parse = new ParseQueue(redis, keys, scripts, {
      parseQueueMax: this.parseQueueMax,
      common: (now) => this.common(now),
      packLinks: (links) => packLinks(links, this.hasher, this.bloom, this.caps),
      ...(this.politenessKey === "domain" ? { politenessDomains: (links: readonly HashedLink[]) => politenessDomains(links, 0, links.length) } : {}),
    });
    this.robots = new RobotsCache(redis, keys, { scripts, ...(opts.robotsCacheMaxBytes !== undefined ? { maxBytes: opts.robotsCacheMaxBytes } : {}) });
    this.scope = new CrawlScopeStore(redis, keys);
    this.outages = new RobotsOutages(redis, keys, scripts, (now) => this.common(now));
  }

  /** Opens (or resumes) the crawl under `opts.prefix`: loads the scripts and checks the seen filter's parameters. */
  static async open(redis: Redis, opts: FrontierOptions = {}): Promise<Frontier> {
    const keys = new FrontierKeys(opts.prefix ?? DEFAULT_PREFIX);
    const scripts = new Scripts(redis);
    const bloom = await initBloom(redis, scripts, keys, opts.bloom);
    const f = new Frontier(redis, bloom, opts, keys, scripts);
    await f.writeFlowSettings(opts.publishFlow ?? true);
    if (opts.publishFlow ?? true) await scripts.dropOtherBuilds();
    await tuneListNodes(redis);
    return f;
  }

  /** Checks the flow settings and publishes them to P flowcfg, where the scripts read them. */
  private async writeFlowSettings(publish: boolean): Promise<void> {
    const fl = this.flow;
    for (const k of ["aimdFloor", "aimdIncrease", "aimdMaxDelayMultiplier"] as const) if (!(fl[k] >= 1 || (k === "aimdIncrease" && fl[k] > 0))) throw new RangeError(`frontier: ${k} out of range: ${fl[k]}`);
    if (!(fl.aimdDecrease > 0 && fl.aimdDecrease < 1)) throw new RangeError(`frontier: aimdDecrease must be in (0, 1), got ${fl.aimdDecrease}`);
    if (!publish) return;
    await this.redis.hset(this.keys.flowCfg, {
      floor: fl.aimdFloor, ai: fl.aimdIncrease, md: fl.aimdDecrease, lat: fl.aimdLatencyFactor, latmin: fl.aimdLatencyMinMs,
      probe: fl.aimdProbeMs, mcap: fl.aimdMaxDelayMultiplier, hbud: fl.hostPageBudget, shed: fl.shedMode, gmax: fl.globalConcurrency,
      pk: this.politenessKey, affgrace: affinityGraceMs(this.delayMs),
    });
  }

  /** ARGV[1..4] of every host-touching script (lib.lua). */
  private common(now: number): ScriptArg[] {
    return [this.keys.prefix, epochMs(now), this.delayMs, this.hostConcurrency];
  }

  /**
   * Adds seeds or discovered links: Bloom test-and-set, then new ones go to the tail of their
   * host/tier queue and the host joins the ready schedule if it has a free slot. One script call
   * per MAX_LINKS_PER_CALL links (a page's links are one call). The links were admitted by the
   * caller's admission chain (admit/batch-admission.ts); the host budget and hosts per domain are
   * decided here, in the script.
   */
  async addLinks(links: readonly HashedLink[], opts: { now?: number; kind?: "seeds" | "discovered" } = {}): Promise<AddLinksResult> {
    const now = opts.now ?? Date.now();
    const result: AddLinksResult = { added: 0, seen: 0, dropped: 0, invalid: 0 };
    for (let i = 0; i < links.length; i += MAX_LINKS_PER_CALL) {
      const packed = packLinks(links.slice(i, i + MAX_LINKS_PER_CALL), this.hasher, this.bloom, this.caps);
      result.invalid += packed.invalid;
      if (packed.count === 0) continue;
      const args = [...this.common(now), opts.kind ?? "discovered", ...packed.args];
      if (this.politenessKey === "domain") args.push(politenessDomains(links, i, MAX_LINKS_PER_CALL));
      const r = (await this.scripts.run("add_links", args)) as unknown[];
      result.added += toInt(r[0]);
      result.seen += toInt(r[1]);
      result.dropped += toInt(r[2]);
    }
    return result;
  }

  /**
   * Removes the queued URLs an exclusion covers, on every host it names (a host pattern: the host
   * and all hosts under it, found by a SCAN of the host hashes; a URL prefix: its host only).
   * Counted in stats "excluded". Returns how many were removed.
   */
  async purgeExcluded(e: Exclusion, now: number = Date.now()): Promise<number> {
    return purgeExcluded(this.redis, this.keys, this.scripts, this.common(now), e);
  }

  /** The seen filter's stages, insertions, fill and estimated false-positive rate. */
  bloomStatus(): Promise<BloomStatus> {
    return readBloomStatus(this.redis, this.keys, this.bloom);
  }

  /**
   * Takes one of `max` in-flight slots of an IP address for a lease (--ip-concurrency), held until
   * releaseIpSlot or the lease's expiry, and returned at once if its fetcher dies (releaseOwner).
   * False when the address has no free slot.
   */
  async acquireIpSlot(addr: string, lease: Pick<Lease, "id" | "expiresAt">, max: number, now: number = Date.now()): Promise<boolean> {
    return toInt(await this.scripts.run("ip_acquire", [this.keys.prefix, epochMs(now), addr, lease.id, epochMs(lease.expiresAt), max])) === 1;
  }

  async releaseIpSlot(addr: string, lease: Pick<Lease, "id">): Promise<void> {
    await this.scripts.run("ip_release", [this.keys.prefix, addr, lease.id]);
  }

  /** Tests URLs against the seen filter without changing it (true = maybe seen, false = certainly new). */
  async mightHaveSeen(urls: readonly string[]): Promise<boolean[]> {
    const out: boolean[] = [];
    for (let i = 0; i < urls.length; i += MAX_LINKS_PER_CALL) {
      const batch = urls.slice(i, i + MAX_LINKS_PER_CALL);
      const { layout, blob } = packBloomProbe(this.bloom, batch.map((url) => this.hasher.positions(url)));
      const r = (await this.scripts.run("bloom_test", [this.keys.prefix, this.bloom.segmentBits, layout, blob])) as unknown[];
      for (const v of r) out.push(toInt(v) === 1);
    }
    return out;
  }

  /**
   * Leases up to `max` URLs, at most one per host, from hosts whose next start time has come
   * (oldest first). With an `owner` (the leasing process's id), the leases are listed under it so
   * releaseOwner can return them at once when that process dies. Returns nothing (with `blocked`) when the page budget is used up or the parse
   * queue is full: fetchers pull, so a full parse queue stops fetching without pushing back.
   */
  async lease(max: number, now: number = Date.now(), ttlMs: number = this.leaseTtlMs, owner = ""): Promise<LeaseBatch> {
    const n = Math.min(positiveInt("lease max", max), MAX_LEASE_BATCH);
    const ttl = positiveInt("lease ttl", Math.round(ttlMs));
    if (owner !== "") checkOwner(owner);
    const r = (await this.scripts.run("lease", [...this.common(now), n, ttl, this.maxPages, this.parseQueueMax, this.parseQueueMaxBytes, owner])) as unknown[];
    const status = String(r[0]);
    if (status !== "ok") return { leases: [], blocked: status as LeaseBlock, ...(typeof r[1] === "string" ? { message: r[1] } : {}) };
    const leases: Lease[] = [];
    for (let i = 1; i + 4 < r.length; i += 5) {
      const el = decodeElement(String(r[i + 3]));
      leases.push({
        id: String(r[i]), host: String(r[i + 1]), tier: toInt(r[i + 2]),
        url: el.url, depth: el.depth, hops: el.hops, attempt: el.attempt, expiresAt: toInt(r[i + 4]),
      });
    }
    return { leases };
  }

  /**
   * Completes a lease at `now` (the END of the response) and pushes the page into the parse queue,
   * in one step. Returns the page id, or null when the lease had already expired and been reaped
   * (the URL is queued again; the page is dropped so it is not parsed twice). A SpooledPage's body
   * waits in the spool; only its reference goes through Redis.
   */
  async completeWithPage(lease: LeaseRef, page: FetchedPage | SpooledPage, now: number = Date.now(), feedback?: HostFeedback): Promise<string | null> {
    const { meta, body, spool, bytes } = encodePage(page);
    const r = (await this.scripts.run("complete_page", [...this.common(now), lease.id, lease.host, meta, body, spool, bytes, ...feedbackArgs(feedback)])) as unknown[];
    return String(r[0]) === "ok" ? String(r[1]) : null;
  }

  /**
   * Completes a lease at `now` and puts its URL back at the HEAD of its queue: after fetching
   * robots.txt first (countAttempt false) or for a retry (countAttempt true, maybe notBefore).
   * Returns false when the lease had already been reaped (the URL is back in its queue anyway).
   */
  async requeue(lease: LeaseRef, opts: RequeueOptions, now: number = Date.now()): Promise<boolean> {
    const reason = opts.reason ?? "";
    if (reason !== "" && !ERROR_CLASS_RE.test(reason)) throw new RangeError(`frontier: invalid requeue reason ${JSON.stringify(reason)}`);
    const notBefore = opts.notBefore === undefined ? 0 : epochMs(opts.notBefore);
    const r = await this.scripts.run("complete_requeue", [
      ...this.common(now), lease.id, lease.host, opts.countAttempt ? "1" : "0", notBefore, reason, ...feedbackArgs(opts.feedback),
    ]);
    return r === "ok";
  }

  /**
   * Continuous mode: queues planned revisits of already-fetched URLs at `tier`, bypassing the seen
   * filter (lua/add_revisits.lua). They are leased like any URL, so politeness applies. `front`:
   * ahead of what the tier already holds (visits that must not wait behind a backlog).
   */
  async addRevisits(visits: ReadonlyArray<{ url: string; host: string }>, tier: number, now: number = Date.now(), front = false): Promise<number> {
    let n = 0;
    for (let i = 0; i < visits.length; i += 5000) {
      const args: ScriptArg[] = [...this.common(now), tier, front ? 1 : 0];
      for (const v of visits.slice(i, i + 5000)) args.push(v.host, v.url);
      n += toInt(await this.scripts.run("add_revisits", args));
    }
    return n;
  }

  /** Continuous mode: completes a lease whose revisit got 304 (no page to parse). False when already reaped. */
  async completeNotModified(lease: LeaseRef, now: number = Date.now(), feedback?: HostFeedback): Promise<boolean> {
    return (await this.scripts.run("complete_revisit", [...this.common(now), lease.id, lease.host, ...feedbackArgs(feedback)])) === "ok";
  }

  /** Completes a lease at `now` as a recorded failure. Returns false when the lease had already been reaped. */
  async fail(lease: LeaseRef, errorClass: FetchErrorClass, now: number = Date.now(), feedback?: HostFeedback): Promise<boolean> {
    if (!ERROR_CLASS_RE.test(errorClass)) throw new RangeError(`frontier: invalid error class ${JSON.stringify(errorClass)}`);
    const r = await this.scripts.run("complete_failure", [...this.common(now), lease.id, lease.host, errorClass, ...feedbackArgs(feedback)]);
    return r === "ok";
  }

  /** Sets a host's delay override (robots Crawl-delay) and/or concurrency, and fixes its ready-schedule entry. */
  async setHostLimits(host: string, limits: HostLimits, now: number = Date.now()): Promise<void> {
    const enc = (v: number | null | undefined, name: string, min: number): string => {
      if (v === undefined) return "";
      if (v === null) return "-";
      if (!Number.isFinite(v) || v < min) throw new RangeError(`frontier: ${name} must be >= ${min}, got ${v}`);
      return String(Math.round(v));
    };
    await this.scripts.run("set_host_limits", [
      ...this.common(now), host, enc(limits.delayMs, "delayMs", 0), enc(limits.concurrency, "concurrency", 1),
    ]);
  }

  /**
   * Returns every lease expired at `now` to the head of its queue (counted as an attempt: a fetch
   * that outlives its lease failed to finish in time). Returns how many.
   */
  async reapExpired(now: number = Date.now()): Promise<number> {
    return this.returnLeases(now, String(epochMs(now)), true, "reaped");
  }

  /**
   * Returns every lease `owner` holds to the head of its queue at once (not counted as an attempt):
   * the supervisor calls it when that fetcher process has died, so its URLs do not wait for the
   * lease TTL. Leases of other owners are untouched. Returns how many.
   */
  async releaseOwner(owner: string, now: number = Date.now()): Promise<number> {
    return toInt(await this.scripts.run("release_owner", [...this.common(now), checkOwner(owner)]));
  }

  /**
   * Host affinity: marks `owner`'s slot as asking (as a lease call does) and returns how many
   * fetcher slots have asked within the grace, this one included. A starting node's fetchers wait
   * for each other with it before their first lease, so that no host is leased by a fetcher that is
   * not its owner only because the owner was not up yet; a running fetcher with a free request slot
   * calls it as a heartbeat.
   */
  async joinAffinity(owner: string, now: number = Date.now()): Promise<number> {
    const slot = affinitySlot(checkOwner(owner));
    const r = await this.redis.multi().hset(this.keys.affinity, slot, epochMs(now)).hget(this.keys.flowCfg, "affgrace").hvals(this.keys.affinity).exec();
    const grace = Number(r?.[1]?.[1] ?? 0) || affinityGraceMs(this.delayMs);
    const last = (r?.[2]?.[1] as string[] | undefined) ?? [];
    return last.filter((t) => Number(t) >= now - grace).length;
  }

  /** Lease ids `owner` holds now (status pages and tests). */
  async leasesOf(owner: string): Promise<string[]> {
    return this.redis.smembers(this.keys.leaseOwner(checkOwner(owner)));
  }

  /**
   * At node start every lease and every parse consumer's in-flight page belongs to a dead run:
   * returns the leases to their queues (not counted as attempts) and the pages to the parse queue.
   */
  async recoverAll(now: number = Date.now()): Promise<{ leases: number; pages: number }> {
    const leases = await this.returnLeases(now, "+inf", false, "recovered");
    const pages = await this.parse.recover();
    return { leases, pages };
  }

  private async returnLeases(now: number, maxExpiry: string, countAttempt: boolean, counter: string): Promise<number> {
    let total = 0;
    for (;;) {
      const n = toInt(await this.scripts.run("reap", [...this.common(now), maxExpiry, REAP_BATCH, countAttempt ? "1" : "0", counter]));
      total += n;
      if (n < REAP_BATCH) return total;
    }
  }

  /** A consistent snapshot of gauges and counters. */
  async stats(now: number = Date.now()): Promise<FrontierStats> {
    const r = (await this.scripts.run("snapshot", [this.keys.prefix, epochMs(now)])) as unknown[];
    const flat = (Array.isArray(r[0]) ? r[0] : []) as unknown[];
    const counters: Record<string, number> = {};
    for (let i = 0; i + 1 < flat.length; i += 2) counters[String(flat[i])] = toInt(flat[i + 1]);
    return {
      queued: counters.queued ?? 0,
      hostsQueued: counters.hostsQueued ?? 0,
      readyHosts: toInt(r[1]),
      dueHosts: toInt(r[2]),
      leases: toInt(r[3]),
      parseQueue: toInt(r[4]),
      parseInFlight: toInt(r[5]),
      counters,
    };
  }

  /**
   * Done: no leases, nothing to parse, and nothing queued -- or the page budget (fetched + failed
   * reached maxPages) is used up (then queued URLs stay queued for a later run).
   */
  async isDone(now: number = Date.now()): Promise<boolean> {
    const s = await this.stats(now);
    const budgetUsed = this.maxPages > 0 && (s.counters.fetched ?? 0) + (s.counters.failed ?? 0) >= this.maxPages;
    return s.leases === 0 && s.parseQueue === 0 && s.parseInFlight === 0 && (s.queued === 0 || budgetUsed);
  }

  /** Adds to counters in P stats, in one MULTI (zero deltas are skipped). */
  async addCounters(deltas: Iterable<readonly [string, number]>): Promise<void> {
    const m = this.redis.multi();
    let n = 0;
    for (const [field, by] of deltas) {
      if (by === 0) continue;
      m.hincrby(this.keys.stats, field, Math.round(by));
      n++;
    }
    if (n > 0) await m.exec();
  }

  /**
   * A parser's write buffer in P flow: fill and peak (wbuf:/wbpeak:<consumer>), and while it is
   * full `storageUntil`, the time until which fetchers count their wait as blocked on storage.
   */
  async reportWriteBuffer(consumer: string, used: number, peak: number, storageUntil?: number): Promise<void> {
    const m = this.redis.multi().hset(this.keys.flow, `wbuf:${consumer}`, used, `wbpeak:${consumer}`, peak);
    if (storageUntil !== undefined) m.hset(this.keys.flow, "storage", epochMs(storageUntil));
    await m.exec();
  }

  /** Milliseconds until the earliest ready host is due, negative when overdue; null when no host is ready. */
  async readyLagMs(now: number): Promise<number | null> {
    const r = await this.redis.zrange(this.keys.ready, 0, 0, "WITHSCORES");
    return r.length < 2 ? null : Number(r[1]) - now;
  }

  /** Pushes fetch times to the node-wide sample and returns it (fetch-times.ts). */
  shareFetchTimes(batch: readonly number[], size: number): Promise<number[]> {
    return shareFetchTimes(this.redis, this.keys.fetchTimes, batch, size);
  }

  /** Hosts under back-off (P press). */
  hostsUnderBackoff(): Promise<number> {
    return this.redis.zcard(this.keys.pressure);
  }

  /** The stored origin of a host ("https://www.d1.test"), or null when the host is unknown. */
  hostOrigin(host: string): Promise<string | null> {
    return this.redis.hget(this.keys.host(host), "o");
  }

  /** The state of one host (for status pages and tests), or undefined when the host is unknown. */
  async hostState(host: string): Promise<HostState | undefined> {
    const h = await this.redis.hgetall(this.keys.host(host));
    if (Object.keys(h).length === 0) return undefined;
    // Domain politeness: the clock and limits live in the domain's hash (lib.lua domain_fill).
    if (h.k !== undefined && this.politenessKey === "domain") {
      const [n, c] = await this.redis.hmget(this.keys.politenessDomain(h.k), "n", "c");
      if (n != null) h.n = n; else delete h.n;
      if (c != null) h.c = c; else delete h.c;
    }
    const errorsByClass: Record<string, number> = {};
    for (const [k, v] of Object.entries(h)) if (k.startsWith("e:")) errorsByClass[k.slice(2)] = toInt(v);
    return {
      host,
      origin: h.o,
      inFlight: toInt(h.f),
      nextAt: toInt(h.n),
      ...(h.k !== undefined ? { politenessDomain: h.k } : {}),
      delayMs: h.d === undefined ? undefined : toInt(h.d),
      concurrency: h.c === undefined ? undefined : toInt(h.c),
      queued: toInt(h.q),
      fetched: toInt(h.x),
      errors: toInt(h.e),
      errorsByClass,
      requeues: toInt(h.r),
    };
  }

  // --- flow control ------------------------------------------------------------------------

  /**
   * Node-wide signals in P flow: `totalCap` lowers the frontier's total queue cap (the memory
   * governor; null removes it), `pauseUntil` pauses all leasing (our upstream plan's 429),
   * `stop` stops all leasing with a message (our upstream quota is exhausted; null lifts it),
   * `diskFull` pauses all leasing with a message until it is cleared (null) -- the first writer
   * to hit a full disk sets it, a later one does not overwrite the first reason.
   */
  async setFlow(s: { totalCap?: number | null; pauseUntil?: number; memoryHoldUntil?: number; stop?: string | null; diskFull?: string | null }): Promise<void> {
    const k = this.keys.flow;
    // The memory governor's hold on leasing (lease.lua blocks with "memory" until then).
    if (s.memoryHoldUntil !== undefined) await this.redis.hset(k, "mem", epochMs(s.memoryHoldUntil));
    if (s.totalCap === null) await this.redis.hdel(k, "tcap");
    else if (s.totalCap !== undefined) await this.redis.hset(k, "tcap", positiveInt("totalCap", Math.round(s.totalCap)));
    if (s.pauseUntil !== undefined) await this.redis.hset(k, "gnb", epochMs(s.pauseUntil));
    if (s.stop === null) await this.redis.hdel(k, "stop");
    else if (s.stop !== undefined) await this.redis.hset(k, "stop", s.stop.slice(0, 500));
    if (s.diskFull === null) await this.redis.hdel(k, "disk");
    else if (s.diskFull !== undefined) await this.redis.hsetnx(k, "disk", s.diskFull.slice(0, 500) || "disk full");
  }

  async flowState(): Promise<{ totalCap?: number; pauseUntil?: number; stop?: string; diskFull?: string }> {
    const [tcap, gnb, stop, disk] = await this.redis.hmget(this.keys.flow, "tcap", "gnb", "stop", "disk");
    return {
      ...(tcap ? { totalCap: toInt(tcap) } : {}),
      ...(gnb ? { pauseUntil: toInt(gnb) } : {}),
      ...(stop ? { stop } : {}),
      ...(disk ? { diskFull: disk } : {}),
    };
  }

  /** The effective total cap: the configured one, or the governor's lower one. */
  async effectiveTotalCap(): Promise<number> {
    const { totalCap } = await this.flowState();
    return totalCap !== undefined ? Math.min(totalCap, this.caps.maxQueuedTotal) : this.caps.maxQueuedTotal;
  }

  /** The configured total cap (without the governor's). */
  effectiveTotalCapConfigured(): Promise<number> {
    return Promise.resolve(this.caps.maxQueuedTotal);
  }

  /** Up to `max` spilled entries, oldest first, WITHOUT removing them (see dropSpilled). */
  async peekSpilled(max: number): Promise<string[]> {
    return this.redis.lrange(this.keys.spill, -positiveInt("max", max), -1).then((a) => a.reverse());
  }

  /**
   * Removes the `n` oldest spilled entries (after they are safely on disk) and counts them as on
   * disk (P flow ondisk); with `file`, records in the same step that `file` is committed up to
   * `fileBytes` (P spillsize), so bytes beyond it after a crash are known to be still in P spill.
   */
  async dropSpilled(n: number, file?: { name: string; bytes: number }): Promise<void> {
    if (n <= 0) return;
    const m = this.redis.multi().ltrim(this.keys.spill, 0, -n - 1).hincrby(this.keys.flow, "ondisk", n);
    if (file) m.hset(this.keys.spillSize, file.name, file.bytes);
    await m.exec();
  }

  /** Committed bytes of each spill file (P spillsize). */
  async spillFileSizes(): Promise<Map<string, number>> {
    const h = await this.redis.hgetall(this.keys.spillSize);
    return new Map(Object.entries(h).map(([k, v]) => [k, toInt(v)]));
  }

  /** Entries of a spill file already re-admitted (P spillpos). */
  async spillPosition(file: string): Promise<number> {
    return toInt(await this.redis.hget(this.keys.spillPos, file));
  }

  /** Records a new spill file as committed at 0 bytes (before anything is written to it). */
  async startSpillFile(file: string): Promise<void> {
    await this.redis.hset(this.keys.spillSize, file, 0);
  }

  /** Forgets a spill file's records (after the file is deleted). */
  async forgetSpillFile(file: string): Promise<void> {
    await this.redis.multi().hdel(this.keys.spillSize, file).hdel(this.keys.spillPos, file).exec();
  }

  /** Spilled URLs on disk, not yet re-admitted (so "done" waits for them). */
  async spilledOnDisk(): Promise<number> {
    return toInt(await this.redis.hget(this.keys.flow, "ondisk"));
  }

  async spilledWaiting(): Promise<number> {
    return this.redis.llen(this.keys.spill);
  }

  /**
   * Re-admits spilled entries under the caps; the rest go back to the spill list. With `from`
   * (entries of a spill file, starting at entry index `start`), the file's position advances in
   * the same script: a repeated call for entries already admitted changes nothing (`stale`).
   */
  async readmit(entries: readonly string[], now: number = Date.now(), from?: { file: string; start: number }): Promise<{ readmitted: number; returned: number; stale: boolean }> {
    let readmitted = 0;
    let returned = 0;
    for (let i = 0; i < entries.length; i += 5000) {
      const r = (await this.scripts.run("readmit", [
        ...this.common(now), this.caps.maxQueuedPerHost, this.caps.maxQueuedTotal, from?.file ?? "", (from?.start ?? 0) + i,
        ...entries.slice(i, i + 5000),
      ])) as unknown[];
      if (toInt(r[2]) < 0) return { readmitted, returned, stale: true };
      readmitted += toInt(r[0]);
      returned += toInt(r[1]);
    }
    return { readmitted, returned, stale: false };
  }

  /** Hosts under back-off, highest pressure first. */
  async hostPressure(topN: number): Promise<HostPressure[]> {
    const r = await this.redis.zrevrange(this.keys.pressure, 0, positiveInt("topN", topN) - 1, "WITHSCORES");
    const out: HostPressure[] = [];
    for (let i = 0; i + 1 < r.length; i += 2) {
      const host = r[i]!;
      const [hf, ha, hm, hc, q, R, x, e, k] = await this.redis.hmget(this.keys.host(host), "f", "a", "m", "c", "q", "R", "x", "e", "k");
      // Domain politeness: the limits that learned are the domain's (lib.lua feedback).
      const [f, a, m, c] = k && this.politenessKey === "domain" ? await this.redis.hmget(this.keys.politenessDomain(k), "f", "a", "m", "c") : [hf, ha, hm, hc];
      const tries = toInt(R) + toInt(x) + toInt(e);
      const hard = c ? toInt(c) : this.hostConcurrency;
      const ad = a ? Number(a) : hard;
      out.push({
        host, pressure: Number(r[i + 1]), inFlight: toInt(f), limit: Math.max(1, Math.min(hard, Math.floor(ad))),
        delayMultiplier: m ? Number(m) : 1, queued: toInt(q), retryRatio: tries > 0 ? toInt(R) / tries : 0,
      });
    }
    return out;
  }

  /** Age in ms of the oldest page waiting in the parse queue (0 when empty). */
  async parseQueueOldestAgeMs(now: number = Date.now()): Promise<number> {
    const id = await this.redis.lindex(this.keys.parseQueue, -1);
    if (id === null) return 0;
    const t = (await this.redis.hget(this.keys.page(id), "w")) ?? (await this.redis.hget(this.keys.parseQueueTimes, id));
    return t === null ? 0 : Math.max(0, now - toInt(t));
  }

  /** Closes connections this object opened (the caller's client stays open). */
  async close(): Promise<void> {
    await this.parse.close();
  }
}

export { MAX_LINKS_PER_CALL };

/**
 * How long a fetcher may go without a lease call before any fetcher takes the hosts it owns (host
 * affinity, lease.lua): a quarter of the per-host delay, between 1 s and 15 s. A loaded owner can
 * miss a fixed 1 s turn, and its hosts then pay a fresh DNS lookup and a full TLS handshake on
 * another fetcher; waiting longer only delays a visit that politeness already spaced by the delay.
 */
export function affinityGraceMs(delayMs: number): number {
  return Math.round(Math.min(15_000, Math.max(1_000, delayMs / 4)));
}
