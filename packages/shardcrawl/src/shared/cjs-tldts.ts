// tldts, loaded with require() rather than import: it is one large CommonJS file (the public suffix
// list), which Node's cjs-module-lexer would scan whole for named exports when imported from an ES
// module: 55 ms of CPU by import against 15 by require (node 20), in every process.
import { createRequire } from "node:module";
import type * as Tldts from "tldts";

const tldts = createRequire(import.meta.url)("tldts") as typeof Tldts;

export const getDomain = tldts.getDomain;
