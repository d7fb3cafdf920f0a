// Runs a writer's operations one at a time, in call order, with a bound on the bytes waiting.
// Callers await each append (that is the back-pressure when the disk is slow); the bound only
// catches a caller that stopped awaiting, before it turns into an unbounded in-memory queue.

/** The writer already holds `maxQueuedBytes` of appends: the caller must await before adding more. */
export class StoreBusyError extends Error {
  override name = "StoreBusyError";
  readonly code = "ESTOREBUSY";
}

export class BoundedSerialQueue {
  #tail: Promise<unknown> = Promise.resolve();
  #queuedBytes = 0;
  #length = 0;

  constructor(
    readonly maxQueuedBytes: number,
    private readonly what: string,
  ) {
    if (!(maxQueuedBytes > 0)) throw new RangeError(`maxQueuedBytes must be > 0, got ${maxQueuedBytes}`);
  }

  /** Bytes of operations queued or running. */
  get queuedBytes(): number {
    return this.#queuedBytes;
  }

  /** Operations queued or running. */
  get length(): number {
    return this.#length;
  }

  /**
   * Queues `task`; one operation is always admitted when the queue is empty, whatever its size,
   * and so are zero-byte operations (rotate, close).
   */
  run<T>(bytes: number, task: () => Promise<T>): Promise<T> {
    if (bytes > 0 && this.#length > 0 && this.#queuedBytes + bytes > this.maxQueuedBytes) {
      return Promise.reject(
        new StoreBusyError(
          `${this.what}: ${this.#queuedBytes} bytes already queued (limit ${this.maxQueuedBytes}); await appends before adding more`,
        ),
      );
    }
    this.#queuedBytes += bytes;
    this.#length += 1;
    const result = this.#tail.then(task).finally(() => {
      this.#queuedBytes -= bytes;
      this.#length -= 1;
    });
    this.#tail = result.catch(() => undefined);
    return result;
  }
}
