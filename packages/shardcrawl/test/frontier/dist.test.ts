// The compiled module must find its Lua files (they are read from src/frontier/lua/ relative to
// dist/frontier/): run it in a real node process against a real redis-server.
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { promisify } from "node:util";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startRedis, type TestRedis } from "../../../../test/harness/redis.js";

const dist = new URL("../../dist/frontier/index.js", import.meta.url);
const ioredis = new URL("../../node_modules/ioredis/built/index.js", import.meta.url);
let server: TestRedis;

beforeAll(async () => {
  server = await startRedis();
});
afterAll(async () => {
  await server.stop();
});

it("works from dist in a separate node process", async () => {
  expect(existsSync(dist), "packages/shardcrawl/dist is missing: run `pnpm build` first").toBe(true);
  const script = `
    const { Frontier } = await import(${JSON.stringify(dist.href)});
    const { Redis } = await import(${JSON.stringify(ioredis.href)});
    const redis = new Redis(${JSON.stringify(server.url)}, { commandTimeout: 5000 });
    const f = await Frontier.open(redis, { prefix: "dist:", bloom: { expectedUrls: 1000, falsePositiveRate: 0.01 }, delayMs: 0 });
    const added = await f.addLinks([{ url: "https://a.test/x?y", host: "a.test", tier: 1, depth: 2, hops: 0 }], { now: 1 });
    const { leases } = await f.lease(5, 2);
    console.log(JSON.stringify({ added, leases }));
    redis.disconnect();
  `;
  const { stdout } = await promisify(execFile)(process.execPath, ["--input-type=module", "-e", script], { timeout: 30_000 });
  const out = JSON.parse(stdout.trim());
  expect(out.added.added).toBe(1);
  expect(out.leases).toHaveLength(1);
  expect(out.leases[0]).toMatchObject({ url: "https://a.test/x?y", host: "a.test", tier: 1, depth: 2, attempt: 0 });
});
