// A short form of scripts/recrawl-eval.mjs (the long form is the benchmark): simweb's World gives
// the ground truth of content changes, and at the same budget our scheduler with learned rates
// beats uniform and proportional revisiting and gets close to the oracle optimum.
import { describe, expect, it } from "vitest";
import { World, makeConfig } from "../../../simweb/src/index.js";
import {
  oracleFrequencies, proportionalFrequencies, runFixedFrequencies, runLearned, uniformFrequencies, type ChangeTruth, type SimPage,
} from "../../src/schedule/recrawl/index.js";

describe("re-crawl evaluation in simulated time (short)", () => {
  it("ours > uniform > proportional, and ours >= 85% of the oracle after a warm-up", () => {
    const MIN = 60_000, DAY = 86_400_000;
    const config = makeConfig({ preset: "tiny", seed: 3, hosts: 16, change: { staticShare: 0.1, minIntervalMs: 5 * MIN, maxIntervalMs: 365 * DAY, churnShare: 0.2 } });
    const world = new World(config);
    const pages: SimPage[] = [];
    for (let i = 0; i < world.hostCount(); i++) {
      const h = world.model(i);
      for (let id = 0; id < h.info.pageCount; id++) pages.push({ url: world.page(h, id).url, host: h.info.name, value: 1 });
    }
    const truth: ChangeTruth = {
      versionAt: (u, t) => world.pageVersionAt(u, t),
      changeTimes: (u, a, b) => world.changeTimes(u, a, b),
      ratePerDay: (u) => world.changeRate(u).perDay,
    };
    const budget = pages.length; // one visit per page per day
    const win = { t0Ms: config.timeOriginMs, warmupMs: 7 * DAY, endMs: 12 * DAY };
    const uniform = runFixedFrequencies(truth, pages, uniformFrequencies(pages, budget), win);
    const proportional = runFixedFrequencies(truth, pages, proportionalFrequencies(truth, pages, budget), win);
    const oracle = runFixedFrequencies(truth, pages, oracleFrequencies(truth, pages, budget, false), win);
    const ours = runLearned(truth, pages, budget, win, {}, false);
    expect(pages.length).toBeGreaterThan(200);
    expect(Math.abs(ours.visitsPerPageDay - 1)).toBeLessThan(0.02); // same budget
    expect(uniform.freshness).toBeGreaterThan(proportional.freshness);
    expect(ours.freshness).toBeGreaterThan(uniform.freshness);
    expect(ours.freshness).toBeGreaterThan(0.85 * oracle.freshness);
    expect(oracle.freshness).toBeGreaterThanOrEqual(ours.freshness - 0.01);
  });
});
