// The fetcher's stages without a fetcher process: a real redis-server and frontier, a real HTTP
// server on loopback and the real HTTP client. The server's own request log proves that refused
// URLs (robots.txt, the opt-out list) never got a request, and robots.txt came first.
import { createServer, type Server } from "node:http";
import { mkdtempSync, rmSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../../../../test/harness/redis.js";
import { Frontier } from "../../src/frontier/index.js";
import { NodeFrontier } from "../../src/node/open-frontier.js";
import { PageSpool } from "../../src/node/page-spool.js";
import { createHttpClient, type HttpClient } from "../../src/fetch/http-client.js";
import { fetchRobots } from "../../src/fetch/robots.js";
import { FetchPipeline } from "../../src/fetch/fetch-pipeline.js";
import { RobotsMemo } from "../../src/fetch/robots-memo.js";
import { planOutcome } from "../../src/fetch/fetch-outcome.js";
import { DEFAULT_RETRY, decide } from "../../src/fetch/retry-policy.js";
import type { Lease, PageLogLine } from "../../src/shared/types.js";

const UA = "shardcrawl-test/0.1";
let server: TestRedis;
let web: Server;
let base: string;
let out: string;
const requests: string[] = [];

beforeAll(async () => {
  server = await startRedis();
  out = mkdtempSync(join(tmpdir(), "fetch-pipeline-"));
  web = createServer((req, res) => {
    requests.push(req.url ?? "");
    if (req.url === "/robots.txt") {
      res.writeHead(200, { "content-type": "text/plain" }).end("User-agent: *\nDisallow: /private\n");
    } else if (req.url === "/missing") {
      res.writeHead(404, { "content-type": "text/html" }).end("<html>gone</html>");
    } else {
      res.writeHead(200, { "content-type": "text/html" }).end(`<html><a href="/x">${req.url}</a></html>`);
    }
  });
  await new Promise<void>((r) => web.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(web.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((r) => web.close(r));
  await server.stop();
  rmSync(out, { recursive: true, force: true });
});

describe("fetch pipeline stages", () => {
  it("robots.txt first; refused URLs get no request; pages reach the parse queue", async () => {
    const redis = server.client();
    const frontier = await Frontier.open(redis, { prefix: "fp:", delayMs: 0, bloom: { expectedUrls: 10_000, falsePositiveRate: 0.01 } });
    const nf = new NodeFrontier(frontier);
    const client: HttpClient = createHttpClient({ userAgent: UA, allowPrivate: true, timeouts: { totalMs: 5_000 } });
    const spool = new PageSpool(out, "t-f0");
    const lines: PageLogLine[] = [];
    const pipeline = new FetchPipeline({
      frontier: {
        fail: (lease, now, opts) => nf.fail(lease, now, opts),
        requeue: (lease, now) => nf.requeue(lease, now),
        retry: (lease, now, opts) => nf.retry(lease, now, opts),
        count: (field, by) => nf.count(field, by),
        setHostDelay: (host, delayMs) => frontier.setHostLimits(host, { delayMs }),
        setFlow: (flow) => frontier.setFlow(flow),
        completeNotModified: (lease, end, feedback) => frontier.completeNotModified(lease, end, feedback),
      },
      exclusions: () => frontier.exclusions.current(),
      robots: new RobotsMemo((origin) => nf.getRobots(origin), UA, 5_000),
      fetchRobots: async (_lease, origin) => {
        const r = await fetchRobots(client, origin, UA);
        await nf.setRobots(origin, r.entry, r.ttlMs);
        return { kind: "entry", entry: r.entry };
      },
      deferHost: () => Promise.reject(new Error("no host asks to wait here")),
      http: client,
      ipSlot: () => Promise.resolve(null),
      spool: { complete: (lease, end, page, body, feedback) => spool.complete(nf, lease, end, page, body, feedback) },
      pageLog: { append: (l) => Promise.resolve(void lines.push(l)) },
      leaseTtl: { record: () => undefined },
      retry: DEFAULT_RETRY,
      settings: { delayMs: 0, maxCrawlDelayMs: 5_000, totalTimeoutMs: 5_000, cutDrainBytes: 0, politenessMarginMs: 0 },
      log: () => undefined,
    });
    const urls = ["/ok", "/private/a", "/excluded/b", "/missing"].map((p) => base + p);
    await nf.addSeeds(urls, Date.now());
    // The site opts out while its URL is queued: refused at lease time, before any request.
    await frontier.exclusions.add(`${base}/excluded`, "owner asked");
    let handled = 0;
    for (let round = 0; round < 40 && handled < 20; round++) {
      const batch = await nf.lease(1, Date.now() + 60_000);
      if (batch.leases.length === 0) break;
      for (const lease of batch.leases as Lease[]) await pipeline.handle(lease);
      handled++;
    }
    const byUrl = new Map(lines.map((l) => [l.url.slice(base.length), l]));
    expect(byUrl.get("/private/a")).toMatchObject({ error: "robots-disallowed", status: null });
    expect(byUrl.get("/excluded/b")).toMatchObject({ error: "excluded", error_detail: expect.stringContaining("owner asked") });
    // The server's log: robots.txt before any page, never a refused URL.
    expect(requests[0]).toBe("/robots.txt");
    expect(requests.filter((r) => r === "/robots.txt")).toHaveLength(1);
    expect(requests).not.toContain("/private/a");
    expect(requests).not.toContain("/excluded/b");
    expect(requests).toContain("/ok");
    // The two responses kept (200 and 404) wait in the parse queue.
    expect((await nf.stats()).parseQueue).toBe(2);
    await spool.close();
    await client.close();
    redis.disconnect();
    expect(lines).toHaveLength(2);
  });

  it("decide: a network failure with attempts left is a retry, then a failure; a response is kept", () => {
    const lease = { id: "1", url: "http://a.test/", host: "a.test", attempt: 0, depth: 0, hops: 0, tier: 0, expiresAt: 0 } as unknown as Lease;
    const failure = { ok: false as const, url: lease.url, fetchedAt: "", errorClass: "reset" as const, detail: "socket reset", timings: { total: 12 } };
    const s = { ...DEFAULT_RETRY, maxAttempts: 2 };
    const first = planOutcome(lease, failure, decide(failure, 0, s, 1000), 990, s);
    expect(first).toMatchObject({ action: "retry", reason: "reset", line: { error: "reset", error_detail: expect.stringContaining("attempt 1 of 2") } });
    const last = planOutcome({ ...lease, attempt: 1 }, failure, decide(failure, 1, s, 1000), 990, s);
    expect(last).toMatchObject({ action: "fail", errorClass: "reset", feedback: { latencyMs: 12, startedAt: 990 } });
  });
});
