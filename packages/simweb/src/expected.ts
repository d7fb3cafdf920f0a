// The coverage ground truth: which canonical URLs a correct, polite crawler fetches from given
// seeds. A breadth-first walk over the generated link graph (no HTML involved) that follows what a
// crawler may follow: no rel=nofollow links, nothing from meta-robots-nofollow pages, redirects to
// their targets, nothing robots.txt forbids, nothing outside the scope, nothing inside a trap.
import type { HostModel, World } from "./world.js";
import { crawlerForm } from "./session-params.js";

export type Scope = "domains" | "hosts" | "any";

export interface ExpectedOptions {
  seeds: string[];
  scope: Scope;
  userAgent: string;
  /** Only false is supported: nofollow links are never followed. */
  followNofollow?: false;
  /** A crawler skips hosts whose robots.txt asks for a Crawl-delay above this (ms); default: none skipped. */
  maxCrawlDelayMs?: number;
  /** Stop after this many URLs (default 2,000,000); `truncated` tells when it happened. */
  maxPages?: number;
  /** Follow links as a crawler that removes session-id and tracking parameters does (default true; session-params.ts). */
  stripParams?: boolean;
}

export interface ExpectedResult {
  /** Canonical URLs a correct crawler fetches (pages, redirects and their targets, files, 404s). */
  urls: Set<string>;
  /** In-scope URLs excluded because robots.txt disallows them (or the host's robots.txt is 5xx/unreachable). */
  disallowed: number;
  /** Distinct trap-space URLs linked from expected pages and not followed. */
  trapsExcluded: number;
  /** Links to hosts simweb does not serve (distinct URLs). */
  unserved: number;
  /** Distinct URLs left out because they are out of scope. */
  outOfScope: number;
  /** URLs left out because their host asks for a Crawl-delay above maxCrawlDelayMs. */
  crawlDelayTooLong: number;
  /** True when maxPages stopped the walk. */
  truncated: boolean;
}

export function expectedSet(world: World, opts: ExpectedOptions): ExpectedResult {
  const maxPages = opts.maxPages ?? 2_000_000;
  const seedHosts = new Set<string>();
  const seedDomains = new Set<string>();
  const urls = new Set<string>();
  const res: ExpectedResult = { urls, disallowed: 0, trapsExcluded: 0, unserved: 0, outOfScope: 0, crawlDelayTooLong: 0, truncated: false };
  const queue: string[] = [];
  // Every URL ever queued: each is examined once, so the queue never holds duplicates.
  const seen = new Set<string>();
  // Bound the frontier too: random links into million-page hosts discover far more URLs than a
  // capped walk will ever visit. Hitting this bound also marks the result truncated.
  const frontierCap = 4 * maxPages + 10_000;
  let qi = 0;
  const strip = opts.stripParams !== false;
  const enqueue = (raw: string): void => {
    const u = strip ? crawlerForm(raw) : raw;
    if (queue.length - qi > frontierCap) {
      res.truncated = true;
      return;
    }
    if (!seen.has(u)) {
      seen.add(u);
      queue.push(u);
    }
  };
  for (const s of opts.seeds) {
    const loc = world.locate(s.trim());
    if (!loc) throw new Error(`invalid seed URL: ${s}`);
    const name = new URL(s.trim()).hostname;
    seedHosts.add(name);
    seedDomains.add(name.split(".").slice(-2).join("."));
    enqueue(new URL(s.trim()).href);
  }
  const inScope = (h: HostModel): boolean =>
    opts.scope === "any" || (opts.scope === "hosts" ? seedHosts.has(h.info.name) : seedDomains.has(h.info.domain));

  for (; qi < queue.length; qi++) {
    const url = queue[qi] as string;
    const loc = world.locate(url);
    if (!loc?.host || loc.host.info.scheme !== loc.scheme) {
      res.unserved++;
      continue;
    }
    const h = loc.host;
    if (!world.resolvable(h)) {
      // Its name does not exist (NXDOMAIN) or never resolves: a crawler records failures, fetches nothing.
      res.unserved++;
      continue;
    }
    if (!inScope(h)) {
      res.outOfScope++;
      continue;
    }
    if (opts.maxCrawlDelayMs !== undefined && (world.robots.crawlDelayMs(h, opts.userAgent) ?? 0) > opts.maxCrawlDelayMs) {
      res.crawlDelayTooLong++;
      continue;
    }
    if (!world.robots.allows(h, loc.path, opts.userAgent)) {
      res.disallowed++;
      continue;
    }
    const resource = world.route(h, loc.path);
    if (resource.kind === "trap") {
      res.trapsExcluded++;
      continue;
    }
    if (urls.size >= maxPages) {
      res.truncated = true;
      break;
    }
    urls.add(url);
    if (resource.kind === "redirect") enqueue(resource.target);
    else if (resource.kind === "page" && !resource.page.nofollowPage) {
      for (const l of world.links(resource.page)) if (!l.nofollow) enqueue(l.url);
    }
    // Keep the queue from holding already-processed prefixes forever on big walks.
    if (qi > 1_000_000 && qi > queue.length / 2) {
      queue.splice(0, qi + 1);
      qi = -1;
    }
  }
  return res;
}
