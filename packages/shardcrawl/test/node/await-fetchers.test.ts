// A starting fetcher's wait for the node's other fetchers, without processes: it ends as soon as
// all are asking, at the deadline with fewer, or at a stop.
import { describe, expect, it } from "vitest";
import { awaitFetchers } from "../../src/node/await-fetchers.js";

function clock() {
  let t = 0;
  return { now: () => t, sleep: (ms: number) => {
    t += ms;
    return Promise.resolve();
  } };
}

describe("awaitFetchers", () => {
  it("returns once every fetcher is asking, polling meanwhile", async () => {
    const c = clock();
    const counts = [1, 1, 2, 3, 3];
    let calls = 0;
    const asking = await awaitFetchers({ join: () => Promise.resolve(counts[calls++]!), fetchers: 3, maxWaitMs: 30_000, pollMs: 100, isStopping: () => false, ...c });
    expect(asking).toBe(3);
    expect(calls).toBe(4);
    expect(c.now()).toBe(300);
  });

  it("gives up at the deadline with the fetchers that came", async () => {
    const c = clock();
    let calls = 0;
    const asking = await awaitFetchers({ join: () => Promise.resolve(++calls && 2), fetchers: 3, maxWaitMs: 1000, pollMs: 100, isStopping: () => false, ...c });
    expect(asking).toBe(2);
    expect(c.now()).toBe(1000);
    expect(calls).toBe(11);
  });

  it("stops waiting when the node stops", async () => {
    const c = clock();
    let calls = 0;
    const asking = await awaitFetchers({ join: () => Promise.resolve(1), fetchers: 3, maxWaitMs: 30_000, pollMs: 100, isStopping: () => ++calls > 2, ...c });
    expect(asking).toBe(1);
    expect(c.now()).toBe(200);
  });
});
