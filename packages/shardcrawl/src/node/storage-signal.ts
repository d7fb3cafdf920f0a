// A parser's report on its write buffer, in the node's Redis (P flow): its fill and high-water
// mark (wbuf:<consumer>, wbpeak:<consumer>, for /status and tests), and -- while the buffer is
// full -- "storage" = an expiry time, so that fetchers stopped by the full parse queue this causes
// count that time as blocked on storage, not on parsing (lease.lua). The expiry means a parser
// that dies or recovers stops claiming storage pressure within STALE_MS.
import type { NodeFrontier } from "./open-frontier.js";
import type { WriteBudget } from "../store/write-budget.js";

/** How long one report of a full buffer counts. */
export const STORAGE_SIGNAL_STALE_MS = 3000;
const PUBLISH_MS = 500;

export class StorageSignal {
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly frontier: Pick<NodeFrontier, "reportWriteBuffer">,
    private readonly consumer: string,
    private readonly budget: WriteBudget,
    private readonly log: (m: string) => void,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.publish().catch((err: unknown) => this.log(`storage signal: ${(err as Error).message}`)), PUBLISH_MS);
  }

  async publish(now: number = Date.now()): Promise<void> {
    await this.frontier.reportWriteBuffer(this.consumer, this.budget.used, this.budget.peak, this.budget.full ? now + STORAGE_SIGNAL_STALE_MS : undefined);
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }
}
