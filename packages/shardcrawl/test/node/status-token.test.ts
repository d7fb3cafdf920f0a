// SHARDCRAWL_STATUS_TOKEN_FILE: read when set, made once (mode 0600) when missing, and every node
// sharing the file ends up with the same token.
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ensureStatusToken, readStatusToken } from "../../src/node/status-token.js";

describe("status token", () => {
  const dirs: string[] = [];
  const dir = () => {
    const d = mkdtempSync(join(tmpdir(), "status-token-"));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("prefers the variable, then the file, and is undefined without either", () => {
    const file = join(dir(), "token");
    writeFileSync(file, "from-the-file-0123456789\n");
    expect(readStatusToken({ SHARDCRAWL_STATUS_TOKEN: "from-the-env-0123456789", SHARDCRAWL_STATUS_TOKEN_FILE: file })).toBe("from-the-env-0123456789");
    expect(readStatusToken({ SHARDCRAWL_STATUS_TOKEN: "", SHARDCRAWL_STATUS_TOKEN_FILE: file })).toBe("from-the-file-0123456789");
    expect(readStatusToken({})).toBeUndefined();
    expect(readStatusToken({ SHARDCRAWL_STATUS_TOKEN_FILE: join(dir(), "missing") })).toBeUndefined();
  });

  it("makes a missing file once, private, and everyone reads that one", () => {
    const file = join(dir(), "sub", "token");
    const env = { SHARDCRAWL_STATUS_TOKEN_FILE: file };
    const first = ensureStatusToken(env);
    expect(first).toMatch(/^[0-9a-f]{48}$/);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(ensureStatusToken(env)).toBe(first);
    expect(readStatusToken(env)).toBe(first);
    expect(readFileSync(file, "utf8").trim()).toBe(first);
  });

  it("refuses a file too large to be a token", () => {
    const file = join(dir(), "token");
    writeFileSync(file, "x".repeat(10_000));
    expect(() => readStatusToken({ SHARDCRAWL_STATUS_TOKEN_FILE: file })).toThrow(/not a token/);
  });
});
