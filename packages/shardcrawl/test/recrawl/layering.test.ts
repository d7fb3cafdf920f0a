// The re-crawl stage is a library the node calls: it may use fetch/, frontier/, parse/ and shared/,
// never the node's process wiring or the CLI (those depend on it, not the other way round).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const DIR = join(import.meta.dirname, "../../src/schedule/recrawl");

function importsOf(file: string): string[] {
  const text = readFileSync(join(DIR, file), "utf8");
  return [...text.matchAll(/(?:import|export)[^'"]*?from\s+["']([^"']+)["']/g)].map((m) => m[1] as string);
}

describe("schedule/recrawl layering", () => {
  it("imports nothing from node/ or cli/", () => {
    const files = readdirSync(DIR).filter((f) => f.endsWith(".ts"));
    expect(files.length).toBeGreaterThan(10);
    const bad = files.flatMap((f) => importsOf(f).filter((s) => /(^|\/)(node|cli)\//.test(s)).map((s) => `${f}: ${s}`));
    expect(bad).toEqual([]);
  });

  it("node/ keeps no re-crawl module of its own", () => {
    const node = readdirSync(join(DIR, "../../node")).filter((f) => f.startsWith("recrawl-"));
    expect(node).toEqual([]);
  });
});
