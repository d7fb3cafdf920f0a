// Content time. The server asks a Clock what time it is when it decides a page's version, so tests
// and benchmarks can run a simulated week in minutes. Request-log times stay real wall-clock time.

export interface Clock {
  now(): number;
}

export class RealClock implements Clock {
  now(): number {
    return Date.now();
  }
}

/** A clock that only moves when told to. */
export class SimClock implements Clock {
  private t: number;
  constructor(startMs: number) {
    this.t = startMs;
  }
  now(): number {
    return this.t;
  }
  set(ms: number): void {
    this.t = ms;
  }
  advance(ms: number): number {
    this.t += ms;
    return this.t;
  }
}

/** Simulated time that runs `scale` times faster than real time, starting at `startMs`. */
export class ScaledClock implements Clock {
  private readonly realStart: number;
  constructor(
    readonly scale: number,
    readonly startMs: number,
    realStartMs: number = Date.now(),
  ) {
    if (!(scale > 0)) throw new RangeError("time scale must be > 0");
    this.realStart = realStartMs;
  }
  now(): number {
    return Math.floor(this.startMs + (Date.now() - this.realStart) * this.scale);
  }
}
