// The fetcher's side of the body spool (store/body-spool.ts): a fetched page's body is written to
// out/spool/ and only its reference enters the parse queue; fetcher 0 sweeps orphan files.
import { BodySpool, removeSpooled, spoolDir, sweepSpool } from "../store/body-spool.js";
import type { HostFeedback } from "../frontier/index.js";
import type { FetchedPage, Lease } from "../shared/types.js";
import type { NodeFrontier } from "./open-frontier.js";

/** Orphans younger than this are kept: their page may be on its way into the parse queue. */
const ORPHAN_MIN_AGE_MS = 5 * 60_000;
const SWEEP_EVERY_MS = 60_000;

export class PageSpool {
  private readonly spool: BodySpool;

  constructor(out: string, processName: string) {
    this.spool = new BodySpool(spoolDir(out), processName.replace(/[^A-Za-z0-9._-]/g, "_"));
  }

  /** Spools the body, then completes the lease with the page; an expired lease's file is removed at once. */
  async complete(frontier: NodeFrontier, lease: Lease, end: number, page: FetchedPage, feedback?: HostFeedback): Promise<void> {
    const { body, ...meta } = page;
    const spool = await this.spool.put(body);
    // If this throws, the page may or may not be queued: the file is left to the sweeper.
    const id = await frontier.completeWithPage(lease, end, { ...meta, spool }, feedback);
    if (id === null) await removeSpooled(this.spool.dir, spool);
  }

  /** Fetcher 0: removes files no queued or taken page refers to, at start (a crash's leftovers) and once a minute. */
  startSweeper(frontier: NodeFrontier, log: (msg: string) => void): { stop(): void } {
    const sweep = () => {
      frontier.frontier.parse
        .spooledFiles()
        .then((referenced) => sweepSpool(this.spool.dir, referenced, ORPHAN_MIN_AGE_MS))
        .then((n) => n > 0 && log(`spool: removed ${n} orphan body files`))
        .catch((err: unknown) => log(`spool sweep failed: ${(err as Error).message}`));
    };
    sweep();
    const timer = setInterval(sweep, SWEEP_EVERY_MS);
    timer.unref();
    return { stop: () => clearInterval(timer) };
  }
}
