// The fetcher's pull loop without a fetcher process: leases from an in-memory queue, requests that
// finish when the test says, and a stop signal.
import { describe, expect, it } from "vitest";
import { PullLoop, type PullLoopDeps } from "../../src/fetch/pull-loop.js";
import type { LeaseBatch } from "../../src/frontier/index.js";
import type { Lease } from "../../src/shared/types.js";

const leaseOf = (i: number): Lease => ({ id: `l${i}`, url: `https://h${i % 7}.test/p${i}`, host: `h${i % 7}.test`, tier: 0, depth: 0, hops: 0, attempt: 0, expiresAt: 0 });
const tick = () => new Promise<void>((r) => setImmediate(r));

function harness(opts: { urls: number; concurrency: number; batches?: LeaseBatch[] }) {
  const queue = Array.from({ length: opts.urls }, (_, i) => leaseOf(i));
  const scripted = [...(opts.batches ?? [])];
  let stop!: () => void;
  let stopping = false;
  const stopRequested = new Promise<void>((r) => (stop = () => {
    stopping = true;
    r();
  }));
  const open = new Map<string, () => void>();
  const calls = { asked: [] as number[], handled: [] as string[], failed: [] as string[], blocked: [] as Array<[string, number]>, logs: [] as string[], maxOpen: 0 };
  let clock = 0;
  const deps: PullLoopDeps = {
    concurrency: opts.concurrency,
    beforeLease: () => Promise.resolve(),
    lease: (max) => {
      calls.asked.push(max);
      return Promise.resolve(scripted.shift() ?? { leases: queue.splice(0, max) });
    },
    handle: (lease) => new Promise<void>((resolve, reject) => {
      calls.handled.push(lease.id);
      open.set(lease.id, () => (lease.id.endsWith("3") ? reject(new Error("boom")) : resolve()));
      calls.maxOpen = Math.max(calls.maxOpen, open.size);
    }),
    failed: (lease) => Promise.resolve(void calls.failed.push(lease.id)),
    msUntilNextDue: () => Promise.resolve(queue.length > 0 ? 0 : null),
    blocked: (reason, ms) => void calls.blocked.push([reason, ms]),
    afterLease: () => Promise.resolve(),
    stopRequested,
    isStopping: () => stopping,
    log: (m) => void calls.logs.push(m),
    sleep: async () => {
      clock += 50;
      await tick();
    },
    now: () => clock,
  };
  /** Finishes every request open now. */
  const finishAll = () => {
    for (const [id, done] of open) {
      open.delete(id);
      done();
    }
  };
  return { loop: new PullLoop(deps), calls, stop, finishAll, open };
}

describe("PullLoop", () => {
  it("keeps at most `concurrency` requests in flight, asks for no more than it has room for, and handles every lease", async () => {
    const h = harness({ urls: 200, concurrency: 10 });
    const running = h.loop.run();
    for (let i = 0; i < 200 && (h.calls.handled.length < 200 || h.open.size > 0); i++) {
      await tick();
      h.finishAll();
      await tick();
    }
    await tick();
    expect(h.calls.handled).toHaveLength(200);
    expect(h.calls.maxOpen).toBeLessThanOrEqual(10);
    expect(Math.max(...h.calls.asked)).toBeLessThanOrEqual(10);
    // A request that rejects goes to `failed` (returned, not lost) and the loop goes on.
    expect(h.calls.failed).toEqual(h.calls.handled.filter((id) => id.endsWith("3")));
    h.stop();
    await running;
    await h.loop.drain();
  });

  it("asks for at most 64 leases at a time", async () => {
    const h = harness({ urls: 100, concurrency: 500 });
    const running = h.loop.run();
    await tick();
    h.stop();
    await running;
    expect(h.calls.asked[0]).toBe(64);
    h.finishAll();
    await h.loop.drain();
  });

  it("waits while leasing is blocked, counting the time by reason, and says once that the quota is spent", async () => {
    const h = harness({ urls: 0, concurrency: 4, batches: [
      { leases: [], blocked: "parse-full" }, { leases: [], blocked: "parse-full" },
      { leases: [], blocked: "quota", message: "quota gone" }, { leases: [], blocked: "quota", message: "quota gone" },
    ] });
    const running = h.loop.run();
    for (let i = 0; i < 20 && h.calls.blocked.length < 4; i++) await tick();
    h.stop();
    await running;
    expect(h.calls.blocked).toEqual([["parse-full", 50], ["parse-full", 50], ["quota", 50], ["quota", 50]]);
    expect(h.calls.logs.filter((m) => m.includes("quota gone"))).toHaveLength(1);
  });

  it("stops leasing at a stop request, and drain waits for what is in flight", async () => {
    const h = harness({ urls: 5, concurrency: 5 });
    const running = h.loop.run();
    await tick();
    expect(h.loop.running).toBe(5);
    h.stop();
    await running;
    let drained = false;
    const d = h.loop.drain().then(() => (drained = true));
    await tick();
    expect(drained).toBe(false);
    h.finishAll();
    await d;
    expect(h.loop.running).toBe(0);
  });
});
