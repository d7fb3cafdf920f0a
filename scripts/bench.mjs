#!/usr/bin/env node
// `pnpm bench`: the benchmark suite. Runs each bench as its own process (results as JSON under
// bench-results/), then rewrites the crawler section of BENCHMARKS.md from those files.
//   node scripts/bench.mjs [--mode quick|full] [--only parse,links,derivatives,crawl,crawl-broad,profile,scale,crawl-scale] [--report-only]
// quick: minutes, for development; full: the record (more pages, more repeats, 1e7-URL frontier).
// The simweb serving benchmark stays separate: node scripts/bench-simweb.mjs.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { ROOT, RESULTS_DIR } from "./bench/common.mjs";
import { writeReport } from "./bench/report.mjs";

const { values: a } = parseArgs({ options: {
  mode: { type: "string", default: "quick" }, only: { type: "string", default: "parse,links,derivatives,crawl,crawl-broad,profile,scale,crawl-scale" }, "report-only": { type: "boolean", default: false },
} });
if (a.mode !== "quick" && a.mode !== "full") throw new Error(`--mode must be quick or full, got ${a.mode}`);

const SUITES = {
  parse: ["scripts/bench/parse.mjs"],
  links: ["scripts/bench/links.mjs"],
  // WET, WAT and Parquet index writing on the parse bench's real pages.
  derivatives: ["scripts/bench/derivatives.mjs"],
  crawl: ["scripts/bench/crawl.mjs"],
  // The real pages on 792 hosts, 40,000 pages per run: a broad crawl, ~1 M URLs queued by the end.
  "crawl-broad": ["scripts/bench/crawl.mjs", "--webs", "real-broad", "--reps", "1", "--skip-peers"],
  // A separate, profiled crawl (profiling slows it down, so it is never the measured run).
  profile: ["scripts/bench/crawl.mjs", "--profile", "--skip-peers", "--reps", "1", "--webs", "real"],
  scale: ["scripts/bench/frontier-scale.mjs"],
  // A whole crawl while the frontier grows by decades (full: 10^5 hosts, 10^4 -> 10^7 URLs).
  "crawl-scale": ["scripts/bench/crawl-scale.mjs"],
};
if (!a["report-only"]) {
  for (const name of a.only.split(",")) {
    const suite = SUITES[name];
    if (!suite) throw new Error(`unknown suite ${name} (have ${Object.keys(SUITES).join(", ")})`);
    const out = join(RESULTS_DIR, `${name}-${a.mode}.json`);
    console.error(`== ${name} (${a.mode})`);
    const r = spawnSync(process.execPath, [join(ROOT, suite[0]), ...suite.slice(1), "--mode", a.mode, "--out", out], { stdio: "inherit", cwd: ROOT });
    if (r.status !== 0) {
      console.error(`bench ${name} failed (exit ${r.status})`);
      process.exitCode = 1;
    }
  }
}
writeReport(a.mode);
