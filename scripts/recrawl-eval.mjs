#!/usr/bin/env node
// Re-crawl evaluation in SIMULATED time: simweb's World in-process gives the ground
// truth of page changes (version stamps move with content only; timestamp/ad churn does not count),
// and four revisit policies spend the same budget (visits per page per day) from the same initial
// copies: uniform, proportional to the true change rate, ours (shardcrawl's RecrawlScheduler with
// rates learned from its own "changed or not" visits), and the oracle (Cho & Garcia-Molina 2003
// Lagrangian optimum with the true rates). Freshness is measured after the warm-up.
// Both objectives: "freshness" (time-averaged share of fresh copies) and "changes" (share of the
// content changes a visit captured, when every change matters): ours and the oracle run once per
// objective, and every row reports both measures.
//
//   node scripts/recrawl-eval.mjs [--hosts 150] [--days 42] [--warmup-days 14] [--budget 1]
//                                 [--seed 7] [--out bench-results/recrawl-eval.json] [--check]
//                                 [--prior lognormal|gamma]   (the estimator's per-group prior)
import { mkdirSync, writeFileSync } from "node:fs";
import { cpus } from "node:os";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const { World, makeConfig } = await import(join(ROOT, "packages/simweb/dist/index.js"));
const R = await import(join(ROOT, "packages/shardcrawl/dist/schedule/recrawl/index.js"));

const { values: args } = parseArgs({
  options: {
    hosts: { type: "string", default: "150" },
    days: { type: "string", default: "42" },
    "warmup-days": { type: "string", default: "14" },
    budget: { type: "string", default: "1" },
    seed: { type: "string", default: "7" },
    out: { type: "string", default: "bench-results/recrawl-eval.json" },
    check: { type: "boolean", default: false },
    prior: { type: "string", default: "lognormal" },
  },
});
const num = (name) => {
  const v = Number(args[name]);
  if (!Number.isFinite(v) || v <= 0) {
    console.error(`recrawl-eval: --${name} must be a positive number, got "${args[name]}"`);
    process.exit(2);
  }
  return v;
};
const hosts = num("hosts"), days = num("days"), warmupDays = num("warmup-days"), budgetPerPage = num("budget"), seed = num("seed");
if (warmupDays >= days) {
  console.error("recrawl-eval: --warmup-days must be below --days");
  process.exit(2);
}

const MIN = 60_000, DAY = 86_400_000;
const config = makeConfig({
  preset: "tiny", seed, hosts,
  // rates spread log-uniformly from one change per 5 minutes to one per year; 10% never change
  change: { staticShare: 0.1, minIntervalMs: 5 * MIN, maxIntervalMs: 365 * DAY, churnShare: 0.2 },
});
const world = new World(config);
const t0 = config.timeOriginMs;

// Value tiers from URL-pattern rules (a business decision; these are an example).
const tiers = new R.ValueTiers({ rules: [{ pattern: "/products", tier: 0 }, { pattern: "/(news|reviews|blog)", tier: 1 }], defaultTier: 2, weights: [4, 2, 1] });
const pages = [];
for (let i = 0; i < world.hostCount(); i++) {
  const h = world.model(i);
  for (let id = 0; id < h.info.pageCount; id++) {
    const p = world.page(h, id);
    pages.push({ url: p.url, host: h.info.name, value: tiers.weightOf(tiers.tierOf(p.url)) });
  }
}
const truth = {
  versionAt: (url, t) => world.pageVersionAt(url, t),
  changeTimes: (url, a, b) => world.changeTimes(url, a, b),
  ratePerDay: (url) => world.changeRate(url).perDay,
};
const budget = budgetPerPage * pages.length;
const win = { t0Ms: t0, warmupMs: warmupDays * DAY, endMs: days * DAY };
console.log(`recrawl-eval: ${pages.length} pages on ${hosts} hosts, budget ${budgetPerPage} visit/page/day (${budget}/day), ${days} simulated days, measured after ${warmupDays}`);

const rows = [];
const time = (name, fn) => {
  const s = performance.now();
  const r = fn();
  rows.push({ policy: name, ...r, seconds: (performance.now() - s) / 1000 });
  return r;
};
time("uniform", () => R.runFixedFrequencies(truth, pages, R.uniformFrequencies(pages, budget), win));
time("proportional (true rates)", () => R.runFixedFrequencies(truth, pages, R.proportionalFrequencies(truth, pages, budget), win));
if (!["lognormal", "gamma"].includes(args.prior)) {
  console.error(`recrawl-eval: --prior must be lognormal or gamma, got "${args.prior}"`);
  process.exit(2);
}
const schedConfig = { prior: args.prior };
const ours = time("ours (learned rates, values)", () => R.runLearned(truth, pages, budget, win, schedConfig, true));
const oursFlat = time("ours (learned rates, no values)", () => R.runLearned(truth, pages, budget, win, schedConfig, false));
time("oracle (true rates, values)", () => R.runFixedFrequencies(truth, pages, R.oracleFrequencies(truth, pages, budget, true), win));
time("oracle (true rates, no values)", () => R.runFixedFrequencies(truth, pages, R.oracleFrequencies(truth, pages, budget, false), win));
// The "changes" objective: a page at most once per 15-min cycle (the scheduler's politeness cap).
const MAX_PER_DAY = DAY / (15 * MIN);
const oursChanges = time("ours, objective changes (learned rates, values)", () => R.runLearned(truth, pages, budget, win, { ...schedConfig, objective: "changes" }, true));
time("oracle, objective changes (true rates, values)", () => R.runFixedFrequencies(truth, pages, R.oracleFrequencies(truth, pages, budget, true, "changes", MAX_PER_DAY), win));

const pct = (x) => (100 * x).toFixed(1) + "%";
console.log("\n| policy | freshness | value-weighted freshness | changes captured | value-weighted changes captured | visits/page/day (measured) | run s |");
console.log("| --- | --- | --- | --- | --- | --- | --- |");
for (const r of rows) console.log(`| ${r.policy} | ${pct(r.freshness)} | ${pct(r.valueWeighted)} | ${pct(r.capturedShare)} | ${pct(r.capturedValueShare)} | ${r.visitsPerPageDay.toFixed(3)} | ${r.seconds.toFixed(1)} |`);

// Estimator: pages with >= 20 observations, by true-rate band.
const est = ours.estimates.filter((e) => e.observations >= 20 && e.trueRate > 0);
const relErr = (e) => Math.abs(e.estimate - e.trueRate) / e.trueRate;
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); return s.length ? s[Math.floor(s.length / 2)] : NaN; };
const within25 = est.filter((e) => relErr(e) <= 0.25).length;
console.log(`\nestimator: ${est.length} changing pages with >= 20 observations; median relative error ${pct(median(est.map(relErr)))}, within 25%: ${pct(within25 / Math.max(1, est.length))}`);
const bands = [[0, 0.1], [0.1, 1], [1, 10], [10, Infinity]];
for (const [a, b] of bands) {
  const sel = est.filter((e) => e.trueRate >= a && e.trueRate < b);
  if (sel.length) console.log(`  true rate ${a}..${b}/day: ${sel.length} pages, median rel. error ${pct(median(sel.map(relErr)))}, within 25% ${pct(sel.filter((e) => relErr(e) <= 0.25).length / sel.length)}`);
}
// Identifiable from the visits themselves: some changes AND some unchanged visits. A page that
// changed at every visit only bounds its rate from below; one that changed once or twice over
// the run has too few events for any estimator (the information is in changes, not visits).
const ident = est.filter((e) => e.changes >= 5 && e.observations - e.changes >= 5);
console.log(`  identifiable (>= 5 changed and >= 5 unchanged visits): ${ident.length} pages, median rel. error ${pct(median(ident.map(relErr)))}, within 25% ${pct(ident.filter((e) => relErr(e) <= 0.25).length / Math.max(1, ident.length))}`);
// How well could ANY estimator know each rate from the visits it got? The Cramér-Rao bound on the
// standard error of log λ is 1 / (λ √I), I = Σ t²/(e^(λt) - 1) over the page's intervals (see
// scripts/recrawl-identifiability.mjs): "identifiable to 25%" = an efficient estimator lands
// within 25% with probability >= 90%. The expected share within 25% of an efficient estimator
// over all pages with >= 20 observations is the fair yardstick for ours.
const phi = (z) => {
  const t = 1 / (1 + 0.2316419 * Math.abs(z));
  const d = 0.3989423 * Math.exp((-z * z) / 2);
  const p = d * t * (0.3193815 + t * (-0.3565638 + t * (1.781478 + t * (-1.821256 + t * 1.330274))));
  return z > 0 ? 1 - p : p;
};
const crbShare = (e) => {
  if (!(e.fisherInfo > 0)) return 0;
  const se = 1 / (e.trueRate * Math.sqrt(e.fisherInfo));
  return phi(Math.log(1.25) / se) - phi(Math.log(0.75) / se);
};
const efficient = est.reduce((a, e) => a + crbShare(e), 0) / Math.max(1, est.length);
const crbIdent = est.filter((e) => crbShare(e) >= 0.9);
const crbWithin = crbIdent.filter((e) => relErr(e) <= 0.25).length / Math.max(1, crbIdent.length);
console.log(`  Cramér-Rao: an efficient estimator would put ${pct(efficient)} of these ${est.length} pages within 25% (ours: ${pct(within25 / Math.max(1, est.length))})`);
console.log(`  identifiable to 25% by Cramér-Rao (efficient estimator within 25% with p >= 90%): ${crbIdent.length} pages, ours within 25%: ${pct(crbWithin)}, median rel. error ${pct(median(crbIdent.map(relErr)))}`);
const v = ours.validation;
console.log(`validation sample: ${v.visits} visits, predicted ${v.predictedChanges.toFixed(1)} changes, observed ${v.observedChanges}, Brier ${v.brier.toFixed(3)}`);
console.log(`visits by reason (ours): ${JSON.stringify(ours.visitsByReason)}`);

const byName = Object.fromEntries(rows.map((r) => [r.policy, r]));
const oracleV = byName["oracle (true rates, values)"], oracleF = byName["oracle (true rates, no values)"];
const oracleC = byName["oracle, objective changes (true rates, values)"];
const checks = [
  ["ours beats uniform (value-weighted)", ours.valueWeighted > byName.uniform.valueWeighted],
  ["ours beats proportional (value-weighted)", ours.valueWeighted > byName["proportional (true rates)"].valueWeighted],
  [`ours >= 90% of oracle, value-weighted (${pct(ours.valueWeighted / oracleV.valueWeighted)})`, ours.valueWeighted >= 0.9 * oracleV.valueWeighted],
  ["ours (no values) beats uniform and proportional", oursFlat.freshness > byName.uniform.freshness && oursFlat.freshness > byName["proportional (true rates)"].freshness],
  [`ours (no values) >= 90% of oracle freshness (${pct(oursFlat.freshness / oracleF.freshness)})`, oursFlat.freshness >= 0.9 * oracleF.freshness],
  [`estimator: median error <= 25% for identifiable pages with >= 20 observations (${pct(median(ident.map(relErr)))})`, median(ident.map(relErr)) <= 0.25],
  [`estimator: >= 85% within 25% for pages whose visits identify the rate to 25% (Cramér-Rao; ${pct(crbWithin)} of ${crbIdent.length})`, crbWithin >= 0.85],
  [`changes objective: ours captures more value-weighted changes than ours under freshness (${pct(oursChanges.capturedValueShare)} vs ${pct(ours.capturedValueShare)})`, oursChanges.capturedValueShare > ours.capturedValueShare],
  [`changes objective: ours beats uniform on value-weighted changes captured`, oursChanges.capturedValueShare > byName.uniform.capturedValueShare],
  [`changes objective: ours >= 80% of its oracle's value-weighted changes captured (${pct(oursChanges.capturedValueShare / oracleC.capturedValueShare)})`, oursChanges.capturedValueShare >= 0.8 * oracleC.capturedValueShare],
];
console.log("\nchecks:");
for (const [name, ok] of checks) console.log(`  ${ok ? "PASS" : "FAIL"} ${name}`);

const out = resolve(ROOT, args.out);
mkdirSync(dirname(out), { recursive: true });
writeFileSync(out, JSON.stringify({
  machine: { cpus: cpus().length, model: cpus()[0]?.model, node: process.version },
  params: { hosts, pages: pages.length, days, warmupDays, budgetPerPage, seed, prior: args.prior },
  rows: rows.map(({ estimates: _e, validation: _v, visitsByReason: _r, ...r }) => r),
  estimator: { pages: est.length, medianRelError: median(est.map(relErr)), within25: within25 / Math.max(1, est.length), identifiable: ident.length, identifiableMedianRelError: median(ident.map(relErr)), efficientWithin25: efficient, crbIdentifiable: crbIdent.length, crbIdentifiableWithin25: crbWithin },
  validation: v, visitsByReason: ours.visitsByReason, visitsByReasonChanges: oursChanges.visitsByReason,
  checks: checks.map(([name, ok]) => ({ name, ok })),
}, null, 2));
console.log(`\nresults: ${out}`);
if (args.check && checks.some(([, ok]) => !ok)) process.exit(1);
