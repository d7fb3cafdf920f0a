// A bounded DNS cache around dns.lookup with positive and negative TTLs, a lookup timeout and
// coalescing of concurrent lookups for the same name. (undici's dns interceptor caches too, but it
// resolves inside the dispatch chain, where we could not see or veto the addresses it picks.)
import { lookup as dnsLookup } from "node:dns/promises";

export interface LookupAddress {
  address: string;
  family: number;
}

/** Resolves a name to all its addresses; rejects with an Error carrying a `code` (ENOTFOUND ...). */
export type LookupAll = (hostname: string) => Promise<LookupAddress[]>;

export interface DnsCacheOptions {
  /** How long a successful answer is reused. */
  ttlMs: number;
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

type Entry = { expiresAt: number; addresses: string[] } | { expiresAt: number; error: DnsLookupError };

const defaultLookup: LookupAll = (hostname) => dnsLookup(hostname, { all: true, verbatim: true });

export class DnsCache {
  private readonly entries = new Map<string, Entry>();
  private readonly inFlight = new Map<string, Promise<string[]>>();
  private readonly lookupFn: LookupAll;
  private readonly now: () => number;
  private readonly maxEntries: number;
  /** Resolver calls made (cache misses), for tests and metrics. */
  lookups = 0;

  constructor(private readonly opts: DnsCacheOptions) {
    this.lookupFn = opts.lookup ?? defaultLookup;
    this.now = opts.now ?? Date.now;
    this.maxEntries = opts.maxEntries ?? 10_000;
  }

  /** All addresses of `hostname`, in resolver order; rejects with DnsLookupError. */
  async resolve(hostname: string): Promise<string[]> {
    const name = hostname.toLowerCase();
    const special = specialUseAnswer(name);
    if (special !== undefined) return special;

    const cached = this.entries.get(name);
    if (cached !== undefined) {
      if (cached.expiresAt > this.now()) {
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
    this.lookups++;
    try {
      const answers = await withTimeout(this.lookupFn(name), this.opts.timeoutMs, name);
      const addresses = [...new Set(answers.map((a) => a.address))];
      if (addresses.length === 0) throw new DnsLookupError(name, "ENODATA", `${name}: no addresses`);
      this.store(name, { expiresAt: this.now() + this.opts.ttlMs, addresses });
      return addresses;
    } catch (err) {
      const error = toDnsError(name, err);
      if (isPermanentDnsFailure(error.code)) this.store(name, { expiresAt: this.now() + (this.opts.negativeTtlMs ?? this.opts.ttlMs), error });
      throw error;
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
