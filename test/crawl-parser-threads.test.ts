// The parse stage in a piscina pool (--parser-threads 2) instead of the default inline parsing: the
// worker threads hash links themselves and hand back transferred buffers, a different path from the
// inline one that crawl-coverage.test.ts proves. A smaller web, the same proofs
// (harness/coverage-crawl.ts).
import { coverageCrawlSuite } from "./harness/coverage-crawl.js";

coverageCrawlSuite("a crawl parsed by a piscina pool (--parser-threads 2)", {
  name: "parser-threads",
  seed: 23,
  hosts: 24,
  pagesPerHost: { min: 20, alpha: 1.2, max: 60 },
  crawlArgs: ["--parser-threads", "2"],
  minExpected: 200,
  timeoutMs: 600_000,
});
