// tldts, loaded with require() rather than import: it is one large CommonJS file (the public suffix
// list), which Node's cjs-module-lexer would scan whole for named exports when imported from an ES
// module, ~40 ms of CPU in every process start (node 20; scripts/bench/startup.mjs).
import { createRequire } from "node:module";
import type * as Tldts from "tldts";

const tldts = createRequire(import.meta.url)("tldts") as typeof Tldts;

export const getDomain = tldts.getDomain;
