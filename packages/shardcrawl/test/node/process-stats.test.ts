// CPU and memory from /proc: the test process's own numbers, and a pid that does not exist.
import { describe, expect, it } from "vitest";
import { readProcessSample, readProcessSamples } from "../../src/node/process-stats.js";

describe.skipIf(process.platform !== "linux")("process stats from /proc", () => {
  it("reads CPU seconds and resident memory that agree with Node's own view", () => {
    let x = 0;
    for (let i = 0; i < 2e7; i++) x += i % 7;
    expect(x).toBeGreaterThan(0);
    const s = readProcessSample("self", process.pid)!;
    const usage = process.cpuUsage();
    const own = (usage.user + usage.system) / 1e6;
    // Ticks are 10 ms: allow a little on either side.
    expect(s.cpuSeconds).toBeGreaterThan(0);
    expect(Math.abs(s.cpuSeconds - own)).toBeLessThan(0.5);
    expect(s.rssBytes).toBeGreaterThan(10e6);
    expect(Math.abs(s.rssBytes - process.memoryUsage().rss)).toBeLessThan(64e6);
  });

  it("leaves out processes that are gone or were never started", () => {
    expect(readProcessSample("ghost", 2 ** 22 + 12345)).toBeNull();
    expect(readProcessSamples([{ process: "a", pid: process.pid }, { process: "b" }, { process: "c", pid: 2 ** 22 + 1 }]).map((p) => p.process)).toEqual(["a"]);
  });
});
