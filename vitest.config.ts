import { defineConfig } from "vitest/config";

// Integration tests start real redis-server, simweb and crawler processes: keep parallelism modest
// on a 2-core machine and give them time.
export default defineConfig({
  test: {
    include: ["packages/*/test/**/*.test.ts", "test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    maxWorkers: 2,
    reporters: ["default"],
  },
});
