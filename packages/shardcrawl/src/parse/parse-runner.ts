// Runs parse tasks in a piscina pool of worker threads, or inline on the calling thread (threads =
// 0). Inline saves, per page, the structured clone of the task and result and two thread wake-ups
// (~0.5 ms of CPU per page on a 2-core node); the parser's main thread is then busy for the whole
// parse, so run more parser processes instead of threads.
import { makeParseTask, type WorkerLost, type WorkerResult, type WorkerSetup, type WorkerTask } from "./worker.js";
import { unpackWorkerLinks, type PackedWorkerResult } from "./worker-transfer.js";

export interface ParseRunner {
  run(task: WorkerTask): Promise<WorkerResult | WorkerLost>;
  destroy(): Promise<void>;
}

export async function parseRunner(setup: WorkerSetup, threads: number): Promise<ParseRunner> {
  if (threads === 0) {
    const parse = makeParseTask(setup);
    return {
      run: (task) => {
        try {
          return Promise.resolve(parse(task));
        } catch (err) {
          return Promise.reject(err instanceof Error ? err : new Error(String(err)));
        }
      },
      destroy: () => Promise.resolve(),
    };
  }
  // Loaded only when used (~20 ms of CPU per process otherwise).
  const { Piscina } = await import("piscina");
  const pool = new Piscina({
    filename: new URL("./worker-entry.js", import.meta.url).href,
    workerData: setup,
    minThreads: threads,
    maxThreads: threads,
  });
  return {
    run: async (task) => {
      const r = (await pool.run(task)) as PackedWorkerResult | WorkerLost;
      return "warc" in r ? { ...r, links: unpackWorkerLinks(r.links) } : r;
    },
    destroy: () => pool.destroy(),
  };
}
