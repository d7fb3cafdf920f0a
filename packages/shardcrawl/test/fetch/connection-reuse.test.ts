// Connection reuse against real HTTPS simweb, counted from the server's side (its request log
// numbers connections and says which TLS handshakes resumed a session) and from the client's own
// counters. A broad crawl visits many hosts before coming back to one, so the rotation here is
// wider than the 100 sessions undici keeps by default: resumption must survive it.
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { LogEntry, RunningSimweb } from "../../../simweb/src/index.js";
import { startSimwebInProcess } from "../../../../test/harness/simweb.js";
import { ConnectionStatsReporter } from "../../src/fetch/connection-stats.js";
import { createHttpClient, type HttpClient } from "../../src/fetch/http-client.js";
import { renderMetrics } from "../../src/node/metrics.js";
import type { NodeStats } from "../../src/node/open-frontier.js";

const HOSTS = 120;

function readLog(file: string): LogEntry[] {
  return readFileSync(file, "utf8").trim().split("\n").filter(Boolean).map((l) => JSON.parse(l) as LogEntry);
}

describe("HTTPS connection reuse (simweb)", () => {
  let sim: RunningSimweb & { logFile: string | undefined };
  let client: HttpClient;
  let seeds: string[];

  beforeAll(async () => {
    sim = await startSimwebInProcess({ config: { preset: "tiny", hosts: HOSTS, httpsShare: 1, seed: 3 } });
    seeds = sim.world.seeds();
    client = createHttpClient({
      userAgent: "shardcrawl-test/0.1",
      allowPrivate: true,
      caFile: sim.caFile,
      connectTo: [`:443:127.0.0.1:${sim.httpsPort}`],
    });
  });

  afterAll(async () => {
    await client?.close();
    await sim?.close();
  });

  it("keeps one connection per host for back-to-back requests, and resumes TLS sessions across a wide rotation", async () => {
    // Round 1: three requests per host (home page and two 404s), one after the other: one
    // connection, one full handshake each. The last asks the server to close the connection.
    for (const seed of seeds) {
      for (const path of ["", "no-such-page-1", "no-such-page-2"]) {
        const res = await client.fetch(seed + path, path.endsWith("2") ? { headers: { connection: "close" } } : {});
        if (!res.ok) throw new Error(`${seed}${path}: ${res.errorClass} ${res.detail}`);
      }
    }
    // Round 2: each host again, on a new connection, after HOSTS other hosts were visited.
    for (const seed of seeds) {
      const res = await client.fetch(seed);
      if (!res.ok) throw new Error(`${seed}: ${res.errorClass} ${res.detail}`);
    }
    await new Promise((r) => setTimeout(r, 400)); // the request log is flushed every 200 ms
    const log = readLog(sim.logFile!);
    expect(log).toHaveLength(HOSTS * 4);

    const round1 = log.slice(0, HOSTS * 3);
    const round2 = log.slice(HOSTS * 3);
    const connsPerHost = new Map<string, Set<number>>();
    for (const e of round1) {
      const set = connsPerHost.get(e.host) ?? new Set<number>();
      set.add(e.conn!);
      connsPerHost.set(e.host, set);
    }
    const reopened = [...connsPerHost].filter(([, conns]) => conns.size !== 1).map(([h, c]) => `${h}: ${c.size}`);
    expect(reopened).toEqual([]);
    expect(round1.every((e) => e.tlsResumed === false)).toBe(true);

    const round2Conns = new Set(round2.map((e) => e.conn));
    expect(round2Conns.size).toBe(HOSTS);
    const notResumed = round2.filter((e) => e.tlsResumed !== true).map((e) => e.host);
    expect(notResumed).toEqual([]);

    // The client's counters (exported as shardcrawl_tls_* metrics) agree with the server.
    expect(client.connections).toEqual({ opened: HOSTS * 2, tlsHandshakes: HOSTS, tlsResumed: HOSTS });
    const reporter = new ConnectionStatsReporter(client.connections);
    const counters = Object.fromEntries(reporter.take());
    expect(reporter.take()).toEqual([]); // reported once
    const text = await renderMetrics({ stats: { counters } as unknown as NodeStats });
    expect(text).toContain(`shardcrawl_tls_handshakes_total{node="node0"} ${HOSTS}`);
    expect(text).toContain(`shardcrawl_tls_session_reuses_total{node="node0"} ${HOSTS}`);
    expect(text).toContain(`shardcrawl_connections_opened_total{node="node0"} ${HOSTS * 2}`);
  });

  it("closes an idle connection after its own keep-alive time, whatever longer time the server offers", async () => {
    // simweb answers "Keep-Alive: timeout=10": undici alone would keep the connection 8 s.
    const short = createHttpClient({ userAgent: "shardcrawl-test/0.1", allowPrivate: true, caFile: sim.caFile, connectTo: [`:443:127.0.0.1:${sim.httpsPort}`], keepAliveTimeoutMs: 200 });
    try {
      const first = await short.fetch(seeds[0]!);
      expect(first.ok).toBe(true);
      await new Promise((r) => setTimeout(r, 1_000));
      const second = await short.fetch(seeds[0]!);
      expect(second.ok && second.reusedConnection).toBe(false);
      expect(short.connections.opened).toBe(2);
    } finally {
      await short.close();
    }
  });
});
