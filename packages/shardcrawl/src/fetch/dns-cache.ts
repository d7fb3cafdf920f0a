// A bounded DNS cache around dns.lookup with positive and negative TTLs, a lookup timeout and
// coalescing of concurrent lookups for the same name, and a bound on lookups in flight (a full
// wait queue fails the lookup as transient: it never grows without bound). (undici's dns interceptor caches too, but it
// resolves inside the dispatch chain, where we could not see or veto the addresses it picks.)
import { lookup as dnsLookup } from "node:dns/promises";

export interface LookupAddress {
  address: string;
  family: number;
  /** Record TTL in seconds, when the resolver reports one (c-ares does; getaddrinfo does not). */
  ttl?: number;
}

/** Resolves a name to all its addresses; rejects with an Error carrying a `code` (ENOTFOUND ...). */
export type LookupAll = (hostname: string) => Promise<LookupAddress[]>;

export interface DnsCacheOptions {
  /** How long a successful answer is reused when the resolver gives no record TTL (getaddrinfo). */
  ttlMs: number;
  /** Record TTLs are clamped to [minTtlMs, maxTtlMs] (defaults 30 s and 1 h). */
  minTtlMs?: number;
  maxTtlMs?: number;
  /** Resolver calls in flight at once (default 64); more wait in a queue of maxQueued (default 4096). */
  concurrency?: number;
  maxQueued?: number;
  /** How long a failure is remembered (default: ttlMs). */
  negativeTtlMs?: number;
  /** Give up waiting for one lookup after this long (the getaddrinfo call itself cannot be cancelled). */
  timeoutMs: number;
  /** Bound on cached names; the oldest entries are dropped first. */
  maxEntries?: number;
  /** The resolver (default: dns.lookup with all: true). */
  lookup?: LookupAll;
  /** Clock, for TTL tests. */
  now?: () => number;
}

/** A failed lookup; `code` is the resolver's (ENOTFOUND, EAI_AGAIN, ETIMEOUT ...). */
export class DnsLookupError extends Error {
  override name = "DnsLookupError";
  constructor(
    readonly hostname: string,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Answers that say the name has no address (NXDOMAIN, NODATA): the only failures worth caching.
 * SERVFAIL, timeouts, refused and "try again" are about the resolver path, not the name: they are
 * never cached and the fetch is retried later (fetch-errors.ts: dns-transient).
 */
const PERMANENT_DNS_CODES = new Set(["ENOTFOUND", "ENODATA", "ENONAME", "EAI_NONAME", "EAI_NODATA", "EBADNAME"]);

/** Does this lookup failure say the name has no address (cacheable, final), rather than a transient resolver failure? */
export function isPermanentDnsFailure(code: string): boolean {
  return PERMANENT_DNS_CODES.has(code);
}

/** Counters for /metrics (the fetcher adds them to the node's stats hash). */
export interface DnsCounters {
  /** Resolver calls made (cache misses). */
  lookups: number;
  /** Answers served from the cache (positive or negative). */
  hits: number;
  /** Failed lookups: the name has no address (NXDOMAIN, NODATA). */
  nxdomain: number;
  /** Failed lookups: SERVFAIL, timeout, refused, a full queue. */
  transient: number;
  /** Summed time of finished resolver calls (ms): over `lookups`, the mean lookup time. */
  lookupMs: number;
}

type Entry = { expiresAt: number; addresses: string[] } | { expiresAt: number; error: DnsLookupError };

const defaultLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export class DnsCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<string[]>>();
  private readonly lookupFn: LookupAll;
  private readonly now: () => number;
  private readonly maxEntries: number;
  private readonly concurrency: number;
  private readonly maxQueued: number;
  private active = 0;
  private readonly waiting: Array<() => void> = [];
  readonly counters: DnsCounters = { lookups: 0, hits: 0, nxdomain: 0, transient: 0, lookupMs: 0 };

  constructor(private readonly opts: DnsCacheOptions) {
    this.lookupFn = opts.lookup ?? defaultLookup;
    this.now = opts.now ?? Date.now;
    this.maxEntries = opts.maxEntries ?? 10_000;
    this.concurrency = Math.max(1, opts.concurrency ?? 64);
    this.maxQueued = Math.max(0, opts.maxQueued ?? 4096);
  }

  /** Resolver calls made (cache misses). */
  get lookups(): number {
    return this.counters.lookups;
  }

  /** Resolver calls waiting for a free slot. */
  get queued(): number {
    return this.waiting.length;
  }

  /** All addresses of `hostname`, in resolver order; rejects with DnsLookupError. */
  async resolve(hostname: string): Promise<string[]> {
    const name = hostname.toLowerCase();
    const special = specialUseAnswer(name);
    if (special !== undefined) return special;

    const cached = this.entries.get(name);
    if (cached !== undefined) {
      if (cached.expiresAt > this.now()) {
        this.counters.hits++;
        if ("error" in cached) throw cached.error;
        return cached.addresses;
      }
      this.entries.delete(name);
    }
    let pending = this.inFlight.get(name);
    if (pending === undefined) {
      pending = this.lookupAndStore(name).finally(() => this.inFlight.delete(name));
      this.inFlight.set(name, pending);
    }
    return pending;
  }

  get size(): number {
    return this.entries.size;
  }

  private async lookupAndStore(name: string): Promise<string[]> {
    this.counters.lookups++;
    try {
      // The timeout covers the wait for a slot too: a backed-up resolver fails fast as transient.
      const answers = await withTimeout(this.limited(name), this.opts.timeoutMs, name);
      const addresses = [...new Set(answers.map((a) => a.address))];
      if (addresses.length === 0) throw new DnsLookupError(name, "ENODATA", `${name}: no addresses`);
      this.store(name, { expiresAt: this.now() + this.answerTtlMs(answers), addresses });
      return addresses;
    } catch (err) {
      const error = toDnsError(name, err);
      if (isPermanentDnsFailure(error.code)) {
        this.counters.nxdomain++;
        this.store(name, { expiresAt: this.now() + (this.opts.negativeTtlMs ?? this.opts.ttlMs), error });
      } else this.counters.transient++;
      throw error;
    }
  }

  /** The shortest record TTL of the answer, clamped; the fixed TTL when the resolver gave none. */
  private answerTtlMs(answers: LookupAddress[]): number {
    const ttls = answers.map((a) => a.ttl).filter((t): t is number => typeof t === "number" && Number.isFinite(t));
    if (ttls.length === 0) return this.opts.ttlMs;
    const min = this.opts.minTtlMs ?? 30_000;
    const max = Math.max(min, this.opts.maxTtlMs ?? 3_600_000);
    return Math.min(max, Math.max(min, Math.min(...ttls) * 1000));
  }

  /** One resolver call, run when fewer than `concurrency` are in flight; the slot is held until the call itself settles. */
  private async limited(name: string): Promise<LookupAddress[]> {
    if (this.active < this.concurrency) this.active++;
    else if (this.waiting.length >= this.maxQueued) {
      throw new DnsLookupError(name, "EQUEUEFULL", `${name}: resolver busy (${this.active} lookups in flight, ${this.waiting.length} waiting)`);
    } else await new Promise<void>((resolve) => this.waiting.push(resolve)); // the releasing call hands its slot over
    const started = Date.now();
    try {
      return await this.lookupFn(name);
    } finally {
      this.counters.lookupMs += Date.now() - started;
      const next = this.waiting.shift();
      if (next) next();
      else this.active--;
    }
  }

  private store(name: string, entry: Entry): void {
    this.entries.delete(name);
    while (this.entries.size >= this.maxEntries) {
      const oldest = this.entries.keys().next();
      if (oldest.done) break;
      this.entries.delete(oldest.value);
    }
    this.entries.set(name, entry);
  }
}

/**
 * RFC 6761 special-use names are answered here without asking any resolver: ".invalid" never
 * resolves, and "localhost" is always loopback (which the SSRF guard then refuses).
 */
function specialUseAnswer(name: string): string[] | undefined {
  const bare = name.endsWith(".") ? name.slice(0, -1) : name;
  if (bare === "invalid" || bare.endsWith(".invalid")) {
    throw new DnsLookupError(name, "ENOTFOUND", `${name}: .invalid names never resolve (RFC 6761)`);
  }
  if (bare === "localhost" || bare.endsWith(".localhost")) return ["127.0.0.1", "::1"];
  return undefined;
}

function toDnsError(name: string, err: unknown): DnsLookupError {
  if (err instanceof DnsLookupError) return err;
  const code = (err as { code?: unknown } | null)?.code;
  const text = err instanceof Error ? err.message : String(err);
  return new DnsLookupError(name, typeof code === "string" ? code : "EOTHER", `${name}: ${text}`);
}

async function withTimeout<T>(promise: Promise<T>, ms: number, name: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DnsLookupError(name, "ETIMEOUT", `${name}: lookup timed out after ${ms} ms`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
