// Import boundaries of packages/shardcrawl/src (used by eslint.config.js; tested on fixtures in
// packages/shardcrawl/test/lint-boundaries.test.ts):
// - frontier/ owns the node's Redis state: from outside, it is entered through frontier/index.ts
//   (or frontier/hashing.ts, its Redis-free part for parser threads), never a file behind it.
// - stages import downward only: the stages below node/ (url, fetch, store, frontier, schedule,
//   shard, parse, admit, shared) never import node/ (process wiring) or cli/ (commands).
const SRC = "packages/shardcrawl/src";
const LOWER = ["url", "fetch", "store", "schedule", "shard", "parse", "admit", "shared"];

const frontierEntry = {
  group: ["**/frontier/*", "!**/frontier/index.js", "!**/frontier/hashing.js"],
  message: "Import the frontier through frontier/index.js (or frontier/hashing.js in parser threads): frontier/ is the only owner of the node's Redis state.",
};
const downwardOnly = {
  group: ["**/node/*", "**/cli/*", "**/cli/**/*"],
  message: "A stage below node/ must not import node/ or cli/: pass what it needs in (an interface or a function).",
};

export const boundaries = [
  {
    files: [`${SRC}/**/*.ts`],
    ignores: [`${SRC}/frontier/**`, ...LOWER.map((d) => `${SRC}/${d}/**`)],
    rules: { "no-restricted-imports": ["error", { patterns: [frontierEntry] }] },
  },
  {
    files: LOWER.map((d) => `${SRC}/${d}/**/*.ts`),
    rules: { "no-restricted-imports": ["error", { patterns: [frontierEntry, downwardOnly] }] },
  },
  {
    files: [`${SRC}/frontier/**/*.ts`],
    rules: { "no-restricted-imports": ["error", { patterns: [downwardOnly] }] },
  },
];
