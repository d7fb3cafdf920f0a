// The environment variable that carries a node's config (JSON) from the supervisor to its children.
// Its own module so that a child reads its config without loading the schema and validators
// (zod and the re-crawl rules: ~100 ms of CPU per process start).
export const CONFIG_ENV = "SHARDCRAWL_CONFIG";
