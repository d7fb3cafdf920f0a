// The bound on a parser's write buffer: bytes of output (WARC records, page-log lines, outbox
// links) handed to the writers and not yet on disk. A page's output enters only when it fits, so
// when storage is slow the buffer fills, the parser stops taking pages, the parse queue fills and
// fetchers stop leasing (reason "storage"): slow storage slows fetching, then the frontier.
// One output is always admitted into an empty buffer, whatever its size, so a page larger than the
// bound cannot stall the parser forever. Written by hand: it is a byte-counting semaphore with a
// high-water mark, a dozen lines, and no library keeps those numbers for us.

export class WriteBudget {
  #used = 0;
  #peak = 0;
  readonly #waiters: Array<{ bytes: number; resolve: () => void }> = [];

  constructor(readonly maxBytes: number) {
    if (!(Number.isSafeInteger(maxBytes) && maxBytes > 0)) throw new RangeError(`write buffer: maxBytes must be a positive integer, got ${maxBytes}`);
  }

  /** Bytes admitted and not yet released. */
  get used(): number {
    return this.#used;
  }

  /** The most bytes ever admitted at once. */
  get peak(): number {
    return this.#peak;
  }

  /** Callers waiting for room. */
  get waiting(): number {
    return this.#waiters.length;
  }

  /** True when nothing more fits (the parser should not take new pages). */
  get full(): boolean {
    return this.#used >= this.maxBytes || this.#waiters.length > 0;
  }

  private fits(bytes: number): boolean {
    return this.#used === 0 || this.#used + bytes <= this.maxBytes;
  }

  private admit(bytes: number): void {
    this.#used += bytes;
    if (this.#used > this.#peak) this.#peak = this.#used;
  }

  /** Admits `bytes` now if they fit (and nobody waits before us); returns whether it did. */
  tryAcquire(bytes: number): boolean {
    if (this.#waiters.length > 0 || !this.fits(bytes)) return false;
    this.admit(bytes);
    return true;
  }

  /** Waits until `bytes` fit, in arrival order, then admits them. */
  acquire(bytes: number): Promise<void> {
    if (this.tryAcquire(bytes)) return Promise.resolve();
    return new Promise((resolve) => this.#waiters.push({ bytes, resolve }));
  }

  release(bytes: number): void {
    this.#used = Math.max(0, this.#used - bytes);
    while (this.#waiters.length > 0 && this.fits(this.#waiters[0]!.bytes)) {
      const w = this.#waiters.shift()!;
      this.admit(w.bytes);
      w.resolve();
    }
  }
}
