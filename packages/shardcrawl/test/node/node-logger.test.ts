// The node logger: JSON lines with level names, time, msg and the process's bindings, rolled by
// size into numbered files, keeping only the configured number of rotated files.
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openNodeLogger, validateLogSettings } from "../../src/node/node-logger.js";

const settle = () => new Promise((r) => setTimeout(r, 50));

describe("node logger", () => {
  it("writes parseable JSON lines with level, time, msg, role, node and pid", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-log-"));
    const log = openNodeLogger({ dir, file: "fetcher-0", level: "info", maxBytes: 1 << 20, files: 2, bindings: { node: "n0", role: "fetcher", index: 0 } });
    log.logger.info("first line");
    await log.ready;
    log.logger.warn({ host: "a.test" }, "slow host");
    log.logger.debug("below the level: not written");
    log.close();
    const files = readdirSync(dir);
    expect(files).toEqual(["fetcher-0.1.log"]);
    const lines = readFileSync(join(dir, files[0]!), "utf8").trim().split("\n").map((l) => JSON.parse(l) as Record<string, unknown>);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([["info", "first line"], ["warn", "slow host"]]);
    expect(lines[1]).toMatchObject({ role: "fetcher", node: "n0", index: 0, pid: process.pid, host: "a.test" });
    expect(Number.isNaN(Date.parse(String(lines[0]!.time)))).toBe(false);
  });

  it("rolls at the configured size and keeps N rotated files", async () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-log-"));
    const log = openNodeLogger({ dir, file: "parser-0", level: "info", maxBytes: 1000, files: 2, bindings: { role: "parser" } });
    await log.ready;
    for (let i = 0; i < 60; i++) {
      log.logger.info({ i }, "x".repeat(50));
      if (i % 5 === 4) await settle(); // rolling happens between writes
    }
    await settle();
    log.close();
    await settle();
    const files = readdirSync(dir).sort((a, b) => Number(a.split(".")[1]) - Number(b.split(".")[1]));
    // 60 lines of ~150 bytes = ~9 KB in 1000-byte files: many rolls, of which 2 rotated + the active file remain.
    expect(files.length).toBe(3);
    expect(Number(files[2]!.split(".")[1])).toBeGreaterThan(5);
    for (const f of files.slice(0, 2)) {
      const text = readFileSync(join(dir, f), "utf8");
      // A file rolls after the line that took it to the size: never more than one line above it.
      expect(text.length).toBeGreaterThan(0);
      expect(text.length).toBeLessThan(1000 + 200);
      for (const l of text.trim().split("\n")) expect(JSON.parse(l)).toMatchObject({ level: "info", role: "parser" });
    }
  });

  it("a restarted process appends to its newest file and rolls on from its number", () => {
    const dir = mkdtempSync(join(tmpdir(), "sc-log-"));
    const settings = { dir, file: "fetcher-0", level: "info" as const, maxBytes: 1000, files: 1, bindings: { role: "fetcher" } };
    const first = openNodeLogger(settings);
    for (let i = 0; i < 20; i++) first.logger.info({ i }, "x".repeat(50));
    first.close();
    const before = readdirSync(dir).sort();
    const newest = before.map((f) => Number(f.split(".")[1])).sort((a, b) => a - b).at(-1)!;
    const second = openNodeLogger(settings);
    second.logger.info("after the restart");
    second.close();
    const text = readFileSync(join(dir, `fetcher-0.${newest}.log`), "utf8");
    expect(text.trim().split("\n").at(-1)).toContain("after the restart");
    // Another process's files are not this one's to count or remove.
    expect(readdirSync(dir).every((f) => f.startsWith("fetcher-0."))).toBe(true);
  });

  it("refuses bad settings with the key's name", () => {
    expect(validateLogSettings({ level: "loud" as never, maxBytes: 0, files: 1 })).toEqual([
      expect.stringContaining("logLevel"), expect.stringContaining("logMaxBytes"),
    ]);
  });
});
