// Fetcher 0's flow keeper: the memory governor (Redis under its budget) and, in spill mode, the
// spill store (shed URLs to disk and back), ticked once a second until a stop is requested; then
// whatever was shed meanwhile goes to disk before the process exits (nothing lost). Errors are
// logged, not fatal.

export interface FlowKeeperDeps {
  /** Absent when no Redis memory budget is set. */
  governor?: { tick(): Promise<unknown> };
  /** Present in spill mode. */
  spill?: { drain(): Promise<number>; readmitIfRoom(): Promise<unknown>; close(): void };
  stopRequested: Promise<unknown>;
  isStopping(): boolean;
  log(msg: string): void;
  sleep(ms: number): Promise<void>;
  intervalMs?: number;
}

export interface FlowKeeper {
  /** Ends the loop after its current tick, then drains the spill store one last time. */
  stop(): Promise<void>;
}

export function startFlowKeeper(d: FlowKeeperDeps): FlowKeeper {
  let running = true;
  const { spill } = d;
  const loop = (async () => {
    while (running && !d.isStopping()) {
      try {
        await d.governor?.tick();
        if (spill) {
          while ((await spill.drain()) > 0 && running);
          await spill.readmitIfRoom();
        }
      } catch (err) {
        d.log(`flow keeper: ${(err as Error).message}`);
      }
      await Promise.race([d.sleep(d.intervalMs ?? 1000), d.stopRequested]);
    }
    if (spill) {
      try {
        while ((await spill.drain()) > 0);
      } catch (err) {
        d.log(`flow keeper: final spill drain failed: ${(err as Error).message}`);
      }
      spill.close();
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
    },
  };
}
