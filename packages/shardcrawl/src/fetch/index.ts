// The fetch stage's building blocks: HTTP client, SSRF guard, host mapping and robots.txt.
export * from "./connect-to.js";
export * from "./dns-cache.js";
export * from "./fetch-errors.js";
export * from "./connection-stats.js";
export { SsrfBlockedError, type ConnectPhase, type ConnectionCounters } from "./guarded-connector.js";
export * from "./http-client.js";
export * from "./robots.js";
export * from "./ssrf.js";
