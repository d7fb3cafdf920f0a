// One node's Redis state: host queues, ready schedule, leases, seen filter, robots cache, parse
// queue and counters. See keys.ts for the keyspace and lua/ for the atomic operations.
export { affinityGraceMs, DEFAULT_FLOW, Frontier, MAX_LINKS_PER_CALL } from "./frontier.js";
export type {
  AddLinksResult, FlowSettings, FrontierOptions, FrontierStats, HostFeedback, HostLimits, HostPressure, HostState, LeaseBatch, LeaseBlock, LeaseRef, RequeueOptions,
} from "./frontier.js";
export { ParseQueue, MAX_BLOCK_MS } from "./parse-queue.js";
export type { AckResult, TakenPage } from "./parse-queue.js";
export { RobotsCache, MAX_ROBOTS_BODY_CHARS, DEFAULT_ROBOTS_CACHE_MAX_BYTES, robotsCacheMaxBytes } from "./robots-cache.js";
export type { RobotsCacheEntry, RobotsVerdict } from "./robots-cache.js";
export { RobotsOutages, DEFERRED_LIST_MAX, parseOutage } from "./robots-outages.js";
export type { DeferredHost } from "./robots-outages.js";
export { BloomHasher, bloomParamsFor, BLOOM_SCHEME, BLOOM_SCHEME_BLOCKED, DEFAULT_BLOOM_SEED, DEFAULT_SEGMENT_BITS } from "./bloom.js";
export type { BloomParams, BloomSizing, BloomStatus } from "./bloom.js";
export { BLOOM_WARN_RATIO, bloomStages, bloomStatusOf } from "./bloom.js";
export { FrontierKeys, DEFAULT_PREFIX } from "./keys.js";
export { splitOrigin, encodeSuffix, decodeElement } from "./element.js";
export type { HashedLink, QueueCaps } from "./links.js";
export { MAX_QUEUED_URL_LENGTH } from "./links.js";
export { MAX_QUEUED_BODY_BYTES } from "./page-codec.js";
export type { SpooledPage } from "./page-codec.js";
export { SpillStore, DEFAULT_SPILL } from "./spill-store.js";
export type { SpillSettings, SpillCounts } from "./spill-store.js";
export { MemoryGovernor, redisUsedMemory } from "./memory-governor.js";
export type { MemoryBudget, GovernorReading } from "./memory-governor.js";
export { Scripts, SCRIPT_FILES } from "./scripts.js";
export type { ScriptArg, ScriptName } from "./scripts.js";
export { handOverQueues, elementUrl } from "./queue-handover.js";
export type { HandoverCounts, QueuedUrl } from "./queue-handover.js";
export { CrawlScopeStore } from "./crawl-scope.js";
export { shareFetchTimes } from "./fetch-times.js";
export { DEFAULT_SEEN_CACHE_ENTRIES, SeenCache } from "./seen-cache.js";
export { ExclusionList, ExclusionSet, parseExclusionPattern, EXCLUSIONS_REFRESH_MS } from "./exclusions.js";
export type { Exclusion } from "./exclusions.js";
export { purgeExcluded } from "./exclusion-purge.js";
export { initBloom } from "./bloom.js";
export { packBloomProbe, writePositions } from "./links.js";
