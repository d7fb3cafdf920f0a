// The trap filters the frontier applies before add_links are the admission chain's (admit/).
export { buildUrlFilters, filterUrl, URL_FILTER_NAMES, type UrlFilter } from "../admit/trap-filters.js";

