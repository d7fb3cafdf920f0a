// The fetcher's side of the body spool (store/body-spool.ts): a fetched page's body is appended to
// a segment under out/spool/ and only its reference enters the parse queue; fetcher 0 deletes
// segments no queued or taken page refers to.
import { BodySpool, spoolDir, sweepSpool } from "../store/body-spool.js";
import { StoreWriteError } from "../store/append-file.js";
import type { HostFeedback } from "../frontier/index.js";
import type { FetchedPage, Lease } from "../shared/types.js";
import type { NodeFrontier } from "./open-frontier.js";

/** Often enough that the spool stays close to the parse stage's byte bound. */
const SWEEP_EVERY_MS = 2_000;

export class PageSpool {
  private readonly spool: BodySpool;

  /** `onWriteError`: told when a body could not be spooled (a full disk pauses the node there). */
  constructor(out: string, processName: string, private readonly onWriteError: (err: StoreWriteError) => Promise<void> = () => Promise.resolve()) {
    this.spool = new BodySpool(spoolDir(out), processName.replace(/[^A-Za-z0-9._-]/g, "_"));
  }

  /**
   * Spools the body, then completes the lease with the page (an expired lease's body is left to the
   * sweeper). A body that cannot be spooled (disk full) goes inline through Redis instead, as before
   * the spool existed: the fetch is kept, not repeated; the parse stage's byte bound still holds.
   * `body`: the pieces as received (written without being joined), or one buffer.
   */
  async complete(frontier: NodeFrontier, lease: Lease, end: number, page: Omit<FetchedPage, "body">, body: Buffer | readonly Buffer[], feedback?: HostFeedback): Promise<void> {
    let spool;
    try {
      spool = await this.spool.put(body);
    } catch (err) {
      if (!(err instanceof StoreWriteError)) throw err;
      await this.onWriteError(err);
      await frontier.completeWithPage(lease, end, { ...page, body: Buffer.isBuffer(body) ? body : Buffer.concat(body) }, feedback);
      return;
    }
    await frontier.completeWithPage(lease, end, { ...page, spool }, feedback);
  }

  /** Fetcher 0: sweeps at start (a crash's leftovers) and every SWEEP_EVERY_MS. */
  startSweeper(frontier: NodeFrontier, log: (msg: string) => void): { stop(): Promise<void> } {
    const sweep = (opts: { finishedPid?: number } = {}) =>
      frontier.parse
        .spooledFiles()
        .then((referenced) => sweepSpool(this.spool.dir, referenced, opts))
        .catch((err: unknown) => {
          log(`spool sweep failed: ${(err as Error).message}`);
          return 0;
        });
    void sweep();
    const timer = setInterval(() => void sweep(), SWEEP_EVERY_MS);
    timer.unref();
    return {
      // At exit our own segments are closed: those no page refers to any more can go now.
      stop: async () => {
        clearInterval(timer);
        await this.spool.close();
        await sweep({ finishedPid: process.pid });
      },
    };
  }

  close(): Promise<void> {
    return this.spool.close();
  }
}
