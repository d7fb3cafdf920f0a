// @shardcrawl/simweb: a deterministic synthetic web for tests, benchmarks and the demo crawl.
export const VERSION = "0.1.0";

export type { SimwebConfig, PresetName, RobotsKind, Behaviour } from "./config.js";
export { presets, makeConfig, DEFAULT_CONFIG, ROBOTS_KINDS, BEHAVIOURS, HOSTILE_BEHAVIOURS, ConfigError } from "./config.js";
export type { HostInfo, HostModel, PageSpec, LinkSpec, LinkKind, Resource, Scheme, Charset, PageKind } from "./world.js";
export { World } from "./world.js";
export type { ExpectedOptions, ExpectedResult, Scope } from "./expected.js";
export type { Clock } from "./clock.js";
export { RealClock, SimClock, ScaledClock } from "./clock.js";
export type { StartOptions, RunningSimweb } from "./server.js";
export { startSimweb } from "./server.js";
export type { LogEntry } from "./log.js";
export type { VerifyOptions, VerifyReport } from "./verify.js";
export { verifyLog } from "./verify.js";
export { canonicalUrl, decodeUnreservedPercent } from "./normalize.js";
export type { ChangeSpec, Churn } from "./change.js";
export { RealWeb, startRealweb, DEFAULT_REALWEB, type RealwebOptions, type RealwebStats, type RunningRealweb } from "./realweb.js";
export { Listings, DEFAULT_LISTINGS, type ListingsConfig } from "./listings.js";
