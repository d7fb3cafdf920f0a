// Group commit for a writer's appends: the appends made while the writer is busy, or in the same
// turn of the event loop, reach the file in one write, in call order. Each append still resolves
// only once its own bytes are written and fails with its batch (which the file rolled back), so
// whatever a caller acknowledges after an append is on disk exactly as with one write per append;
// there are just fewer writes (each costs a thread-pool round trip, ~30 us of CPU for a 30 KB
// write on this machine, against ~12 us per page when four pages share one write).
import { type BoundedSerialQueue, StoreBusyError } from "./serial-queue.js";

export interface PendingAppend<I, R> {
  readonly input: I;
  readonly bytes: number;
  resolve(result: R): void;
  reject(err: unknown): void;
}

export class GroupCommit<I, R> {
  #pending: Array<PendingAppend<I, R>> = [];
  /** Bytes of appends waiting or being written. */
  #waitingBytes = 0;
  /** A flush of #pending is queued, or will be on the next turn (setImmediate). */
  #scheduled = false;
  #queued = false;

  /**
   * `flush` writes a batch (in order) and settles every entry of it; if it throws, the entries it
   * left unsettled are rejected with that error. It runs in `queue`, one operation at a time with
   * the writer's other operations (rotate, close).
   */
  constructor(
    private readonly queue: BoundedSerialQueue,
    private readonly maxQueuedBytes: number,
    private readonly what: string,
    private readonly flush: (batch: Array<PendingAppend<I, R>>) => Promise<void>,
  ) {
    if (!(maxQueuedBytes > 0)) throw new RangeError(`maxQueuedBytes must be > 0, got ${maxQueuedBytes}`);
  }

  get queuedBytes(): number {
    return this.#waitingBytes;
  }

  /**
   * Adds an append to the next batch. One append is always admitted when nothing waits, whatever
   * its size; beyond that the bound catches a caller that stopped awaiting (StoreBusyError).
   */
  add(input: I, bytes: number): Promise<R> {
    if (this.#waitingBytes > 0 && this.#waitingBytes + bytes > this.maxQueuedBytes) {
      return Promise.reject(
        new StoreBusyError(`${this.what}: ${this.#waitingBytes} bytes already queued (limit ${this.maxQueuedBytes}); await appends before adding more`),
      );
    }
    this.#waitingBytes += bytes;
    return new Promise<R>((resolve, reject) => {
      // Bytes leave the count as the append settles (before its caller can append again).
      let settled = false;
      const settle = (): void => {
        if (settled) return;
        settled = true;
        this.#waitingBytes -= bytes;
      };
      this.#pending.push({
        input,
        bytes,
        resolve: (r) => {
          settle();
          resolve(r);
        },
        reject: (e) => {
          settle();
          reject(e instanceof Error ? e : new Error(String(e)));
        },
      });
      if (this.#scheduled) return;
      this.#scheduled = true;
      // Busy: the batch runs after the current operation and takes every append made until then.
      // Idle: wait for the rest of this turn's appends (pages parsed together are written together).
      if (this.queue.length > 0) this.#enqueue();
      else setImmediate(() => {
        // kick() may have queued (and written) this batch already.
        if (this.#scheduled) this.#enqueue();
      });
    });
  }

  /** Queues the waiting batch now: call it before queueing an operation that must follow it (rotate, close). */
  kick(): void {
    if (this.#scheduled) this.#enqueue();
  }

  #enqueue(): void {
    if (this.#queued) return;
    this.#queued = true;
    void this.queue.run(0, async () => {
      this.#queued = false;
      this.#scheduled = false;
      const batch = this.#pending;
      this.#pending = [];
      if (batch.length === 0) return;
      try {
        await this.flush(batch);
      } catch (err) {
        // Settling is once only: this reaches just the entries flush had not settled yet.
        for (const p of batch) p.reject(err);
      }
    });
  }
}
