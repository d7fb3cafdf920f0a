// simweb's name service and DNS server, asked over real UDP with Node's c-ares resolver: per-domain
// loopback addresses (several domains per address), SERVFAIL windows, NXDOMAIN names, records that
// move, the wildcard farm, big domains, the query log, and requests answered on every address.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { mkdtempSync, readFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Resolver } from "node:dns/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { makeConfig, startSimweb, World, type RunningSimweb } from "../src/index.js";
import { farmLinks } from "../src/wildcard-farm.js";

const CONFIG = {
  preset: "tiny", hosts: 30, hostsPerDomain: [1], bigDomains: [12],
  wildcardFarm: { domain: "farm.test", linksPerPage: 3 },
  dns: {
    addresses: 3, ttl: 7,
    faults: [
      { host: 12, kind: "servfail" as const, afterQueries: 1, forMs: 400 },
      { host: 13, kind: "nxdomain" as const },
      { host: 14, kind: "move" as const, afterMs: 300, ttl: 1 },
    ],
  },
};

describe("simweb's DNS server", () => {
  let sim: RunningSimweb;
  let resolver: Resolver;
  let dnsLog: string;
  let world: World;
  const name = (i: number): string => world.model(i).info.name;
  const ask = async (n: string): Promise<string> => {
    try {
      const r = await resolver.resolve4(n, { ttl: true });
      return `${r[0]!.address}/${r[0]!.ttl}`;
    } catch (e) {
      return (e as { code: string }).code;
    }
  };

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), "simweb-dns-test-"));
    dnsLog = join(dir, "dns.jsonl");
    sim = await startSimweb({ config: makeConfig(CONFIG), caDir: join(dir, "ca"), dnsPort: 0, dnsLogFile: dnsLog, logFile: join(dir, "req.jsonl") });
    world = sim.world;
    resolver = new Resolver({ timeout: 1000, tries: 1 });
    resolver.setServers([`127.0.0.1:${sim.dnsPort}`]);
  });
  afterAll(async () => {
    await sim?.close();
  });

  test("a big domain has its hundreds of hosts; ordinary domains keep their names", () => {
    expect(world.hosts().filter((h) => h.domain === "d0.test")).toHaveLength(12);
    expect(name(11)).toBe("h11.d0.test");
    expect(name(12)).toBe("www.d1.test");
  });

  test("hosts resolve to their domain's address; several domains share one", async () => {
    const answers = new Map<string, string>();
    for (let i = 15; i < 30; i++) answers.set(name(i), await ask(name(i)));
    const addrs = new Set([...answers.values()]);
    expect(addrs.size).toBe(3);
    for (const a of addrs) expect(a).toMatch(/^127\.0\.1\.[1-3]\/7$/);
    // All hosts of the big domain share one address.
    expect(new Set([await ask(name(0)), await ask(name(11))]).size).toBe(1);
    expect(await ask("unknown.test")).toBe("ENOTFOUND");
  });

  test("a SERVFAIL window opens after the configured lookups and closes after forMs", async () => {
    expect(await ask(name(12))).toMatch(/^127\./);
    expect(await ask(name(12))).toBe("ESERVFAIL");
    await sleep(450);
    expect(await ask(name(12))).toMatch(/^127\./);
  });

  test("an NXDOMAIN name never resolves and is not in the expected set", async () => {
    expect(await ask(name(13))).toBe("ENOTFOUND");
    expect(world.resolvable(world.model(13))).toBe(false);
    expect(world.resolvable(world.model(12))).toBe(true);
  });

  test("a moving record changes address after afterMs, with its own TTL", async () => {
    const before = await ask(name(14));
    expect(before).toMatch(/^127\.0\.1\.\d\/1$/);
    await sleep(350);
    expect(await ask(name(14))).toBe("127.0.2.3/1");
  });

  test("every name under the farm resolves and its pages link to fresh subdomains", async () => {
    expect(await ask("anything.farm.test")).toMatch(/^127\.0\.1\.1\//);
    const links = farmLinks(CONFIG.wildcardFarm, world.config.seed, "anything.farm.test");
    expect(links).toHaveLength(3);
    expect(new Set(links).size).toBe(3);
    for (const l of links) expect(new URL(l).hostname).toMatch(/^w[0-9a-z]+\.farm\.test$/);
  });

  test("simweb listens on every address it hands out and logs the one each request came on", async () => {
    for (const addr of sim.addresses) {
      const status = await new Promise<number>((resolve, reject) => {
        const req = request({ host: addr, port: sim.httpPort, path: "/", headers: { host: name(20) } }, (res) => {
          res.resume();
          res.on("end", () => resolve(res.statusCode ?? 0));
        });
        req.on("error", reject);
        req.end();
      });
      expect(status).toBeLessThan(500);
    }
    expect(sim.addresses).toContain("127.0.2.3");
  });

  test("the query log has one line per question with its answer", async () => {
    await sleep(300); // the log is flushed every 200 ms
    const lines = readFileSync(dnsLog, "utf8").trim().split("\n").map((l) => JSON.parse(l) as { name: string; type: string; answer: string });
    expect(lines.filter((l) => l.name === name(12)).map((l) => l.answer)).toContain("servfail");
    expect(lines.filter((l) => l.name === name(13)).every((l) => l.answer === "nxdomain")).toBe(true);
  });
});
