// The re-crawl schedule in a real redis-server: pages join it from recorded visits, planning reads
// only the due slots and spends the cycle's budget, moved pages leave no duplicate, hints jump the
// queue, pages that stop answering leave, and a reopened schedule (a restarted supervisor) carries
// on from Redis alone: same state, the debt kept, and no scan of the pages.
import type { Redis } from "ioredis";
import { describe, expect, it } from "vitest";
import { useRedis } from "../../../../test/harness/redis.js";
import { DAY_MS, RecrawlHistoryStore, RedisRecrawlSchedule, decodeHistory, emptyHistory, encodeHistoryV2, observe, pathKey } from "../../src/schedule/recrawl/index.js";

let redis: Redis;
let n = 0;
const T0 = Date.UTC(2025, 0, 1);
const CYCLE = 15 * 60_000;
/** A planned visit without a recorded outcome is due again after this long. */
const PENDING = 20 * CYCLE;
const hex = (i: number) => i.toString(16).padStart(16, "0");

useRedis((server) => {
  redis = server.client();
});

/** A fresh prefix with `pages` pages on 5 hosts, each visited once at T0 (+ i ms) and recorded in the schedule. */
async function seeded(pages: number, budgetPerDay = 960): Promise<{ prefix: string; urls: string[]; history: RecrawlHistoryStore; open: () => Promise<RedisRecrawlSchedule> }> {
  const prefix = `d${++n}:`;
  const history = new RecrawlHistoryStore(redis, prefix, 10_000);
  const urls = Array.from({ length: pages }, (_, i) => `https://h${i % 5}.test/item/${i}`);
  for (const [i, u] of urls.entries()) await history.recordVisit(u, { atMs: T0 + i, status: 200, bytes: 100, digest: hex(i + 1), tier: 1, cost: 1 });
  const open = () => RedisRecrawlSchedule.open(redis, prefix, { budgetPerDay, cycleMs: CYCLE, hostDelayMs: () => 1000, pendingTimeoutMs: PENDING });
  const s = await open();
  expect(await s.recorded(urls.map((u, i) => ({ url: u, atMs: T0 + i, changed: null })), T0 + 1000)).toBe(pages);
  return { prefix, urls, history, open };
}

async function commandCalls(): Promise<Map<string, number>> {
  const info = await redis.info("commandstats");
  const m = new Map<string, number>();
  for (const line of info.split("\n")) {
    const r = /^cmdstat_([a-z|]+):calls=(\d+)/.exec(line.trim());
    if (r) m.set(r[1] as string, Number(r[2]));
  }
  return m;
}

describe("re-crawl schedule in Redis (real redis-server)", () => {
  it("plans only what is due, within the budget, and each page once", async () => {
    const { prefix, urls, open } = await seeded(100);
    const s = await open();
    expect(s.snapshotState.pages).toBe(100);
    // Every record carries its next due time, and the slot index holds them.
    const rec = decodeHistory((await redis.hgetBuffer(`${prefix}rp:h0.test`, pathKey("/item/0")))!);
    expect(rec.dueSec! * 1000).toBeGreaterThan(T0);
    expect(await redis.zcard(`${prefix}rqs`)).toBeGreaterThan(0);
    // Nothing is due right after the first visits.
    expect(await s.plan(T0 + 2000)).toEqual([]);
    // A day later all are due; a cycle's budget is 960 / 96 = 10 visits, and unspent budget carries
    // over (at most one cycle's): the empty plan above left some.
    const seen = new Set<string>();
    let t = T0 + DAY_MS;
    let spent = 0;
    for (let cycle = 0; cycle < 10; cycle++, t += CYCLE) {
      const plan = await s.plan(t);
      const cost = plan.reduce((a, v) => a + v.cost, 0);
      expect(cost).toBeLessThanOrEqual(20);
      spent += cost;
      expect(spent).toBeLessThanOrEqual(10 * (cycle + 2));
      for (const v of plan) {
        expect(urls).toContain(v.url);
        expect(seen.has(v.url)).toBe(false); // planned and waiting for its outcome: not planned again
        seen.add(v.url);
      }
    }
    expect(seen.size).toBeGreaterThanOrEqual(85);
    // Visits never recorded (their fetch failed) are due again after the pending timeout.
    const again = await s.plan(T0 + DAY_MS + PENDING + CYCLE);
    expect(again.length).toBeGreaterThan(0);
    for (const v of again) expect(seen.has(v.url)).toBe(true);
    // More was due than the budget pays: μ rose (longer intervals).
    expect(s.snapshotState.mu).toBeGreaterThan(0);
  });

  it("a hint puts a page at the head of the next plan; a recorded visit moves it and leaves no duplicate", async () => {
    const { urls, history, open } = await seeded(3, 960);
    const s = await open();
    const target = urls[1] as string;
    expect(await s.hint([target], T0 + 5000)).toBe(1);
    expect((await s.plan(T0 + 10_000)).map((v) => v.url)).toEqual([target]);
    // Its visit is recorded: it moves to its next due time; its older entries (first visit, hint,
    // safety, pending) are void.
    await history.recordVisit(target, { atMs: T0 + 20_000, status: 200, bytes: 100, digest: hex(999), tier: 1, cost: 1 });
    await s.recorded([{ url: target, atMs: T0 + 20_000, changed: true }], T0 + 20_000);
    const later: string[] = [];
    for (let t = T0 + 5 * DAY_MS, i = 0; i < 4; i++, t += CYCLE) later.push(...(await s.plan(t)).map((v) => v.url));
    expect(later.sort()).toEqual([...urls].sort());
  });

  it("a page planned maxMissedPlans times without a recorded visit leaves the schedule", async () => {
    const { urls, open } = await seeded(1, 960);
    const s = await open();
    let t = T0 + DAY_MS;
    const planned: number[] = [];
    for (let i = 0; i < 6; i++, t += PENDING + 1000) planned.push((await s.plan(t)).length);
    expect(planned.slice(0, 3)).toEqual([1, 1, 1]);
    expect(planned.slice(3)).toEqual([0, 0, 0]);
    expect(s.dropped).toBe(1);
    expect(s.snapshotState.pages).toBe(0);
    expect(urls).toHaveLength(1);
  });

  it("a restarted supervisor continues from Redis: state, debt and the due pages, without scanning the pages", async () => {
    const { prefix, urls, open } = await seeded(60, 960);
    const a = await open();
    const first = await a.plan(T0 + DAY_MS);
    expect(first.length).toBe(9); // 10 a cycle, less the re-estimation and validation reserves
    await a.charge(5);
    const before = a.snapshotState;
    // "Restart": a new schedule object on the same Redis.
    const calls0 = await commandCalls();
    const b = await open();
    const calls1 = await commandCalls();
    for (const cmd of ["scan", "hscan", "keys", "hgetall"]) {
      const d = (calls1.get(cmd) ?? 0) - (calls0.get(cmd) ?? 0);
      expect(d, cmd).toBeLessThanOrEqual(cmd === "hgetall" ? 1 : 0); // one HGETALL of P rsched
    }
    expect(b.snapshotState).toEqual(before);
    expect(before.carry).toBeLessThan(0); // the debt survived
    // The next cycle pays the debt first (income 10 - debt 5 - ... ), then the rest follow.
    const seen = new Set(first.map((v) => v.url));
    let t = T0 + DAY_MS + CYCLE;
    for (let i = 0; i < 12; i++, t += CYCLE) for (const v of await b.plan(t)) {
      expect(seen.has(v.url)).toBe(false);
      seen.add(v.url);
    }
    expect(seen.size).toBe(urls.length);
    expect(prefix).toMatch(/^d\d+:$/);
  });

  it("a schedule written before record format 3 is converted when it opens: no page lost, a visit in between kept", async () => {
    const prefix = `d${++n}:`;
    const SLOT = 60_000;
    const due = T0 + 3_600_000;
    const urls = Array.from({ length: 20 }, (_, i) => `https://old${i % 2}.test/a/page-${i}?x=${i}`);
    // The old layout: records keyed by path (format 2, next due inside), entries "host id + path".
    const h = emptyHistory();
    observe(h, 1, true);
    const p = redis.pipeline();
    for (const [i, u] of urls.entries()) {
      const url = new URL(u);
      const path = url.pathname + url.search;
      p.hset(`${prefix}rhid`, url.host, 1 + (i % 2)).hset(`${prefix}rhost`, 1 + (i % 2), `${url.host}\t${url.origin}`);
      p.hset(`${prefix}rh:${url.host}`, path, encodeHistoryV2({ lastVisitMs: T0, etag: `"e${i}"`, etagChurns: false, digest: hex(i + 1), tier: 1, cost: 1, history: h, dueSec: due / 1000 }));
      const id = Buffer.alloc(4);
      id.writeUInt32BE(1 + (i % 2));
      p.rpush(`${prefix}rdue:${Math.floor(due / SLOT)}`, Buffer.concat([id, Buffer.from(path)]));
    }
    p.zadd(`${prefix}rslots`, Math.floor(due / SLOT), Math.floor(due / SLOT)).set(`${prefix}rhostn`, 2).hset(`${prefix}rsched`, "slot", SLOT, "pages", urls.length, "mu", 1, "carry", -3);
    await p.exec();
    // A fetcher records a visit before the supervisor opens the schedule: the record moves to the
    // new layout, keeps its due time and its history.
    const history = new RecrawlHistoryStore(redis, prefix, 10_000);
    const visited = urls[3] as string;
    expect((await history.recordVisit(visited, { atMs: T0 + 60_000, status: 200, bytes: 1, digest: hex(4), tier: 1, cost: 1 })).changed).toBe(false);
    expect((await history.get(visited))?.history.observations).toBe(2);
    expect(await redis.hexists(`${prefix}rh:old1.test`, "/a/page-3?x=3")).toBe(0);
    const s = await RedisRecrawlSchedule.open(redis, prefix, { budgetPerDay: 100_000, cycleMs: CYCLE, hostDelayMs: () => 0, pendingTimeoutMs: PENDING });
    expect(s.snapshotState).toMatchObject({ pages: urls.length, carry: -3, slotMs: SLOT });
    expect(await redis.keys(`${prefix}rh:*`)).toEqual([]);
    expect(await redis.keys(`${prefix}rdue:*`)).toEqual([]);
    expect(await redis.exists(`${prefix}rslots`)).toBe(0);
    const rec = await history.get(urls[0] as string);
    expect(rec).toMatchObject({ etag: '"e0"', digest: hex(1), dueSec: due / 1000 });
    expect(await s.plan(due - 2 * SLOT)).toEqual([]);
    const planned = (await s.plan(due + 1000)).map((v) => v.url);
    expect(planned.sort()).toEqual([...urls].sort());
    // Opening again converts nothing more.
    const again = await RedisRecrawlSchedule.open(redis, prefix, { budgetPerDay: 100_000, cycleMs: CYCLE });
    expect(again.snapshotState.pages).toBe(urls.length);
  });
});
