// Admission: which URLs enter this node's crawl, as one ordered chain of named filters.
export type { AdmissionFilter, FilterName, Refusal, Verdict } from "./verdict.js";
export { AdmissionChain } from "./chain.js";
export { AdmissionCounts, processAdmissionCounts, takeAdmissionFields, type AdmissionDelta } from "./admission-counts.js";
export { BatchAdmission, type AdmittedBatch, type BatchAdmissionParts, type ExclusionSource } from "./batch-admission.js";
export { buildAdmissionChain, CHAIN_ORDER, FETCH_TIME_ORDER } from "./build-chain.js";
export { ScopeFilter, scopeKeyOf, scopeSpecOf, type ScopeSpec } from "./scope-filter.js";
export { TrapFilter, buildUrlFilters, filterUrl, URL_FILTER_NAMES, type UrlFilter } from "./trap-filters.js";
export { ExclusionFilter, exclusionRefusal, type ExclusionMatcher } from "./exclusion-filter.js";
export { ShardFilter } from "./shard-filter.js";
export { HostBudgetFacts, DomainHostsFacts, hostBudgetRefusal, domainHostsRefusal } from "./lua-decided.js";
export { robotsRefusal, type RobotsView } from "./fetch-time.js";
export { refusalsByFilter, admissionTimings } from "./refusal-counters.js";
