// ioredis, loaded with require() rather than import. Imported from an ES module, a CommonJS package
// is first read by Node's cjs-module-lexer to find its named exports, following every file it
// re-exports: 124 ms of CPU by import against 74 by require (node 20), in every process, for
// names we can read off the module object. Same module instance either way (one require cache).
import { createRequire } from "node:module";
import type * as IORedis from "ioredis";

const ioredis = createRequire(import.meta.url)("ioredis") as typeof IORedis;

export const Redis = ioredis.Redis;
export type Redis = IORedis.Redis;
export const Command = ioredis.Command;
export type Command = IORedis.Command;
