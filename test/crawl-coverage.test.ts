// The coverage crawl: one node crawls a simweb of 200 hosts and 20,000+ reachable pages (about 17,000
// expected once hosts asking a Crawl-delay above the cap are skipped) with --scope domains, parsing
// inline on the parser's main thread as a node does by default (the piscina pool behind
// --parser-threads has its own, smaller crawl: crawl-parser-threads.test.ts). What is proven, from
// simweb's own request log and our output: harness/coverage-crawl.ts.
import { coverageCrawlSuite } from "./harness/coverage-crawl.js";

coverageCrawlSuite("coverage crawl of 200 hosts", {
  name: "coverage",
  seed: 11,
  hosts: 200,
  pagesPerHost: { min: 45, alpha: 1.2, max: 180 },
  crawlArgs: [],
  // 20,000+ reachable pages, less those of hosts asking a Crawl-delay above the cap (skipped).
  minExpected: 16_000,
  timeoutMs: 900_000,
});
