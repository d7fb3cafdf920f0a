// The frontier's second entry point, free of Redis: what a parser thread needs to hash its links
// for the seen filter. index.ts loads the Redis client (scripts, stores), which a piscina thread
// must not pay for; everything else outside frontier/ goes through index.ts.
export { BloomHasher } from "./bloom.js";
export { md5Utf8 } from "./md5.js";
export type { BloomParams } from "./bloom.js";
export type { HashedLink } from "./links.js";
