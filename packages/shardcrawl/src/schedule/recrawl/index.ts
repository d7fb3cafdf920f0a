// Continuous, cost-aware re-crawl: change-rate estimation, freshness arithmetic, the Lagrangian
// optimum, value tiers, visit costs, the budgeted scheduler, validator tracking, content digests,
// the simulated-time evaluation and the per-URL history in Redis.
export * from "./poisson.js";
export * from "./estimator.js";
export * from "./optimum.js";
export * from "./value.js";
export * from "./cost.js";
export * from "./content-rules.js";
export * from "./validators.js";
export * from "./scheduler.js";
export * from "./simulate.js";
export * from "./http-revisit.js";
export * from "./history-codec.js";
export * from "./history-store.js";
export * from "./record-response.js";
export * from "./sitemap.js";
export * from "./due-store.js";
export * from "./feeds.js";
export * from "./listing-rules.js";
export * from "./listing-rule-check.js";
export * from "./path-code.js";
