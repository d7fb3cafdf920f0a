// The parse task: everything CPU-heavy about one fetched page — decode, link extraction, digests,
// WARC record building and gzip. It runs in a piscina worker (parse/worker-entry.ts), or inline on
// the parser process's main thread when parserThreads is 0 (parse/inline-parser.ts).
import { parsePage, type ParseResult } from "./parse-page.js";
import { buildPageRecords } from "../store/warc-record.js";
import { buildPageDerivatives, type DerivativeKinds } from "../store/page-derivatives.js";
import type { CdxFields } from "../store/cdxj.js";
import { hostOf, normalizeUrl } from "../url/normalize.js";
import { ParamStripper } from "../url/strip-params.js";
import { BloomHasher, type BloomParams, type HashedLink } from "../frontier/hashing.js";
import { ScopeFilter, type ScopeSpec } from "../admit/scope-filter.js";
import { buildAdmissionChain } from "../admit/build-chain.js";
import type { AdmissionChain } from "../admit/chain.js";
import { productToken } from "../fetch/robots.js";
import { UrlPrioritizer, type PriorityRule } from "../schedule/priority.js";
import type { FetchedPage, PageFacts } from "../shared/types.js";
import { ContentDigester, type ContentRules } from "../schedule/recrawl/content-rules.js";
import type { SpoolRef } from "../store/body-spool.js";
import { readTaskBody } from "./read-body.js";

export interface WorkerSetup {
  userAgent: string;
  maxLinksPerPage: number;
  maxUrlLength: number;
  maxDecodedBytes: number;
  honourNofollow: boolean;
  maxRedirects: number;
  gzipLevel: number;
  warcinfoId: string;
  scope: ScopeSpec;
  bloom: Pick<BloomParams, "m" | "k" | "seed">;
  /** Continuous mode: content rules of the change digest (facts.contentDigest). */
  contentRules?: ContentRules;
  /** The node's URL priority rules (config priorityRules). */
  priorityRules: PriorityRule[];
  /** Folder of spooled bodies (store/body-spool.ts). */
  spoolDir: string;
  /** Session-id and tracking parameters removed from links and redirect targets (url/strip-params.ts; empty = none). */
  stripParams?: readonly string[];
  /** WET and WAT records to build beside the WARC records (none when absent). */
  derivatives?: DerivativeKinds;
  /** Compute links' Bloom positions here (default true); false leaves it to the frontier's packLinks. */
  hashLinks?: boolean;
}

/** A page with its body, or with a reference to its body in the spool (read here, off the main thread). */
export type WorkerTask = { meta: Omit<FetchedPage, "body">; body: Uint8Array; spool?: undefined } | { meta: Omit<FetchedPage, "body">; spool: SpoolRef; body?: undefined };

/** The page's spooled body is lost: it must be fetched again. */
export interface WorkerLost {
  lost: string;
}

export interface WorkerResult {
  facts: Omit<PageFacts, "links" | "droppedLinks"> | null;
  contentType: string | null;
  /** A parse failure, or "redirect-limit" for a 3xx not followed because the chain is already maxRedirects long. */
  error: ParseResult["error"] | "redirect-limit" | null;
  errorDetail?: string;
  warc: Uint8Array;
  responseOffset: number;
  responseLength: number;
  payloadDigest: string;
  cdx: CdxFields;
  /** Links to queue, with their seen-filter positions (computed here: off the main thread when threaded). */
  links: HashedLink[];
  /** Links dropped because they are outside the crawl's scope. */
  outOfScope: number;
  /** Links and redirect targets that lost session-id or tracking parameters. */
  paramsStripped?: number;
  /** Body bytes as received. */
  bodyBytes: number;
  /** The page's WET conversion record and WAT metadata record (gzip members), when configured and the page has them. */
  wet?: Uint8Array;
  wat?: Uint8Array;
  lost?: undefined;
}

/** The task function for one setup (worker-entry.ts wraps its results for the trip between threads). */
export function makeParseTask(setup: WorkerSetup): (task: WorkerTask) => WorkerResult | WorkerLost {
  // The parser's part of the admission chain (admit/build-chain.ts): scope. Shard routing follows
  // on the main thread; the frontier runs the rest when the page is acknowledged.
  const admission = buildAdmissionChain([new ScopeFilter(setup.scope)]);
  const hasher = setup.hashLinks === false ? undefined : new BloomHasher(setup.bloom);
  const uaToken = productToken(setup.userAgent);
  const contentDigester = setup.contentRules ? new ContentDigester(setup.contentRules) : undefined;
  const priority = new UrlPrioritizer(setup.priorityRules);
  const stripper = new ParamStripper(setup.stripParams ?? []);
  return (task) => parseTask(task, { setup, admission, hasher, uaToken, contentDigester, priority, stripper });
}

interface TaskContext {
  setup: WorkerSetup;
  admission: AdmissionChain;
  hasher: BloomHasher | undefined;
  uaToken: string;
  contentDigester: ContentDigester | undefined;
  priority: UrlPrioritizer;
  stripper: ParamStripper;
}

function parseTask(task: WorkerTask, { setup, admission, hasher, uaToken, contentDigester, priority, stripper }: TaskContext): WorkerResult | WorkerLost {
  const body = readTaskBody(task, setup.spoolDir);
  if (!Buffer.isBuffer(body)) return body;
  const page: FetchedPage = { ...task.meta, body };
  const parsed = parsePage(
    { url: page.url, status: page.status, headers: page.headers, body, truncated: page.truncated },
    {
      userAgentToken: uaToken,
      maxLinks: setup.maxLinksPerPage,
      maxUrlLength: setup.maxUrlLength,
      maxDecodedBytes: setup.maxDecodedBytes,
      honourNofollow: setup.honourNofollow,
      ...(contentDigester ? { contentDigester } : {}),
      cleanUrl: (u) => stripper.clean(u),
    },
  );
  // The parse step already hashed the body as received: the WARC payload digest is the same value.
  const records = buildPageRecords(page, { gzipLevel: setup.gzipLevel, warcinfoId: setup.warcinfoId, payloadDigest: parsed.payloadDigest });
  const links: HashedLink[] = [];
  let outOfScope = 0;
  let paramsStripped = parsed.paramsStripped ?? 0;
  const depth = page.depth + 1;
  // parsePage keeps no links from error pages: their links are usually navigation chrome.
  for (const url of parsed.links) {
    const host = hostOf(url);
    if (!host) continue;
    if (admission.check(url, host) !== undefined) {
      outOfScope++;
      continue;
    }
    const link: HashedLink = { url, host, tier: priority.tier(url, depth), depth, hops: 0 };
    if (hasher) link.bloom = hasher.positions(url);
    links.push(link);
  }
  // A redirect becomes a frontier entry (loop-safe: the seen filter drops URLs already queued).
  const redirect = page.status >= 300 && page.status < 400 && page.redirectTo !== undefined;
  const chainTooLong = redirect && page.hops >= setup.maxRedirects;
  if (redirect && page.redirectTo && !chainTooLong) {
    const raw = normalizeUrl(page.redirectTo, undefined, { maxLength: setup.maxUrlLength });
    const url = raw === null ? null : stripper.clean(raw);
    if (url !== raw) paramsStripped++;
    const host = url ? hostOf(url) : null;
    if (url && host) {
      if (admission.check(url, host) === undefined) links.push({ url, host, tier: priority.tier(url, page.depth), depth: page.depth, hops: page.hops + 1, ...(hasher ? { bloom: hasher.positions(url) } : {}) });
      else outOfScope++;
    }
  }
  const warc = new Uint8Array(records.data.buffer, records.data.byteOffset, records.data.byteLength);
  // facts.links and droppedLinks stay here: `links` carries what is queued, nothing reads the rest.
  const { contentType, isHtml: _isHtml, decodedBytes: _decoded, error, errorDetail, links: _links, droppedLinks: _dropped, paramsStripped: _stripped, text: _text, metas: _metas, ...facts } = parsed;
  const result: WorkerResult = {
    facts,
    contentType,
    ...(chainTooLong && !error
      ? { error: "redirect-limit" as const, errorDetail: `redirect not followed: the chain already has ${page.hops} hops (limit ${setup.maxRedirects})` }
      : { error: error ?? null, errorDetail }),
    warc,
    responseOffset: records.responseOffset,
    responseLength: records.responseLength,
    payloadDigest: records.payloadDigest,
    cdx: records.cdx,
    links,
    outOfScope,
    ...(paramsStripped > 0 ? { paramsStripped } : {}),
    bodyBytes: body.byteLength,
  };
  if (setup.derivatives) Object.assign(result, buildPageDerivatives(setup.derivatives, page, parsed, records, setup.gzipLevel));
  return result;
}
