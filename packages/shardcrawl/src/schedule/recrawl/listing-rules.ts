// Listing pages as change detectors: category, search and index pages show many items at once,
// each as a link plus a summary (price, stock, title). A listing visit that finds an item's
// summary changed (or the item new) is a cheap signal that the item page changed, so only those
// items are fetched ahead of their schedule. Rules name the listing URLs and how an item appears:
// either a regular expression with named groups `link` and `summary`, or a small selector (one
// compound selector: tag, #id and .class parts, no combinators) for the item element with an
// optional one for its summary inside it (default: the item's whole text); the item's link is its
// first <a href>. A full CSS engine is not needed for this and would add a dependency to the
// parser process.
import { createHash } from "node:crypto";
import { DomUtils, parseDocument } from "htmlparser2";
import { compileListingRule, matches, type Compound, type ListingRule } from "./listing-rule-check.js";

export interface ListingItem {
  url: string;
  summary: string;
}

/** Items read from one listing page at most (a bounded read of an unbounded page). */
export const MAX_LISTING_ITEMS = 2000;
/** Summaries longer than this are cut (a summary is a short text by design). */
const MAX_SUMMARY_CHARS = 1000;

/** One rule, compiled. */
export class ListingDetector {
  readonly revisitMs: number | undefined;
  private readonly url: RegExp;
  private readonly itemRe: RegExp | undefined;
  private readonly itemSel: Compound | undefined;
  private readonly summarySel: Compound | undefined;

  constructor(rule: ListingRule) {
    const c = compileListingRule(rule);
    this.url = c.url;
    this.itemRe = c.itemRe;
    this.itemSel = c.itemSel;
    this.summarySel = c.summarySel;
    this.revisitMs = c.revisitMs;
  }

  appliesTo(url: string): boolean {
    return this.url.test(url);
  }

  /** The items of a listing page: absolute item URLs (resolved against the page) and their summaries. */
  extract(html: string, pageUrl: string): ListingItem[] {
    const out: ListingItem[] = [];
    const push = (href: string | undefined, summary: string) => {
      if (!href || out.length >= MAX_LISTING_ITEMS) return;
      let url: string;
      try {
        const u = new URL(decodeEntities(href.trim()), pageUrl);
        if (u.protocol !== "http:" && u.protocol !== "https:") return;
        u.hash = "";
        url = u.href;
      } catch {
        return;
      }
      out.push({ url, summary: decodeEntities(summary.replace(/\s+/g, " ").trim()).slice(0, MAX_SUMMARY_CHARS) });
    };
    if (this.itemRe) {
      this.itemRe.lastIndex = 0;
      for (const m of html.matchAll(this.itemRe)) {
        push(m.groups?.link, m.groups?.summary ?? "");
        if (out.length >= MAX_LISTING_ITEMS) break;
      }
      return out;
    }
    const doc = parseDocument(html);
    const sel = this.itemSel as Compound;
    const items = DomUtils.findAll((el) => matches(el, sel), doc.children);
    for (const item of items) {
      const a = DomUtils.findOne((el) => el.name === "a" && typeof el.attribs.href === "string", item.children);
      const sumEl = this.summarySel ? DomUtils.findOne((el) => matches(el, this.summarySel as Compound), item.children) : item;
      push(a?.attribs.href, sumEl ? DomUtils.textContent(sumEl) : "");
      if (out.length >= MAX_LISTING_ITEMS) break;
    }
    return out;
  }
}

const ENTITIES: Record<string, string> = { amp: "&", lt: "<", gt: ">", quot: '"', apos: "'", nbsp: " " };
function decodeEntities(s: string): string {
  return s.replace(/&(#x[0-9a-f]+|#\d+|[a-z]+);/gi, (all, e: string) => {
    if (e[0] === "#") {
      const n = e[1] === "x" || e[1] === "X" ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10);
      return Number.isFinite(n) && n > 0 && n < 0x110000 ? String.fromCodePoint(n) : all;
    }
    return ENTITIES[e.toLowerCase()] ?? all;
  });
}

/** 8-byte digest of a summary (what the listing store keeps per item). */
export function summaryDigest(summary: string): Buffer {
  return createHash("sha1").update(summary).digest().subarray(0, 8);
}

/** The rules, compiled; the first rule whose pattern matches a URL applies. */
export class ListingRules {
  private readonly detectors: ListingDetector[];
  constructor(rules: readonly ListingRule[]) {
    this.detectors = rules.map((r) => new ListingDetector(r));
  }
  get size(): number {
    return this.detectors.length;
  }
  for(url: string): ListingDetector | undefined {
    return this.detectors.find((d) => d.appliesTo(url));
  }
}
