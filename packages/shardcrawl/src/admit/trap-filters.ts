// Spider-trap defences: small URL filters listed in configuration, run in order, the first that
// refuses a URL names the reason. They look at one URL only; the per-host page budget needs the
// host's count and lives in Lua (admit/lua-decided.ts).
//
// Configuration: a list of "name=value" strings, e.g.
//   ["max-path-depth=32", "max-repeated-segment=4", "max-query-params=12", "max-url-length=1024"]
import type { AdmissionFilter, Refusal } from "./verdict.js";

/**
 * A trap filter returns undefined to pass a URL, or the reason it refuses it (a counter name). The
 * URL's path shape comes with it: the filters run on every link a page sends, so the path is
 * scanned once for all of them (filterUrl).
 */
export type UrlFilter = (url: string, path: PathShape) => string | undefined;

/** Where the path of a normalized absolute URL lies and how many non-empty segments it has. */
export interface PathShape {
  /** Index of the path's first '/' (start === end when there is no path). */
  start: number;
  /** Index of the '?' or '#' after the path, or the URL's length. */
  end: number;
  /** Non-empty path segments. */
  segments: number;
}

/** The path shape in one pass over the URL (no slicing). */
export function pathShape(url: string): PathShape {
  const scheme = url.indexOf("://");
  const n = url.length;
  let i = scheme < 0 ? 0 : scheme + 3;
  while (i < n && url.charCodeAt(i) !== 0x2f /* / */) i++;
  if (i >= n) return { start: 0, end: 0, segments: 0 };
  const start = i;
  let segments = 0;
  let inSegment = false;
  for (; i < n; i++) {
    const c = url.charCodeAt(i);
    if (c === 0x3f /* ? */ || c === 0x23 /* # */) break;
    const slash = c === 0x2f;
    if (!slash && !inSegment) segments++;
    inSegment = !slash;
  }
  return { start, end: i, segments };
}

const FACTORIES: Record<string, (n: number) => UrlFilter> = {
  /** More than n path segments: /a/b/c/... generated without end. */
  "max-path-depth": (n) => (_url, path) => (path.segments > n ? "path-depth" : undefined),
  /** One segment repeated more than n times: /x/y/x/y/x/y relative-link loops, calendars. */
  "max-repeated-segment": (n) => (url, path) => {
    // A path of at most n segments cannot repeat one more than n times (most URLs): no split.
    if (path.segments <= n) return undefined;
    const counts = new Map<string, number>();
    for (const s of url.slice(path.start, path.end).split("/")) {
      if (s.length === 0) continue;
      const c = (counts.get(s) ?? 0) + 1;
      if (c > n) return "repeated-segment";
      counts.set(s, c);
    }
    return undefined;
  },
  /** More than n query parameters: faceted search, tracking and session permutations. */
  "max-query-params": (n) => (url) => {
    const q = url.indexOf("?");
    if (q < 0) return undefined;
    const h = url.indexOf("#", q);
    const end = h < 0 ? url.length : h;
    if (end === q + 1) return undefined;
    // Parameters = "&" separators + 1, counted in place.
    let params = 1;
    for (let i = q + 1; i < end; i++) if (url.charCodeAt(i) === 0x26 /* & */ && ++params > n) return "query-params";
    return undefined;
  },
  "max-url-length": (n) => (url) => (url.length > n ? "url-length" : undefined),
};

export const URL_FILTER_NAMES = Object.keys(FACTORIES);

/** Builds the trap filters; throws a RangeError naming the bad entry. */
export function buildUrlFilters(specs: readonly string[]): UrlFilter[] {
  return specs.map((spec) => {
    const m = /^([a-z-]+)=(\d{1,9})$/.exec(spec.trim());
    if (!m) throw new RangeError(`url filter ${JSON.stringify(spec)}: expected name=number (names: ${URL_FILTER_NAMES.join(", ")})`);
    const make = FACTORIES[m[1]!];
    if (!make) throw new RangeError(`url filter ${JSON.stringify(spec)}: unknown filter (names: ${URL_FILTER_NAMES.join(", ")})`);
    const n = Number(m[2]);
    if (n < 1) throw new RangeError(`url filter ${JSON.stringify(spec)}: the limit must be >= 1`);
    return make(n);
  });
}

/** Runs the trap filters: the first refusal wins. */
export function filterUrl(filters: readonly UrlFilter[], url: string): string | undefined {
  if (filters.length === 0) return undefined;
  const path = pathShape(url);
  for (const f of filters) {
    const r = f(url, path);
    if (r !== undefined) return r;
  }
  return undefined;
}

/** The configured trap filters as one filter of the admission chain. */
export class TrapFilter implements AdmissionFilter {
  readonly name = "trap" as const;
  private readonly filters: UrlFilter[];

  constructor(specs: readonly string[]) {
    this.filters = buildUrlFilters(specs);
  }

  get empty(): boolean {
    return this.filters.length === 0;
  }

  check(url: string): Refusal | undefined {
    const r = filterUrl(this.filters, url);
    return r === undefined ? undefined : { filter: "trap", reason: `trap:${r}`, detail: `refused by the URL filter ${r} (spider-trap defence)`, counter: `filtered:${r}` };
  }
}
