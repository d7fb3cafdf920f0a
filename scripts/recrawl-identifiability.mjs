#!/usr/bin/env node
// When can a page's change rate be recovered from "changed since the last visit or not"? (the
// estimator is held to recovering known rates within 25% for pages with >= 20 visits).
// One visit after t days of a page with rate λ is a Bernoulli trial with p = 1 - e^(-λt); its
// Fisher information about log λ is x^2 / (e^x - 1) with x = λt (expected changes between two
// visits): at most 0.648 (x = 1.59), tending to 0 when the page changes far more often than it is
// visited (x >> 1: every visit sees a change, only a lower bound) and like x when it changes far
// less often (x << 1: the information is in the few changes seen). The Cramér-Rao bound then
// says how often ANY unbiased estimator lands within 25% after n visits; this script prints it
// next to what our estimator (its MLE, with a flat prior) does on simulated visits.
//
//   node scripts/recrawl-identifiability.mjs [--trials 4000]
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), "..");
const R = await import(join(ROOT, "packages/shardcrawl/dist/schedule/recrawl/index.js"));
const { values: args } = parseArgs({ options: { trials: { type: "string", default: "4000" } } });
const trials = Number(args.trials);

let seed = 12345;
const rnd = () => {
  seed = (seed + 0x6d2b79f5) >>> 0;
  let t = seed;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
};
// Standard normal CDF (Abramowitz-Stegun 26.2.17).
const phi = (z) => {
  const t = 1 / (1 + 0.2316419 * Math.abs(z));
  const d = 0.3989423 * Math.exp((-z * z) / 2);
  const p = d * t * (0.3193815 + t * (-0.3565638 + t * (1.781478 + t * (-1.821256 + t * 1.330274))));
  return z > 0 ? 1 - p : p;
};
const LO = Math.log(0.75), HI = Math.log(1.25);
const flat = { shape: 1, rate: 0 }; // the likelihood alone

const pct = (x) => (100 * x).toFixed(0) + "%";
console.log("x = λ·interval (expected changes between visits); cells: share of pages estimated within 25%");
console.log("(Cramér-Rao prediction for an efficient unbiased estimator / our MLE on simulated visits)\n");
const ns = [20, 50, 100, 200];
console.log(`| x | info/visit | ${ns.map((n) => `n = ${n}`).join(" | ")} |`);
console.log(`| --- | --- | ${ns.map(() => "---").join(" | ")} |`);
for (const x of [0.02, 0.05, 0.1, 0.3, 1, 1.6, 3, 5, 8]) {
  const info = (x * x) / Math.expm1(x);
  const cells = ns.map((n) => {
    const se = 1 / Math.sqrt(n * info);
    const crb = phi(HI / se) - phi(LO / se);
    let ok = 0;
    for (let k = 0; k < trials; k++) {
      const h = R.emptyHistory();
      for (let i = 0; i < n; i++) R.observe(h, x, rnd() < -Math.expm1(-x)); // λ = 1/day, interval x days
      const est = R.estimateRate(h, flat);
      if (Math.abs(est - 1) <= 0.25) ok++;
    }
    return `${pct(crb)} / ${pct(ok / trials)}`;
  });
  console.log(`| ${x} | ${info.toFixed(3)} | ${cells.join(" | ")} |`);
}
const need = (share) => {
  // smallest n with CRB share >= `share` at the best spacing (x = 1.59)
  const info = (1.59 * 1.59) / Math.expm1(1.59);
  for (let n = 1; n < 100_000; n++) {
    const se = 1 / Math.sqrt(n * info);
    if (phi(HI / se) - phi(LO / se) >= share) return n;
  }
  return Infinity;
};
console.log(`\nvisits needed at the best spacing (x = 1.59) for 50% / 90% / 95% of pages within 25%: ${need(0.5)} / ${need(0.9)} / ${need(0.95)}`);
