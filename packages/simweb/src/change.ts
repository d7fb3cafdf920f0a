// Page change model: each page changes as a Poisson process with its own rate, evaluated lazily.
// Time is cut into epochs of one mean interval E (so an epoch holds Poisson(1) changes); the
// changes of epoch k are drawn from a PRNG seeded by (page, k), so any instant can be answered
// without replaying history: the last change before t is in t's epoch or, rarely, a few before it.
import { Rng, mix } from "./prng.js";

export type Churn = "none" | "timestamp" | "ad";

export interface ChangeSpec {
  /** Mean ms between content changes; Infinity for a page that never changes. */
  intervalMs: number;
  /** Epoch alignment offset in [0, intervalMs). */
  phaseMs: number;
  /** PRNG seed of this page's change process. */
  seed: number;
  /** Bytes that change on every visit-ish without a content change. */
  churn: Churn;
  /** Version stamp of a page that has not changed since before the model's horizon. */
  baseMs: number;
}

/** How far back (in epochs) to look for the last change; P(no change in 256 epochs) = e^-256. */
const MAX_WALK_BACK = 256;
/** Refuse to enumerate absurd spans (each epoch costs a few PRNG draws). */
const MAX_EPOCHS = 5_000_000;

export function changeRatePerMs(spec: ChangeSpec): number {
  return Number.isFinite(spec.intervalMs) ? 1 / spec.intervalMs : 0;
}

function epochOf(spec: ChangeSpec, t: number): number {
  return Math.floor((t - spec.phaseMs) / spec.intervalMs);
}

/** Change instants within epoch k, ascending (integer ms). */
export function changesInEpoch(spec: ChangeSpec, k: number): number[] {
  const rng = new Rng(mix(spec.seed, 0x51, k));
  const n = rng.poisson(1);
  if (n === 0) return [];
  const start = spec.phaseMs + k * spec.intervalMs;
  const out: number[] = [];
  for (let i = 0; i < n; i++) out.push(Math.floor(start + rng.next() * spec.intervalMs));
  return out.sort((a, b) => a - b);
}

/**
 * The page's version stamp at time t: the instant (ms) of its last change at or before t, or
 * spec.baseMs for a static page. Equal stamps mean identical content; it is also Last-Modified.
 */
export function lastChangeAt(spec: ChangeSpec, t: number): number {
  if (!Number.isFinite(spec.intervalMs)) return spec.baseMs;
  const k0 = epochOf(spec, t);
  for (let k = k0; k > k0 - MAX_WALK_BACK; k--) {
    const times = changesInEpoch(spec, k);
    for (let i = times.length - 1; i >= 0; i--) {
      const ti = times[i] as number;
      if (ti <= t) return ti;
    }
  }
  return spec.baseMs;
}

/** All change instants in (fromMs, toMs], ascending. */
export function changeTimesBetween(spec: ChangeSpec, fromMs: number, toMs: number): number[] {
  if (!Number.isFinite(spec.intervalMs) || toMs <= fromMs) return [];
  const k0 = epochOf(spec, fromMs);
  const k1 = epochOf(spec, toMs);
  if (k1 - k0 > MAX_EPOCHS) throw new RangeError(`changeTimes: span covers ${k1 - k0} epochs (max ${MAX_EPOCHS})`);
  const out: number[] = [];
  for (let k = k0; k <= k1; k++) {
    for (const t of changesInEpoch(spec, k)) if (t > fromMs && t <= toMs) out.push(t);
  }
  return out;
}

/** The churn slot visible at time t (changes every minute for timestamps, every 10 minutes for ads). */
export function churnSlot(spec: ChangeSpec, t: number): number {
  if (spec.churn === "timestamp") return Math.floor(t / 60_000);
  if (spec.churn === "ad") return Math.floor(t / 600_000);
  return 0;
}
