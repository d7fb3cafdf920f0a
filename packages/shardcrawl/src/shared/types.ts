// Types at the boundaries between stages. Each stage folder owns its implementation; these are
// the shapes that cross process or module boundaries (Redis payloads, worker messages, log lines).

/** A URL waiting in, or leased from, the frontier. */
export interface FrontierUrl {
  /** Absolute, normalized URL (see url/normalize.ts). */
  url: string;
  /** Politeness key: the URL's hostname (lower-case, punycode), without port. */
  host: string;
  /** Priority tier: 0 = highest (seeds, shallow pages) .. MAX_TIER = lowest. */
  tier: number;
  /** Link distance from a seed (seeds are 0). */
  depth: number;
  /** Redirect hops that led here (0 for ordinary links). */
  hops: number;
  /** Attempts already made (0 for a first attempt). */
  attempt: number;
}

export const MAX_TIER = 3;

/** A link found on a page, ready for the frontier (already normalized and scope-checked). */
export interface DiscoveredLink {
  url: string;
  host: string;
  tier: number;
  depth: number;
  hops: number;
}

/** A lease on one URL, held by one fetcher until it completes or the lease expires. */
export interface Lease extends FrontierUrl {
  id: string;
  /** Epoch ms when the lease expires and the reaper returns the URL to its host queue. */
  expiresAt: number;
}

/** Timings of one fetch, in ms (absent when the phase did not happen). */
export interface FetchTimings {
  dns?: number;
  connect?: number;
  tls?: number;
  ttfb?: number;
  total: number;
}

/** Failure classes recorded in the page log; one word each so they can be counted. */
export type FetchErrorClass =
  | "dns"
  | "dns-transient"
  | "connect"
  | "connect-timeout"
  | "tls"
  | "reset"
  | "headers-timeout"
  | "body-timeout"
  | "total-timeout"
  | "too-large-headers"
  | "http-protocol"
  | "ssrf-blocked"
  | "robots-disallowed"
  | "robots-unavailable"
  | "crawl-delay-too-long"
  | "excluded"
  | "redirect-limit"
  | "redirect-invalid"
  | "decode-bomb"
  | "decode-error"
  | "url-invalid"
  | "out-of-scope"
  /** Continuous mode: the other queued copy of a URL queued from a feed or sitemap was fetched (no request). */
  | "duplicate"
  | "other";

/** What a fetcher hands to the parse queue: the raw response as received (after de-chunking). */
export interface FetchedPage {
  url: string;
  host: string;
  depth: number;
  hops: number;
  /** ISO 8601 time the request was sent. */
  fetchedAt: string;
  /** Remote IP actually connected to (for WARC-IP-Address). */
  ip?: string;
  status: number;
  /** HTTP version string as received, e.g. "1.1". */
  httpVersion: string;
  statusText: string;
  /** Response headers as received, in order, names in the case received where known. */
  headers: Array<[string, string]>;
  /** Request headers sent, in order (for the WARC request record). */
  requestHeaders: Array<[string, string]>;
  /** Body bytes as received on the wire (content-encoding NOT removed), possibly truncated. */
  body: Buffer;
  /** Why the body is shorter than the resource: "length" (size cap) or "time" (body timeout). */
  truncated?: "length" | "time";
  /** Absolute, normalized redirect target when status is 3xx with a usable Location. */
  redirectTo?: string;
  timings: FetchTimings;
}

/** Facts the parse step extracts from one page. */
export interface PageFacts {
  title?: string;
  lang?: string;
  canonical?: string;
  /** meta robots (and X-Robots-Tag) directives that matter to us. */
  noindex: boolean;
  nofollow: boolean;
  /** Charset actually used to decode, and where it came from. */
  charset: string;
  charsetSource: "bom" | "header" | "meta" | "default";
  /** Absolute normalized links to follow (nofollow removed when configured), deduplicated, capped. */
  links: string[];
  /** Links found but dropped, by reason (nofollow, invalid, scheme, too-long, cap). */
  droppedLinks: Record<string, number>;
  /** sha1 of the payload as received, WARC style: "sha1:BASE32". */
  payloadDigest: string;
  /** Digest of the extracted visible text, for change detection (re-crawl). */
  textDigest: string;
  /** Extracted text length in characters. */
  textLength: number;
  /** Continuous mode: 64-bit digest of the text without timestamps, ad slots, tokens (content rules). */
  contentDigest?: string;
}

/** One line of the page log (pages/*.jsonl). Field names are part of the output contract. */
export interface PageLogLine {
  url: string;
  final_url: string;
  status: number | null;
  error: FetchErrorClass | null;
  error_detail?: string;
  content_type: string | null;
  bytes: number;
  truncated: boolean;
  digest: string | null;
  text_digest?: string | null;
  fetched_at: string;
  timings: FetchTimings;
  outlinks: number;
  depth: number;
  redirect_to?: string;
  title?: string;
  canonical?: string;
  lang?: string;
  charset?: string;
  noindex?: boolean;
  attempt?: number;
  /** WARC file and offset of the response record, when one was written. */
  warc?: { file: string; offset: number; length: number };
}
