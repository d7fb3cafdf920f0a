// One pass over an HTML document collecting what the crawler needs: links, base, canonical, robots
// directives, lang, title and the visible text.
//
// Why htmlparser2's Tokenizer and not its Parser: the Parser keeps the open-element stack with
// Array.unshift and searches it with indexOf, which makes deeply nested markup quadratic (measured:
// 400k unclosed <div>s, 2 MB, take 35 s in the Parser and 16 ms in the Tokenizer). It also builds an
// attribute object and lower-cases every attribute name of every tag. The Tokenizer hands us
// positions in the source string; we slice only what we keep. We need no tree: the few nesting
// facts that matter (inside <noscript>/<template>/<svg>, inside raw text) are counters.

import type { TokenizerCallbacks } from "htmlparser2";
import { FastTokenizer } from "./fast-tokenizer.js";
import { baseParts, plainAbsolute, resolvePlainRelative } from "./relative-url.js";
import { DEFAULT_MAX_URL_LENGTH, normalizeUrl, normalizeUrlDetailed } from "../url/normalize.js";

export const DEFAULT_MAX_LINKS = 10_000;
export const DEFAULT_MAX_TEXT_CHARS = 100_000;
export const DEFAULT_MAX_TITLE_CHARS = 1_024;
const MAX_LANG_CHARS = 64;
const MAX_META_CONTENT_CHARS = 4_096;
/** <meta> tags kept per page (real pages have 5-40; the rest is boilerplate or abuse). */
const MAX_METAS = 64;

/** One <meta> tag as WAT files show it: the attribute naming it, and its content. */
export interface MetaTag {
  name?: string;
  property?: string;
  "http-equiv"?: string;
  content: string;
}

export interface ExtractOptions {
  /** The page's own (absolute) URL: base for relative links unless <base href> says otherwise. */
  pageUrl: string;
  /** Our robots token, lower-case (e.g. "shardcrawl"): <meta name=TOKEN> counts like <meta name=robots>. */
  userAgentToken?: string;
  maxLinks?: number;
  maxUrlLength?: number;
  /** Drop rel=nofollow links and, with a page-level nofollow, all links (default true). */
  honourNofollow?: boolean;
  /** Removes session-id and tracking parameters from each normalized link (url/strip-params.ts). */
  cleanUrl?: (url: string) => string;
  /** Page-level nofollow known before parsing (X-Robots-Tag). */
  headerNofollow?: boolean;
  maxTextChars?: number;
  maxTitleChars?: number;
}

export interface Extracted {
  title?: string;
  lang?: string;
  canonical?: string;
  /** Base URL links were resolved against (the <base href> when valid, else the page URL). */
  baseUrl: string;
  /** From <meta name=robots|TOKEN> only (headers are the caller's business). */
  noindex: boolean;
  nofollow: boolean;
  links: string[];
  /**
   * Unique hrefs dropped, by reason: nofollow, invalid, scheme, too-long, self (the page itself),
   * duplicate (another spelling of a kept link), cap (over maxLinks; raw hrefs beyond the collection
   * bound are counted per occurrence).
   */
  droppedLinks: Record<string, number>;
  /** Visible text, whitespace collapsed, capped at maxTextChars. */
  text: string;
  /** The page's <meta> tags with content (name, property or http-equiv), at most MAX_METAS: WAT files carry them. */
  metas: MetaTag[];
  /** Set if tokenizing stopped early on an internal error; the other fields hold what was found. */
  parseError?: string;
  /** Unique links that lost session-id or tracking parameters (cleanUrl). */
  paramsStripped?: number;
}

// Tag kinds, decided once per tag from its name.
const K_OTHER = 0; // block-ish: separates words in the visible text
const K_INLINE = 1; // does not separate words
const K_A = 2;
const K_AREA = 3;
const K_BASE = 4;
const K_LINK = 5;
const K_META = 6;
const K_HTML = 7;
const K_TITLE = 8;
const K_RAW_HIDDEN = 9; // raw-text elements whose content is not visible: script, style, iframe ...
const K_NOSCRIPT = 10;
const K_TEMPLATE = 11;
const K_SVG = 12;

const TAG_KINDS = new Map<string, number>([
  ["a", K_A],
  ["area", K_AREA],
  ["base", K_BASE],
  ["link", K_LINK],
  ["meta", K_META],
  ["html", K_HTML],
  ["title", K_TITLE],
  ["script", K_RAW_HIDDEN],
  ["style", K_RAW_HIDDEN],
  ["iframe", K_RAW_HIDDEN],
  ["noembed", K_RAW_HIDDEN],
  ["noframes", K_RAW_HIDDEN],
  ["noscript", K_NOSCRIPT],
  ["template", K_TEMPLATE],
  ["svg", K_SVG],
]);
for (const inline of [
  "abbr", "b", "bdi", "bdo", "big", "cite", "code", "data", "dfn", "em", "font", "i", "img", "kbd", "label",
  "mark", "nobr", "q", "s", "samp", "small", "span", "strike", "strong", "sub", "sup", "time", "tt", "u",
  "var", "wbr",
]) {
  TAG_KINDS.set(inline, K_INLINE);
}
// No tag name we care about is longer than this; longer names are K_OTHER without a lookup.
const MAX_KNOWN_TAG_LENGTH = 8;

function tagKey(name: string): number {
  let key = 0;
  for (let i = 0; i < name.length; i++) key = key * 32 + (name.charCodeAt(i) - 0x60);
  return key;
}
const TAG_KEY_KINDS = new Map<number, number>([...TAG_KINDS].map(([name, kind]) => [tagKey(name), kind]));

// Attributes we collect, per tag kind.
const A_NONE = 0;
const A_HREF = 1;
const A_REL = 2;
const A_NAME = 3;
const A_CONTENT = 4;
const A_HTTP_EQUIV = 5;
const A_LANG = 6;
const A_PROPERTY = 7;
const ATTR_COUNT = 8;

function attrOf(kind: number, name: string): number {
  switch (kind) {
    case K_A:
    case K_AREA:
    case K_LINK:
      return name === "href" ? A_HREF : name === "rel" ? A_REL : A_NONE;
    case K_BASE:
      return name === "href" ? A_HREF : A_NONE;
    case K_META:
      return name === "name" ? A_NAME : name === "content" ? A_CONTENT : name === "http-equiv" ? A_HTTP_EQUIV : name === "property" ? A_PROPERTY : A_NONE;
    case K_HTML:
      return name === "lang" ? A_LANG : A_NONE;
    default:
      return A_NONE;
  }
}

function hasAttributes(kind: number): boolean {
  return kind >= K_A && kind <= K_HTML;
}

const WHITESPACE_RUN = /\s+/g;

/** ASCII whitespace, no-break space and the Unicode space separators: all collapse to one space. */
function isSpace(c: number): boolean {
  if (c <= 0x20) return c === 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return (
    c === 0xa0 || c === 0x1680 || (c >= 0x2000 && c <= 0x200a) || c === 0x2028 || c === 0x2029 ||
    c === 0x202f || c === 0x205f || c === 0x3000 || c === 0xfeff
  );
}

function collapseWhitespace(s: string): string {
  return s.replace(WHITESPACE_RUN, " ").trim();
}

/**
 * The string as a flat string of its own. What the tokenizer hands us are slices of the page's
 * decoded chunks (32 KB strings), and "origin + href" is a rope over such a slice: V8 keeps the whole
 * chunk alive for either. Links and facts outlive the parse (they wait for the write and the ack
 * while later pages are parsed), so kept as they are each page's chunks were promoted to the old
 * generation and lingered there until a full GC: measured, the parser's heap grew by ~100 MB over
 * a 3,000-page crawl. Prefixing and slicing again forces a copy of just these characters.
 */
export function ownString(s: string): string {
  return (" " + s).slice(1);
}

/** Cut to at most `max` UTF-16 units without splitting a surrogate pair. */
function capChars(s: string, max: number): string {
  if (s.length <= max) return s;
  let end = max;
  const last = s.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return s.slice(0, end);
}

function relHas(rel: string | undefined, token: string): boolean {
  if (rel === undefined) return false;
  for (const part of rel.toLowerCase().split(/[\t\n\f\r ]+/)) if (part === token) return true;
  return false;
}

/** noindex / nofollow from a robots directive list ("noindex, nofollow", "none", "NOINDEX"). */
export function parseRobotsDirectives(content: string): { noindex: boolean; nofollow: boolean } {
  let noindex = false;
  let nofollow = false;
  for (const part of content.toLowerCase().split(/[\s,]+/)) {
    if (part === "noindex") noindex = true;
    else if (part === "nofollow") nofollow = true;
    else if (part === "none") noindex = nofollow = true;
  }
  return { noindex, nofollow };
}

/** The URL of a <meta http-equiv=refresh content="5; url=..."> (lenient), or undefined. */
export function refreshTarget(content: string): string | undefined {
  const m = /^\s*[\d.]*\s*[;,]?\s*(?:url\s*=\s*)?(.*)$/is.exec(content);
  let target = m?.[1]?.trim() ?? "";
  if (target.length >= 2 && (target[0] === '"' || target[0] === "'")) {
    const close = target.indexOf(target[0], 1);
    target = close === -1 ? target.slice(1) : target.slice(1, close);
  }
  return target === "" ? undefined : target;
}

/**
 * Tokenizer callbacks: a small state machine over tokens. Every method is cheap for tags we do not
 * care about (one name lookup, no attribute work).
 */
class Collector implements TokenizerCallbacks {
  // current tag
  private kind = K_OTHER;
  private readonly attrs: Array<string | undefined> = new Array<string | undefined>(ATTR_COUNT).fill(undefined);
  private attr = A_NONE;
  private attrValue = "";
  private attrOverlong = false;

  // nesting facts
  private rawKind = 0; // K_TITLE or K_RAW_HIDDEN while inside such raw text, else 0
  private noscriptDepth = 0;
  private templateDepth = 0;
  private svgDepth = 0;

  // title
  private titleDone = false;
  private capturingTitle = false;
  private readonly titleParts: string[] = [];
  private titleBudget: number;

  // visible text, collapsed as it arrives (a regex pass over the joined text cost a third of the
  // whole parse step in profiles)
  private text = "";
  private pendingSpace = false;
  private textFull: boolean;

  // findings
  baseHref: string | undefined;
  canonicalHref: string | undefined;
  lang: string | undefined;
  noindex = false;
  nofollow = false;
  readonly metas: MetaTag[] = [];
  /** Unique raw hrefs in document order -> followable (some occurrence without rel=nofollow). */
  readonly hrefs = new Map<string, boolean>();
  hrefsOverCap = 0;

  // Source text, fed in chunks (see charset.ts decodeTextChunks). Token positions are absolute;
  // almost every token lies in the current chunk, the rare one spanning chunks is stitched.
  private readonly chunks: string[] = [];
  private readonly chunkStarts: number[] = [];
  private cur = "";
  private curStart = 0;

  constructor(
    private readonly userAgentToken: string,
    private readonly maxRawHrefs: number,
    private readonly maxAttrChars: number,
    private readonly maxTextChars: number,
    maxTitleChars: number,
  ) {
    this.textFull = maxTextChars <= 0;
    // Raw title text still holds its whitespace; keep slack so collapsing leaves maxTitleChars.
    this.titleBudget = maxTitleChars * 4;
  }

  /** Make `chunk` the current source text; the caller then hands it to the tokenizer. */
  feed(chunk: string): void {
    const start = this.curStart + this.cur.length;
    this.chunks.push(chunk);
    this.chunkStarts.push(start);
    this.cur = chunk;
    this.curStart = start;
  }

  /** Source text between absolute positions. */
  private slice(start: number, end: number): string {
    if (start >= this.curStart) return this.cur.slice(start - this.curStart, end - this.curStart);
    let k = this.chunks.length - 1;
    while (k > 0 && this.chunkStarts[k]! > start) k--;
    let out = "";
    while (start < end && k < this.chunks.length) {
      const chunkStart = this.chunkStarts[k]!;
      const chunk = this.chunks[k]!;
      const to = Math.min(chunk.length, end - chunkStart);
      out += chunk.slice(start - chunkStart, to);
      start = chunkStart + to;
      k++;
    }
    return out;
  }

  /**
   * Tag kind from the name's characters without allocating a string: names we know are at most 8
   * ASCII letters, so (letter - 96) digits in base 32 make an exact numeric key.
   */
  private kindOf(start: number, end: number): number {
    const length = end - start;
    if (length > MAX_KNOWN_TAG_LENGTH) return K_OTHER;
    if (start < this.curStart) return TAG_KINDS.get(this.slice(start, end).toLowerCase()) ?? K_OTHER;
    const s = this.cur;
    let key = 0;
    for (let i = start - this.curStart, stop = end - this.curStart; i < stop; i++) {
      const c = s.charCodeAt(i) | 0x20;
      if (c < 0x61 || c > 0x7a) return K_OTHER;
      key = key * 32 + (c - 0x60);
    }
    return TAG_KEY_KINDS.get(key) ?? K_OTHER;
  }

  private separate(): void {
    this.pendingSpace = true;
  }

  private visible(): boolean {
    return this.rawKind === 0 && this.noscriptDepth === 0 && this.templateDepth === 0 && !this.textFull;
  }

  private addTitle(s: string): void {
    if (this.capturingTitle && this.titleBudget > 0) {
      const piece = s.length > this.titleBudget ? s.slice(0, this.titleBudget) : s;
      this.titleParts.push(piece);
      this.titleBudget -= piece.length;
    }
  }

  /**
   * Append html[start..end) to the visible text with whitespace runs collapsed to one space. Copies
   * maximal runs of words separated by single spaces as one slice.
   */
  private appendVisible(s: string, start: number, end: number): void {
    let i = start;
    while (i < end) {
      if (isSpace(s.charCodeAt(i))) {
        // A whole run at once: indentation between tags is most of the whitespace a page has.
        do i++;
        while (i < end && isSpace(s.charCodeAt(i)));
        this.pendingSpace = true;
        continue;
      }
      let j = i + 1;
      while (j < end) {
        const c = s.charCodeAt(j);
        if (!isSpace(c)) j++;
        else if (c === 0x20 && j + 1 < end && !isSpace(s.charCodeAt(j + 1))) j += 2;
        else break;
      }
      if (this.pendingSpace && this.text.length > 0) this.text += " ";
      this.pendingSpace = false;
      this.text += s.slice(i, j);
      if (this.text.length >= this.maxTextChars) {
        this.textFull = true;
        return;
      }
      i = j;
    }
  }

  ontext(start: number, end: number): void {
    if (this.rawKind !== 0) {
      if (this.capturingTitle) this.addTitle(this.slice(start, end));
      return; // scripts and styles are skipped without slicing
    }
    if (!this.visible()) return;
    if (start >= this.curStart) {
      this.appendVisible(this.cur, start - this.curStart, end - this.curStart);
    } else {
      const piece = this.slice(start, end);
      this.appendVisible(piece, 0, piece.length);
    }
  }

  ontextentity(codepoint: number): void {
    if (this.rawKind !== 0) {
      if (this.capturingTitle) this.addTitle(String.fromCodePoint(codepoint));
      return;
    }
    if (!this.visible()) return;
    const s = String.fromCodePoint(codepoint);
    this.appendVisible(s, 0, s.length);
  }

  onopentagname(start: number, end: number): void {
    const kind = this.kindOf(start, end);
    this.kind = kind;
    if (hasAttributes(kind)) this.attrs.fill(undefined);
    if (kind !== K_INLINE && kind !== K_A) this.separate();
  }

  onattribname(start: number, end: number): void {
    if (!hasAttributes(this.kind)) return;
    const length = end - start;
    // rel, href/name/lang, content, http-equiv: skip class, id, style ... without slicing them.
    if (length !== 3 && length !== 4 && length !== 7 && length !== 10) {
      this.attr = A_NONE;
      return;
    }
    const attr = attrOf(this.kind, this.slice(start, end).toLowerCase());
    // The first occurrence of an attribute wins (HTML spec: duplicates are dropped).
    this.attr = attr !== A_NONE && this.attrs[attr] === undefined ? attr : A_NONE;
    this.attrValue = "";
    this.attrOverlong = false;
  }

  private appendAttr(piece: string): void {
    if (this.attrOverlong) return;
    if (this.attrValue.length + piece.length > this.maxAttrChars) {
      this.attrOverlong = true;
      return;
    }
    this.attrValue += piece;
  }

  onattribdata(start: number, end: number): void {
    if (this.attr !== A_NONE && end > start) this.appendAttr(this.slice(start, end));
  }

  onattribentity(codepoint: number): void {
    if (this.attr !== A_NONE) this.appendAttr(String.fromCodePoint(codepoint));
  }

  onattribend(): void {
    if (this.attr === A_NONE) return;
    // An overlong value is recorded as a marker the link code counts as too long; other attributes
    // keep what fitted.
    this.attrs[this.attr] = this.attrOverlong && this.attr === A_HREF ? OVERLONG : this.attrValue;
    this.attr = A_NONE;
    this.attrValue = "";
  }

  onopentagend(): void {
    this.endOpenTag(false);
  }

  onselfclosingtag(): void {
    this.endOpenTag(true);
  }

  private endOpenTag(selfClosing: boolean): void {
    const kind = this.kind;
    this.kind = K_OTHER;
    switch (kind) {
      case K_A:
      case K_AREA: {
        const href = this.attrs[A_HREF];
        if (href !== undefined && this.templateDepth === 0) this.addHref(href, !relHas(this.attrs[A_REL], "nofollow"));
        break;
      }
      case K_BASE:
        if (this.baseHref === undefined && this.attrs[A_HREF] !== undefined) this.baseHref = this.attrs[A_HREF];
        break;
      case K_LINK:
        if (this.canonicalHref === undefined && this.attrs[A_HREF] !== undefined && relHas(this.attrs[A_REL], "canonical")) {
          this.canonicalHref = this.attrs[A_HREF];
        }
        break;
      case K_META:
        this.onMeta();
        break;
      case K_HTML: {
        const lang = this.attrs[A_LANG]?.trim();
        if (this.lang === undefined && lang) this.lang = lang.slice(0, MAX_LANG_CHARS);
        break;
      }
      case K_TITLE:
        // The tokenizer now reads raw text up to </title>; only the first title outside <svg> counts.
        this.rawKind = K_TITLE;
        this.capturingTitle = !this.titleDone && this.svgDepth === 0;
        break;
      case K_RAW_HIDDEN:
        this.rawKind = K_RAW_HIDDEN;
        break;
      case K_NOSCRIPT:
        this.noscriptDepth++;
        break;
      case K_TEMPLATE:
        this.templateDepth++;
        break;
      case K_SVG:
        if (!selfClosing) this.svgDepth++;
        break;
    }
  }

  private onMeta(): void {
    const content = this.attrs[A_CONTENT];
    if (content === undefined) return;
    this.keepMeta(content);
    const name = this.attrs[A_NAME]?.trim().toLowerCase();
    if (name !== undefined && (name === "robots" || (this.userAgentToken !== "" && name === this.userAgentToken))) {
      const directives = parseRobotsDirectives(content);
      this.noindex ||= directives.noindex;
      this.nofollow ||= directives.nofollow;
    }
    if (this.attrs[A_HTTP_EQUIV]?.trim().toLowerCase() === "refresh" && this.templateDepth === 0) {
      const target = refreshTarget(content);
      if (target !== undefined) this.addHref(target, true);
    }
  }

  private keepMeta(content: string): void {
    if (this.metas.length >= MAX_METAS) return;
    const name = this.attrs[A_NAME];
    const property = this.attrs[A_PROPERTY];
    const httpEquiv = this.attrs[A_HTTP_EQUIV];
    if (name === undefined && property === undefined && httpEquiv === undefined) return;
    const tag: MetaTag = { content };
    if (name !== undefined) tag.name = name;
    if (property !== undefined) tag.property = property;
    if (httpEquiv !== undefined) tag["http-equiv"] = httpEquiv;
    this.metas.push(tag);
  }

  private addHref(href: string, followable: boolean): void {
    const known = this.hrefs.get(href);
    if (known !== undefined) {
      if (followable && !known) this.hrefs.set(href, true);
      return;
    }
    if (this.hrefs.size >= this.maxRawHrefs) {
      this.hrefsOverCap++;
      return;
    }
    this.hrefs.set(href, followable);
  }

  onclosetag(start: number, end: number): void {
    if (this.rawKind !== 0) {
      // Inside raw text the tokenizer only reports the matching end tag.
      if (this.rawKind === K_TITLE && this.capturingTitle) {
        this.titleDone = true;
        this.capturingTitle = false;
      }
      this.rawKind = 0;
      this.separate();
      return;
    }
    const kind = this.kindOf(start, end);
    if (kind === K_NOSCRIPT) {
      if (this.noscriptDepth > 0) this.noscriptDepth--;
    } else if (kind === K_TEMPLATE) {
      if (this.templateDepth > 0) this.templateDepth--;
    } else if (kind === K_SVG) {
      if (this.svgDepth > 0) this.svgDepth--;
    }
    if (kind !== K_INLINE && kind !== K_A) this.separate();
  }

  // Tokens we have no use for.
  oncdata(): void {}
  oncomment(): void {}
  ondeclaration(): void {}
  onprocessinginstruction(): void {}
  onend(): void {}

  title(maxTitleChars: number): string | undefined {
    if (this.titleParts.length === 0) return undefined;
    const title = capChars(collapseWhitespace(this.titleParts.join("")), maxTitleChars);
    return title === "" ? undefined : title;
  }

  visibleText(): string {
    return capChars(this.text, this.maxTextChars);
  }
}

/** Marker for an href attribute too long to be a URL we would keep. */
const OVERLONG = "\u0000overlong";

function bump(counts: Record<string, number>, reason: string, by = 1): void {
  counts[reason] = (counts[reason] ?? 0) + by;
}

/** Base URL for the page: the first <base href> resolved against the page URL when it is http(s). */
function resolveBase(pageUrl: string, baseHref: string | undefined): string {
  if (baseHref === undefined || baseHref === OVERLONG) return pageUrl;
  try {
    const base = new URL(baseHref, pageUrl);
    if (base.protocol === "http:" || base.protocol === "https:") return base.href;
  } catch {
    // an unusable <base> is ignored, as browsers do
  }
  return pageUrl;
}

/**
 * Extract links and page facts from a decoded HTML document, given whole or as consecutive chunks
 * (decodeTextChunks). Never throws; work and output are bounded by the options whatever the input.
 */
export function extractPage(html: string | readonly string[], options: ExtractOptions): Extracted {
  const maxLinks = Math.max(0, options.maxLinks ?? DEFAULT_MAX_LINKS);
  const maxUrlLength = options.maxUrlLength ?? DEFAULT_MAX_URL_LENGTH;
  const maxTextChars = Math.max(0, options.maxTextChars ?? DEFAULT_MAX_TEXT_CHARS);
  const maxTitleChars = Math.max(0, options.maxTitleChars ?? DEFAULT_MAX_TITLE_CHARS);
  const honourNofollow = options.honourNofollow ?? true;

  const collector = new Collector(
    (options.userAgentToken ?? "").toLowerCase(),
    // Raw hrefs kept for resolution: enough that duplicates and junk cannot starve the real links.
    Math.max(maxLinks * 2, maxLinks + 1_000),
    // href values: the normalizer refuses anything over 3x the URL cap anyway.
    Math.max(maxUrlLength * 3, MAX_META_CONTENT_CHARS),
    maxTextChars,
    maxTitleChars,
  );
  const tokenizer = new FastTokenizer({ decodeEntities: true }, collector);
  let parseError: string | undefined;
  try {
    for (const chunk of typeof html === "string" ? [html] : html) {
      if (chunk === "") continue;
      collector.feed(chunk);
      tokenizer.write(chunk);
    }
    tokenizer.end();
  } catch (err) {
    // The tokenizer is total as far as we know; if it ever is not, keep what was collected so far.
    parseError = err instanceof Error ? err.message.slice(0, 200) : "tokenizer failed";
  }

  const pageUrl = normalizeUrl(options.pageUrl) ?? options.pageUrl;
  const baseUrl = resolveBase(options.pageUrl, collector.baseHref);
  const pageNofollow = collector.nofollow || options.headerNofollow === true;

  const baseSansFragment = normalizeUrl("", baseUrl, { maxLength: maxUrlLength });
  const base = baseSansFragment === null ? null : baseParts(baseSansFragment);
  const links: string[] = [];
  const droppedLinks: Record<string, number> = {};
  const seen = new Set<string>();
  const cleanUrl = options.cleanUrl;
  let paramsStripped = 0;
  for (const [href, followable] of collector.hrefs) {
    if (honourNofollow && (pageNofollow || !followable)) {
      bump(droppedLinks, "nofollow");
      continue;
    }
    if (href === OVERLONG) {
      bump(droppedLinks, "too-long");
      continue;
    }
    let url: string;
    if (href.charCodeAt(0) === 0x23 /* # */ && baseSansFragment !== null) {
      // In-page anchors (docs pages have hundreds) all resolve to the base itself: skip the parser.
      url = baseSansFragment;
    } else {
      const plain = base === null ? null : (resolvePlainRelative(href, base) ?? plainAbsolute(href));
      // The href's own length too: one cut at a long fragment is the parser's to refuse as too long.
      const result =
        plain !== null && plain.length <= maxUrlLength && href.length <= maxUrlLength
          ? { ok: true as const, url: plain }
          : normalizeUrlDetailed(href, baseUrl, { maxLength: maxUrlLength });
      if (!result.ok) {
        bump(droppedLinks, result.reason);
        continue;
      }
      url = result.url;
    }
    if (cleanUrl) {
      const clean = cleanUrl(url);
      if (clean !== url) {
        url = clean;
        paramsStripped++;
      }
    }
    if (url === pageUrl) {
      bump(droppedLinks, "self");
    } else if (seen.has(url)) {
      bump(droppedLinks, "duplicate");
    } else if (links.length >= maxLinks) {
      bump(droppedLinks, "cap");
    } else {
      seen.add(url);
      links.push(ownString(url));
    }
  }
  if (collector.hrefsOverCap > 0) bump(droppedLinks, "cap", collector.hrefsOverCap);

  const canonicalHref = collector.canonicalHref;
  const canonical =
    canonicalHref === undefined || canonicalHref === OVERLONG
      ? undefined
      : (normalizeUrl(canonicalHref, baseUrl, { maxLength: maxUrlLength }) ?? undefined);

  const result: Extracted = {
    baseUrl,
    noindex: collector.noindex,
    nofollow: collector.nofollow,
    links,
    droppedLinks,
    text: collector.visibleText(),
    metas: collector.metas,
  };
  const title = collector.title(maxTitleChars);
  if (title !== undefined) result.title = ownString(title);
  if (collector.lang !== undefined) result.lang = ownString(collector.lang);
  if (canonical !== undefined) result.canonical = ownString(cleanUrl ? cleanUrl(canonical) : canonical);
  if (parseError !== undefined) result.parseError = parseError;
  if (paramsStripped > 0) result.paramsStripped = paramsStripped;
  return result;
}
