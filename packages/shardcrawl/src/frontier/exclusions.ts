// The site owner's opt-out list: domains, hosts and URL prefixes this node must not crawl. Kept in
// the node's Redis (P excl, P exclv: keys.ts), so it survives restarts and every process of the
// node reads the same list. Processes re-read it when P exclv changes, checked at most once per
// REFRESH_MS: an `exclude add` takes effect everywhere within about a second.
//
// Patterns: a name ("example.com", "www.example.com") excludes that host and every host under it
// (a registrable domain thus excludes all its hosts); an http(s) URL excludes URLs starting with it.
import type { Redis } from "ioredis";
import { normalizeUrl, hostOf } from "../url/normalize.js";
import type { FrontierKeys } from "./keys.js";

/** How often a process checks P exclv for changes (ms). */
export const EXCLUSIONS_REFRESH_MS = 1000;

export interface Exclusion {
  /** Normalized: a lower-case host name, or a normalized URL prefix. */
  pattern: string;
  kind: "host" | "url-prefix";
  reason: string;
  /** When it was added (epoch ms). */
  at: number;
}

/** Parses what an operator typed: a host/domain name or an http(s) URL prefix. Throws a readable error. */
export function parseExclusionPattern(input: string): { pattern: string; kind: Exclusion["kind"] } {
  const s = input.trim();
  if (s === "") throw new Error("exclude: empty pattern");
  if (/^https?:\/\//i.test(s)) {
    const url = normalizeUrl(s);
    if (!url) throw new Error(`exclude: not a valid URL: ${JSON.stringify(input)}`);
    return { pattern: url, kind: "url-prefix" };
  }
  if (/[\s/:?#@*]/.test(s)) throw new Error(`exclude: expected a domain, a host or an http(s) URL prefix, got ${JSON.stringify(input)}`);
  const host = hostOf(`http://${s}/`);
  if (!host) throw new Error(`exclude: not a valid host name: ${JSON.stringify(input)}`);
  return { pattern: host.replace(/\.$/, ""), kind: "host" };
}

/** Does `host` fall under the name pattern `p` (equal, or a subdomain of it)? */
export function hostUnder(host: string, p: string): boolean {
  return host === p || (host.length > p.length && host.endsWith(p) && host.charCodeAt(host.length - p.length - 1) === 46);
}

/** The compiled list: host patterns by name (looked up by walking up the host's labels) and URL prefixes. */
export class ExclusionSet {
  private readonly hosts = new Map<string, Exclusion>();
  private readonly prefixes: Exclusion[] = [];

  constructor(readonly entries: readonly Exclusion[] = []) {
    for (const e of entries) {
      if (e.kind === "host") this.hosts.set(e.pattern, e);
      else this.prefixes.push(e);
    }
  }

  get size(): number {
    return this.entries.length;
  }

  /** The exclusion that covers this URL (of this host), if any. */
  match(url: string, host: string): Exclusion | undefined {
    if (this.entries.length === 0) return undefined;
    for (let h = host; ; ) {
      const e = this.hosts.get(h);
      if (e) return e;
      const dot = h.indexOf(".");
      if (dot < 0) break;
      h = h.slice(dot + 1);
    }
    for (const e of this.prefixes) if (url.startsWith(e.pattern)) return e;
    return undefined;
  }
}

function decode(pattern: string, json: string): Exclusion {
  let v: { kind?: string; reason?: string; at?: number } = {};
  try {
    v = JSON.parse(json) as typeof v;
  } catch {
    // A damaged entry still excludes (the pattern is the key); it just has no reason.
  }
  return { pattern, kind: v.kind === "url-prefix" ? "url-prefix" : "host", reason: typeof v.reason === "string" ? v.reason : "", at: typeof v.at === "number" ? v.at : 0 };
}

/** Reads and writes P excl; `current()` is the cached set, re-read when P exclv changes. */
export class ExclusionList {
  private set = new ExclusionSet();
  private version: string | null = null;
  private checkedAt = -Infinity;
  private pending: Promise<ExclusionSet> | null = null;

  constructor(private readonly redis: Redis, private readonly keys: FrontierKeys) {}

  async all(): Promise<Exclusion[]> {
    const h = await this.redis.hgetall(this.keys.exclusions);
    return Object.entries(h).map(([p, j]) => decode(p, j)).sort((a, b) => a.at - b.at || a.pattern.localeCompare(b.pattern));
  }

  /** Adds (or updates the reason of) an exclusion; returns it. */
  async add(input: string, reason: string, now = Date.now()): Promise<Exclusion> {
    const { pattern, kind } = parseExclusionPattern(input);
    const e: Exclusion = { pattern, kind, reason, at: now };
    await this.redis.multi().hset(this.keys.exclusions, pattern, JSON.stringify({ kind, reason, at: now })).incr(this.keys.exclusionsVersion).exec();
    this.checkedAt = -Infinity;
    return e;
  }

  /** Removes an exclusion; false when there was none. */
  async remove(input: string): Promise<boolean> {
    const { pattern } = parseExclusionPattern(input);
    const r = await this.redis.multi().hdel(this.keys.exclusions, pattern).incr(this.keys.exclusionsVersion).exec();
    this.checkedAt = -Infinity;
    return Number(r?.[0]?.[1] ?? 0) > 0;
  }

  /** The current set: re-read when P exclv changed, checked at most every EXCLUSIONS_REFRESH_MS. */
  async current(now = Date.now()): Promise<ExclusionSet> {
    if (now - this.checkedAt < EXCLUSIONS_REFRESH_MS) return this.set;
    this.pending ??= this.reload(now).finally(() => (this.pending = null));
    return this.pending;
  }

  private async reload(now: number): Promise<ExclusionSet> {
    const v = await this.redis.get(this.keys.exclusionsVersion);
    this.checkedAt = now;
    if (v !== this.version) {
      this.set = new ExclusionSet(await this.all());
      this.version = v;
    }
    return this.set;
  }
}
