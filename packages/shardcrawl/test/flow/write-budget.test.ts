// The parser's write buffer bound (store/write-budget.ts).
import { describe, expect, it } from "vitest";
import { WriteBudget } from "../../src/store/write-budget.js";

describe("WriteBudget", () => {
  it("admits up to its bound, makes later callers wait in order, and records the peak", async () => {
    const b = new WriteBudget(100);
    expect(b.tryAcquire(60)).toBe(true);
    expect(b.tryAcquire(50)).toBe(false);
    const order: string[] = [];
    const first = b.acquire(50).then(() => order.push("a"));
    const second = b.acquire(10).then(() => order.push("b"));
    expect(b.full).toBe(true);
    expect(b.waiting).toBe(2);
    // The small one must not jump the queue ahead of the waiting one.
    expect(b.tryAcquire(1)).toBe(false);
    b.release(60);
    await Promise.all([first, second]);
    expect(order).toEqual(["a", "b"]);
    expect(b.used).toBe(60);
    expect(b.peak).toBe(60);
    expect(b.used).toBeLessThanOrEqual(b.maxBytes);
  });

  it("admits one output larger than the bound into an empty buffer, so it cannot stall forever", async () => {
    const b = new WriteBudget(100);
    await b.acquire(500);
    expect(b.used).toBe(500);
    expect(b.full).toBe(true);
    let admitted = false;
    const next = b.acquire(1).then(() => (admitted = true));
    await Promise.resolve();
    expect(admitted).toBe(false);
    b.release(500);
    await next;
    expect(b.used).toBe(1);
  });

  it("refuses a bound that is not a positive integer", () => {
    expect(() => new WriteBudget(0)).toThrow(RangeError);
    expect(() => new WriteBudget(1.5)).toThrow(RangeError);
  });
});
