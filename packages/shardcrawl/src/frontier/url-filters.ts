// The trap filters the frontier applies before add_links are the admission chain's (admit/).
export { buildUrlFilters, filterUrl, URL_FILTER_NAMES, type UrlFilter } from "../admit/trap-filters.js";

/** Not the node's defaults (node/config.ts has those): kept for the frontier's own callers. */
export const DEFAULT_URL_FILTERS: readonly string[] = ["max-path-depth=16", "max-repeated-segment=3", "max-query-params=8"];
