// The parse step for one fetched response: digest the payload as received, remove content-encoding
// (bounded), decide whether it is HTML, find the charset, extract links and facts, digest the text.
// Pure and synchronous (CPU only), so it runs the same in a piscina worker or inline in a test.

import type { PageFacts } from "../shared/types.js";
import { charsetName, charsetParam, decodeTextChunks, detectCharset, DEFAULT_PRESCAN_BYTES } from "./charset.js";
import { decodeBody, DEFAULT_MAX_DECODED_BYTES } from "./decode-body.js";
import { payloadDigest, sha1Base32, textDigest } from "./digest.js";
import { extractPage, type MetaTag, parseRobotsDirectives } from "./extract.js";

export interface ParseOptions {
  /** Our robots token (product name in the User-Agent, e.g. "shardcrawl"), case-insensitive. */
  userAgentToken: string;
  /** Links kept per page (default 10,000). */
  maxLinks?: number;
  /** Longest normalized URL kept (default 2048). */
  maxUrlLength?: number;
  /** Cap on the body after content-encoding removal (default 10 MiB); more is a decode-bomb. */
  maxDecodedBytes?: number;
  /** Drop rel=nofollow links, and all links of a nofollow page (default true). */
  honourNofollow?: boolean;
  /** Visible text kept for the text digest, in characters (default 100,000). */
  maxTextChars?: number;
  /** Title kept, in characters (default 1,024). */
  maxTitleChars?: number;
  /** Bytes examined for <meta charset> (default 1024, as the HTML spec's prescan). */
  prescanBytes?: number;
  /** Follow links found on non-2xx pages (default false: they are counted as dropped "status"). */
  linksFromErrorPages?: boolean;
  /** Continuous mode: digests the extracted text under the content rules (schedule/recrawl/content-rules.ts). */
  contentDigester?: { digest(text: string): string };
  /** Removes session-id and tracking parameters from links (url/strip-params.ts). */
  cleanUrl?: (url: string) => string;
}

export interface ParseInput {
  url: string;
  status: number;
  headers: Array<[string, string]>;
  /** Body as received on the wire (content-encoding not removed), possibly truncated. */
  body: Buffer;
  /** Why the body was cut short, if it was ("length" | "time"); informative only. */
  truncated?: string;
}

export interface ParseResult extends PageFacts {
  /** Content-Type essence ("text/html"), lower-case; the sniffed type when the header was missing. */
  contentType: string | null;
  isHtml: boolean;
  /** Body size after content-encoding removal (0 when decoding failed). */
  decodedBytes: number;
  /**
   * Set when the body could not be decoded (facts then hold no links and an empty textDigest), or
   * "other" for an internal failure.
   */
  error?: "decode-bomb" | "decode-error" | "other";
  errorDetail?: string;
  /** Links that lost session-id or tracking parameters (ParseOptions.cleanUrl). */
  paramsStripped?: number;
  /** HTML only: the extracted visible text that textDigest and contentDigest are computed from (WET files carry it). */
  text?: string;
  /** HTML only: the page's <meta> tags (WAT files carry them). */
  metas?: MetaTag[];
}

const HTML_TYPES = new Set(["text/html", "application/xhtml+xml"]);
// Types that say nothing; the HTML spec sniffs these like a missing header.
const UNKNOWN_TYPES = new Set(["", "unknown/unknown", "application/unknown", "*/*"]);

function headerValues(headers: ReadonlyArray<readonly [string, string]>, lowerName: string): string[] {
  const values: string[] = [];
  for (const [name, value] of headers) {
    if (name.length === lowerName.length && name.toLowerCase() === lowerName) values.push(value);
  }
  return values;
}

/** Lower-case "type/subtype" of a Content-Type value. */
export function mimeEssence(contentType: string): string {
  const semi = contentType.indexOf(";");
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

// HTML spec, MIME sniffing, "rules for identifying an unknown MIME type": these openings, after
// optional whitespace, followed by a space or '>', mean text/html.
const HTML_SNIFF_PATTERNS = [
  "<!doctype html", "<html", "<head", "<script", "<iframe", "<h1", "<div", "<font", "<table", "<a", "<style",
  "<title", "<b", "<body", "<br", "<p", "<!--",
].map((p) => Buffer.from(p, "latin1"));

/** Does a body with no usable Content-Type look like HTML? (UTF-8 BOM tolerated.) */
export function sniffHtml(body: Uint8Array): boolean {
  let i = 0;
  if (body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf) i = 3;
  while (i < body.length && (body[i] === 0x20 || body[i] === 0x09 || body[i] === 0x0a || body[i] === 0x0c || body[i] === 0x0d)) i++;
  outer: for (const pattern of HTML_SNIFF_PATTERNS) {
    if (i + pattern.length >= body.length) continue;
    for (let j = 0; j < pattern.length; j++) {
      const c = body[i + j]!;
      const lower = c >= 0x41 && c <= 0x5a ? c | 0x20 : c;
      if (lower !== pattern[j]) continue outer;
    }
    const next = body[i + pattern.length];
    if (next === 0x20 || next === 0x3e) return true;
  }
  return false;
}

/**
 * noindex / nofollow from X-Robots-Tag values. A value may be scoped to one crawler
 * ("otherbot: noindex"); it counts only when the scope is our token. Unscoped values count.
 */
export function xRobotsDirectives(values: readonly string[], userAgentToken: string): { noindex: boolean; nofollow: boolean } {
  let noindex = false;
  let nofollow = false;
  const token = userAgentToken.toLowerCase();
  for (const value of values) {
    let directives = value;
    const scoped = /^\s*([a-z0-9_.*-]+)\s*:(.*)$/is.exec(value);
    if (scoped && !DIRECTIVES_WITH_VALUES.has(scoped[1]!.toLowerCase())) {
      if (scoped[1]!.toLowerCase() !== token) continue;
      directives = scoped[2]!;
    }
    const d = parseRobotsDirectives(directives);
    noindex ||= d.noindex;
    nofollow ||= d.nofollow;
  }
  return { noindex, nofollow };
}
const DIRECTIVES_WITH_VALUES = new Set(["unavailable_after", "max-snippet", "max-image-preview", "max-video-preview"]);

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

/** Parse one fetched page. Never throws; every failure is recorded in the result. */
export function parsePage(input: ParseInput, options: ParseOptions): ParseResult {
  try {
    return parsePageUnsafe(input, options);
  } catch (err) {
    // Not expected (every step below is total); a bug must cost one page, not the parser process.
    const detail = err instanceof Error ? err.message : String(err);
    return {
      contentType: null,
      isHtml: false,
      decodedBytes: 0,
      noindex: false,
      nofollow: false,
      charset: "none",
      charsetSource: "default",
      links: [],
      droppedLinks: {},
      payloadDigest: safePayloadDigest(input.body),
      textDigest: "",
      textLength: 0,
      error: "other",
      errorDetail: `parse failed: ${detail}`.slice(0, 200),
    };
  }
}

function safePayloadDigest(body: unknown): string {
  try {
    return payloadDigest(body as Uint8Array);
  } catch {
    return "";
  }
}

function parsePageUnsafe(input: ParseInput, options: ParseOptions): ParseResult {
  const digest = payloadDigest(input.body);
  const contentTypeHeader = headerValues(input.headers, "content-type")[0];
  const headerEssence = contentTypeHeader === undefined ? "" : mimeEssence(contentTypeHeader);
  const headerCharset = charsetName(charsetParam(contentTypeHeader) ?? "");
  const robots = xRobotsDirectives(headerValues(input.headers, "x-robots-tag"), options.userAgentToken);

  const base: ParseResult = {
    contentType: headerEssence === "" ? null : headerEssence,
    isHtml: false,
    decodedBytes: 0,
    noindex: robots.noindex,
    nofollow: robots.nofollow,
    charset: headerCharset ?? "none",
    charsetSource: headerCharset === undefined ? "default" : "header",
    links: [],
    droppedLinks: {},
    payloadDigest: digest,
    textDigest: "",
    textLength: 0,
  };

  const decoded = decodeBody(
    input.body,
    headerValues(input.headers, "content-encoding"),
    options.maxDecodedBytes ?? DEFAULT_MAX_DECODED_BYTES,
  );
  if (!decoded.ok) return { ...base, error: decoded.error, errorDetail: decoded.detail };
  const body = decoded.body;
  base.decodedBytes = body.length;

  let isHtml = HTML_TYPES.has(headerEssence);
  if (UNKNOWN_TYPES.has(headerEssence) && sniffHtml(body)) {
    isHtml = true;
    base.contentType = "text/html";
  }
  if (!isHtml) {
    // Change detection for non-HTML resources works on the decoded bytes.
    base.textDigest = sha1Base32(body);
    return base;
  }

  const charset = detectCharset(body, contentTypeHeader, options.prescanBytes ?? DEFAULT_PRESCAN_BYTES);
  const html = decodeTextChunks(body, charset.charset);
  const extracted = extractPage(html, {
    pageUrl: input.url,
    userAgentToken: options.userAgentToken,
    maxLinks: options.maxLinks,
    maxUrlLength: options.maxUrlLength,
    honourNofollow: options.honourNofollow,
    headerNofollow: robots.nofollow,
    maxTextChars: options.maxTextChars,
    maxTitleChars: options.maxTitleChars,
    ...(options.cleanUrl ? { cleanUrl: options.cleanUrl } : {}),
  });

  const result: ParseResult = {
    ...base,
    isHtml: true,
    noindex: robots.noindex || extracted.noindex,
    nofollow: robots.nofollow || extracted.nofollow,
    charset: charset.charset,
    charsetSource: charset.source,
    links: extracted.links,
    droppedLinks: extracted.droppedLinks,
    textDigest: textDigest(extracted.text),
    textLength: extracted.text.length,
    text: extracted.text,
    metas: extracted.metas,
  };
  if (options.contentDigester) result.contentDigest = options.contentDigester.digest(extracted.text);
  if (!isSuccess(input.status) && !options.linksFromErrorPages && result.links.length > 0) {
    result.droppedLinks = { ...result.droppedLinks, status: result.links.length };
    result.links = [];
  }
  if (extracted.title !== undefined) result.title = extracted.title;
  if (extracted.lang !== undefined) result.lang = extracted.lang;
  if (extracted.canonical !== undefined) result.canonical = extracted.canonical;
  if (extracted.paramsStripped !== undefined) result.paramsStripped = extracted.paramsStripped;
  if (extracted.parseError !== undefined) {
    result.error = "other";
    result.errorDetail = `tokenizer: ${extracted.parseError}`;
  }
  return result;
}
