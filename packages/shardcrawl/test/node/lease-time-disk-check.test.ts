// The fetcher's free-space check before leasing: as often as the room above --min-free-disk needs
// (every batch near the threshold, once a second with plenty), and a pause below it.
import { describe, expect, it } from "vitest";
import { LeaseTimeDiskCheck } from "../../src/node/disk-pause.js";

const MB = 1024 * 1024;

function harness(freeBytes: () => number) {
  const clock = { now: 0 };
  let reads = 0;
  const flows: unknown[] = [];
  const check = new LeaseTimeDiskCheck(
    { setFlow: (f: unknown) => Promise.resolve(void flows.push(f)), count: () => Promise.resolve() } as never,
    "/out", "fetcher 0", { bytes: 100 * MB },
    () => {
      reads++;
      return Promise.resolve({ freeBytes: freeBytes(), totalBytes: 1000 * MB });
    },
    () => clock.now,
  );
  return { check, clock, reads: () => reads, flows };
}

describe("LeaseTimeDiskCheck", () => {
  it("reads free space about once a second while gigabytes are left", async () => {
    const h = harness(() => 100 * 1024 * MB);
    for (let t = 0; t < 10_000; t += 2) {
      h.clock.now = t;
      await h.check.beforeLease();
    }
    expect(h.reads()).toBeGreaterThanOrEqual(10);
    expect(h.reads()).toBeLessThanOrEqual(11);
  });

  it("reads before every batch close to the threshold, and pauses the node below it", async () => {
    let free = 101 * MB;
    const h = harness(() => free);
    for (let t = 0; t < 100; t += 10) {
      h.clock.now = t;
      await h.check.beforeLease();
    }
    // 1 MB of room at 256 MB/s: ~4 ms between reads, so each 10 ms batch reads.
    expect(h.reads()).toBe(10);
    expect(h.flows).toEqual([]);
    free = 99 * MB;
    h.clock.now = 200;
    await h.check.beforeLease();
    expect(h.flows).toHaveLength(1);
    h.clock.now = 201;
    await h.check.beforeLease();
    expect(h.reads()).toBe(12); // below the threshold: every batch reads again
    expect(h.flows).toHaveLength(1); // and the pause is asked for once
  });
});
