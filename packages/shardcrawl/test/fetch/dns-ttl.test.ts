// Record TTLs through a real DNS server on loopback (--dns-server): an answer is kept as long as its
// record says, clamped to the configured min/max, and a record changed after its TTL is looked up
// again. The cache's clock is a test clock, so no test waits out a TTL.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startDnsServer, type DnsAnswer, type TestDnsServer } from "../../../../test/harness/dns-server.js";
import { DnsCache } from "../../src/fetch/dns-cache.js";
import { dnsServerLookup } from "../../src/fetch/dns-servers.js";

let dns: TestDnsServer;
const answers = new Map<string, DnsAnswer>();

beforeAll(async () => {
  dns = await startDnsServer((name) => answers.get(name) ?? "nxdomain");
});
afterAll(async () => {
  await dns.close();
});

const asked = (name: string) => dns.questions.filter((q) => q === `${name} A`).length;

describe("record TTLs from a DNS server", () => {
  it("keeps an answer for its record TTL and asks again once it has passed", async () => {
    let now = 0;
    // The fixed TTL (used only when the resolver reports none) is far off every record's own.
    const cache = new DnsCache({ ttlMs: 10 * 60_000, minTtlMs: 1_000, maxTtlMs: 3600_000, timeoutMs: 2_000, lookup: dnsServerLookup([dns.address], 2_000), now: () => now });
    answers.set("moving.test", { addresses: ["127.0.0.2"], ttl: 2 });
    expect(await cache.resolve("moving.test")).toEqual(["127.0.0.2"]);
    answers.set("moving.test", { addresses: ["127.0.0.3"], ttl: 300 });
    now += 1_900;
    expect(await cache.resolve("moving.test")).toEqual(["127.0.0.2"]);
    expect(asked("moving.test")).toBe(1);
    now += 200; // past the 2 s record TTL
    expect(await cache.resolve("moving.test")).toEqual(["127.0.0.3"]);
    expect(asked("moving.test")).toBe(2);
    // The new record's 300 s hold, although far beyond 2 s and short of the 10-minute fixed TTL.
    answers.set("moving.test", { addresses: ["127.0.0.4"], ttl: 300 });
    now += 299_000;
    expect(await cache.resolve("moving.test")).toEqual(["127.0.0.3"]);
    now += 2_000;
    expect(await cache.resolve("moving.test")).toEqual(["127.0.0.4"]);
    expect(asked("moving.test")).toBe(3);
  });

  it("clamps record TTLs to the configured minimum and maximum", async () => {
    let now = 0;
    const cache = new DnsCache({ ttlMs: 5 * 60_000, minTtlMs: 30_000, maxTtlMs: 60_000, timeoutMs: 2_000, lookup: dnsServerLookup([dns.address], 2_000), now: () => now });
    answers.set("zero.test", { addresses: ["127.0.0.5"], ttl: 0 });
    answers.set("day.test", { addresses: ["127.0.0.6"], ttl: 86_400 });
    await cache.resolve("zero.test");
    await cache.resolve("day.test");
    now += 29_000; // a TTL of 0 is still kept the minimum
    await cache.resolve("zero.test");
    expect(asked("zero.test")).toBe(1);
    now += 2_000;
    await cache.resolve("zero.test");
    expect(asked("zero.test")).toBe(2);
    now += 30_000; // 61 s: a day-long record is kept only the maximum
    await cache.resolve("day.test");
    expect(asked("day.test")).toBe(2);
  });
});
