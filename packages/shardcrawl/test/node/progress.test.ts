// The progress line: rates over a sliding window, and the ETA to --max-pages (a pure function).
import { describe, expect, it } from "vitest";
import { estimateEtaMs, formatDuration, ProgressLine, windowRate, type ProgressSample } from "../../src/node/progress.js";

const sample = (t: number, fetched: number, over: Partial<ProgressSample> = {}): ProgressSample => ({
  t, fetched, parsed: fetched, errors: 0, failed: 0, queued: 100, hosts: 3, leases: 2, parseQueue: 1, ...over,
});

describe("estimateEtaMs", () => {
  it("extrapolates the remaining budget at the current rate", () => {
    expect(estimateEtaMs(100, 400, 10)).toBe(30_000);
    expect(estimateEtaMs(0, 1, 3)).toBe(334); // rounded up: never "0 s left" before the end
  });

  it("is null without a limit or without progress, and 0 once the limit is reached", () => {
    expect(estimateEtaMs(100, undefined, 10)).toBeNull();
    expect(estimateEtaMs(100, 400, 0)).toBeNull();
    expect(estimateEtaMs(100, 400, Number.NaN)).toBeNull();
    expect(estimateEtaMs(400, 400, 0)).toBe(0);
    expect(estimateEtaMs(401, 400, 5)).toBe(0);
  });
});

describe("windowRate", () => {
  it("is the counter's change per second between the window's ends", () => {
    expect(windowRate([sample(0, 0), sample(1000, 5), sample(4000, 20)], (s) => s.fetched)).toBe(5);
    expect(windowRate([sample(0, 7)], (s) => s.fetched)).toBe(0);
    expect(windowRate([], (s) => s.fetched)).toBe(0);
  });
});

describe("ProgressLine", () => {
  it("rates over the last window only, and the ETA counts failed fetches against --max-pages", () => {
    const p = new ProgressLine(10_000);
    // A slow start (1 page/s), then 10 pages/s: after the window slides, only the recent rate counts.
    for (let t = 0; t <= 20_000; t += 1000) p.add(sample(t, t <= 10_000 ? t / 1000 : 10 + (t - 10_000) / 100, { maxPages: 1000, failed: 0 }));
    expect(p.rate()).toBeCloseTo(10, 5);
    expect(p.etaMs()).toBe(Math.ceil(((1000 - 110) / 10) * 1000));
    p.add(sample(21_000, 120, { maxPages: 1000, failed: 80, errors: 80 }));
    // 200 of 1000 used; the window now starts at t = 11 s (20 used): 180 in 10 s.
    expect(p.etaMs()).toBe(estimateEtaMs(200, 1000, 18));
    const line = p.render(0);
    expect(line).toContain("fetched 120/1000 (");
    expect(line).toContain("errors 80 (40.0%)");
    expect(line).toContain("queued 100 in 3 hosts, in flight 2, parse queue 1");
    expect(line).toMatch(/\| eta \d+s$/);
  });

  it("shows no ETA without --max-pages", () => {
    const p = new ProgressLine();
    p.add(sample(0, 0));
    p.add(sample(5000, 50));
    expect(p.render(0)).not.toContain("eta");
    expect(formatDuration(3_723_000)).toBe("1h02m");
  });
});
