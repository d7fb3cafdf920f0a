// Change detection on the EXTRACTED text, not the raw HTML, after removing spans that change on
// every load without meaning anything (timestamps, ad slots, session tokens). The rules are
// configurable regular expressions; the defaults cover ISO-8601 date-times and long hex/base64
// tokens. The digest is 64 bits of SHA-1: enough to tell versions of one URL apart, and 8 bytes
// in the per-URL history.
import { createHash } from "node:crypto";

export interface ContentRules {
  /** Regular expression sources; every match is removed from the text before hashing. */
  strip: string[];
}

export const DEFAULT_CONTENT_RULES: ContentRules = {
  strip: [
    "\\b\\d{4}-\\d{2}-\\d{2}[T ]\\d{2}:\\d{2}(?::\\d{2}(?:\\.\\d+)?)?(?:Z|[+-]\\d{2}:?\\d{2})?", // date-times
    "\\b[0-9a-fA-F]{16,}\\b", // hex ids: ad slots, cache busters
    "\\b[A-Za-z0-9_-]*\\d[A-Za-z0-9_-]*[A-Za-z][A-Za-z0-9_-]{22,}\\b", // session / CSRF tokens
  ],
};

export class ContentDigester {
  private readonly res: RegExp[];
  constructor(rules: ContentRules = DEFAULT_CONTENT_RULES) {
    this.res = rules.strip.map((s, i) => {
      try {
        return new RegExp(s, "g");
      } catch (e) {
        throw new Error(`content rules: strip[${i}] "${s}" is not a valid pattern: ${(e as Error).message}`);
      }
    });
  }

  /** The text with every rule's matches removed and whitespace collapsed. */
  normalise(text: string): string {
    let t = text;
    for (const re of this.res) t = t.replace(re, " ");
    return t.replace(/\s+/g, " ").trim();
  }

  /** 16 hex chars (64 bits of SHA-1) of the normalised text. */
  digest(text: string): string {
    return createHash("sha1").update(this.normalise(text), "utf8").digest("hex").slice(0, 16);
  }
}
