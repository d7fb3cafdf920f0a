import { expect, test } from "vitest";
import { startRedis } from "./harness/redis.js";

test("the harness starts a real redis-server on a free port and stops it", async () => {
  const r = await startRedis();
  const c = r.client();
  await c.set("k", "v");
  expect(await c.get("k")).toBe("v");
  expect(await c.info("server")).toMatch(/redis_version:/);
  await r.stop();
});
