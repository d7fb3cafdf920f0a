// Fetcher 0's flow keeper without a fetcher process: it ticks the governor and the spill store
// until a stop, survives their errors, and drains the spill store one last time before it ends.
import { describe, expect, it } from "vitest";
import { startFlowKeeper } from "../../src/node/flow-keeper.js";

const tick = () => new Promise<void>((r) => setImmediate(r));

describe("flow keeper", () => {
  it("ticks, logs errors without stopping, and drains what was shed before it ends", async () => {
    let ticks = 0;
    let shed = 0;
    const events: string[] = [];
    let stop!: () => void;
    let stopping = false;
    const stopRequested = new Promise<void>((r) => (stop = () => {
      stopping = true;
      r();
    }));
    const keeper = startFlowKeeper({
      governor: { tick: () => {
        ticks++;
        return ticks === 2 ? Promise.reject(new Error("redis away")) : Promise.resolve();
      } },
      spill: {
        drain: () => {
          const n = Math.min(shed, 10);
          shed -= n;
          if (n > 0) events.push(`drained ${n}`);
          return Promise.resolve(n);
        },
        readmitIfRoom: () => Promise.resolve(void events.push("readmit")),
        close: () => void events.push("closed"),
      },
      stopRequested, isStopping: () => stopping,
      log: (m) => void events.push(`log ${m}`),
      sleep: () => tick(),
    });
    for (let i = 0; i < 20 && ticks < 3; i++) await tick();
    expect(events).toContain("log flow keeper: redis away");
    expect(ticks).toBeGreaterThanOrEqual(3);
    // URLs shed just before the stop still reach the disk.
    shed = 25;
    stop();
    await keeper.stop();
    expect(shed).toBe(0);
    expect(events.at(-1)).toBe("closed");
  });

  it("runs without a governor or a spill store", async () => {
    let stop!: () => void;
    const stopRequested = new Promise<void>((r) => (stop = r));
    const keeper = startFlowKeeper({ stopRequested, isStopping: () => false, log: () => undefined, sleep: () => tick() });
    await tick();
    stop();
    await keeper.stop();
  });
});
