// pino, loaded with require() rather than import: a CommonJS package imported from an ES module is
// scanned by Node's cjs-module-lexer for named exports first: 41 ms of CPU by import against 31 by
// require (node 20), in every process.
import { createRequire } from "node:module";
import type * as Pino from "pino";

export const pino = (createRequire(import.meta.url)("pino") as typeof Pino).pino;
export type { Logger, LevelWithSilent } from "pino";
