// Keeps the node's Redis under a memory budget whatever a site's link structure: when used memory
// nears the budget it lowers the frontier's total queue cap (P flow tcap) to below what is queued
// now, so new links are refused or shed (priority-aware, lib.lua add_links) instead of growing
// the queues; when memory falls well below the budget the cap is raised again step by step.
// Redis's own used_memory is the measure (INFO memory), so Bloom bits, leases and the parse
// queue are all counted. The budget must leave room for the seen filter, which is allocated up front.
//
// A tick sees memory once a second, and links keep arriving between two ticks: acting on the
// reading alone let the peak pass the budget. So the governor judges what memory will be by the
// next tick (the reading plus the largest recent rise between two ticks) and acts on that. Most of
// a tight budget is not queues (Lua scripts, client buffers, pages waiting to be parsed, the shed
// log), so a cap at its floor may not stop the rise: then leasing is held for a tick (P flow mem),
// which stops new pages and links at the source. It is held only while memory is still rising, so
// a node that merely sits near its budget is never stopped for good.
import type { Frontier } from "./frontier.js";

export interface MemoryBudget {
  /** Bytes of Redis used_memory the node should stay under (0 = no budget). */
  budgetBytes: number;
  /** Lower the cap above this share of the budget (default 0.85). */
  high: number;
  /** Raise it again below this share (default 0.7). */
  low: number;
}

/** Below the budget's last stretch the governor caps the frontier no lower than this many URLs (memory that is not queue memory cannot be won back by starving the crawl). */
export const MIN_TOTAL_CAP = 1000;
/**
 * Past this share of the budget the floor drops to LAST_RESORT_CAP and the cap halves each tick:
 * with a tight budget 1,000 queued URLs may not fit (trap URLs with their host and shedding state
 * cost ~400 B each), and the budget must hold even then. The 5% left is the room for what arrives
 * between two ticks.
 */
export const LAST_STRETCH = 0.95;
export const LAST_RESORT_CAP = 100;
/**
 * When memory would pass the budget itself by the next tick, the floor drops once more: a tight
 * budget can be full of what is not queues, and the queued URLs are then the last thing to give.
 * A few URLs stay queued so the crawl goes on (each leased one frees a place for a new link).
 */
export const OVER_BUDGET_CAP = 10;

export interface GovernorReading {
  usedBytes: number;
  budgetBytes: number;
  totalCap?: number;
  action: "none" | "lowered" | "raised" | "removed";
  /** Leasing is held until the next tick (memory would pass the budget by then). */
  held?: boolean;
}

export async function redisUsedMemory(frontier: Frontier): Promise<number> {
  const info = await frontier.redis.info("memory");
  const m = /^used_memory:(\d+)/m.exec(info);
  return m ? Number(m[1]) : 0;
}

/** How fast the remembered rise fades per tick once memory stops rising that fast. */
const RISE_DECAY = 0.8;
/** A hold on leasing lasts a little over one tick (the flow keeper ticks once a second): the next tick renews or lets it lapse. */
const HOLD_MS = 1200;
/** A rise below this share of the budget per tick is noise (counters, heartbeats): no hold for it. */
const MIN_HOLD_RISE = 0.002;

export class MemoryGovernor {
  /** used_memory at the last tick (undefined before the first). */
  private lastUsed: number | undefined;
  /** The largest recent rise of used_memory between two ticks, fading by RISE_DECAY a tick. */
  private rise = 0;
  /** Whether the last tick held leasing. */
  private heldLast = false;

  constructor(private readonly frontier: Frontier, private readonly b: MemoryBudget) {}

  async tick(): Promise<GovernorReading> {
    const used = await redisUsedMemory(this.frontier);
    const { budgetBytes } = this.b;
    if (this.lastUsed !== undefined) this.rise = Math.max(used - this.lastUsed, Math.floor(this.rise * RISE_DECAY));
    this.lastUsed = used;
    // What may be in use by the next tick: the line is judged there, not here.
    const ahead = used + this.rise;
    const flow = await this.frontier.flowState();
    const reading: GovernorReading = { usedBytes: used, budgetBytes, action: "none", ...(flow.totalCap !== undefined ? { totalCap: flow.totalCap } : {}) };
    if (budgetBytes <= 0) return reading;
    // Held only for a real rise (not a few bytes of counters) and never two ticks running, so the
    // crawl always moves: what a hold cannot stop (pages already fetched) is parsed meanwhile.
    if (ahead >= budgetBytes * LAST_STRETCH && this.rise >= budgetBytes * MIN_HOLD_RISE && !this.heldLast) {
      await this.frontier.setFlow({ memoryHoldUntil: Date.now() + HOLD_MS });
      await this.frontier.redis.hincrby(this.frontier.keys.stats, "memory:held", 1);
      reading.held = true;
    }
    this.heldLast = reading.held === true;
    const queued = (await this.frontier.stats()).queued;
    if (ahead > budgetBytes * this.b.high) {
      // Below what is queued now, so the queues shrink as work is leased.
      const last = ahead >= budgetBytes * LAST_STRETCH;
      const floor = ahead >= budgetBytes ? OVER_BUDGET_CAP : last ? LAST_RESORT_CAP : MIN_TOTAL_CAP;
      const cap = Math.max(floor, Math.floor(Math.min(queued, flow.totalCap ?? queued) * (last ? 0.5 : 0.9)));
      if (flow.totalCap === undefined || cap < flow.totalCap) {
        await this.frontier.setFlow({ totalCap: cap });
        await this.frontier.redis.hincrby(this.frontier.keys.stats, "memory:capLowered", 1);
        return { ...reading, totalCap: cap, action: "lowered" };
      }
    } else if (ahead < budgetBytes * this.b.low && flow.totalCap !== undefined) {
      const raised = Math.ceil(flow.totalCap * 1.2) + 1000;
      if (raised >= (await this.frontier.effectiveTotalCapConfigured())) {
        await this.frontier.setFlow({ totalCap: null });
        return { ...reading, action: "removed" };
      }
      await this.frontier.setFlow({ totalCap: raised });
      return { ...reading, totalCap: raised, action: "raised" };
    }
    return reading;
  }
}
