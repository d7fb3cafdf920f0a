// "did you mean" picks the flag or command meant, and stays quiet when nothing is close; the
// catalogue it (and shell completion) reads agrees with each command's usage text.
import { describe, expect, it } from "vitest";
import { closest, editDistance, suggestionFor } from "../../src/cli/suggest.js";
import { flagNamesOf } from "../../src/cli/command-catalog.js";
import { CRAWL_USAGE } from "../../src/cli/flags.js";
import { SHARD_FLAGS_USAGE } from "../../src/cli/shard-flags.js";
import { SHARD_USAGE } from "../../src/cli/shard-command.js";
import { INGEST_USAGE } from "../../src/cli/ingest-command.js";
import { STATUS_USAGE } from "../../src/cli/status-command.js";
import { CLUSTER_USAGE } from "../../src/cli/cluster-command.js";
import { REHOME_USAGE } from "../../src/cli/rehome-command.js";
import { INSPECT_USAGE } from "../../src/cli/inspect-command.js";
import { EXCLUDE_USAGE } from "../../src/cli/exclude-command.js";
import { INDEX_USAGE } from "../../src/cli/index-command.js";

describe("suggestions", () => {
  it("edit distance counts a swap of neighbours as one edit", () => {
    expect(editDistance("plna", "plan")).toBe(1);
    expect(editDistance("max-page", "max-pages")).toBe(1);
    expect(editDistance("delay", "delay")).toBe(0);
    expect(editDistance("", "abc")).toBe(3);
  });

  it("the closest candidate only when it is close enough", () => {
    expect(closest("--max-page", ["--max-pages", "--max-page-bytes", "--delay"])).toBe("--max-pages");
    expect(closest("--zzzzzz", ["--max-pages", "--delay"])).toBeUndefined();
    expect(closest("crawll", ["crawl", "cluster"])).toBe("crawl");
    expect(closest("x", ["crawl"])).toBeUndefined();
  });

  it("reads node:util parseArgs' message and the command's own flags", async () => {
    expect(await suggestionFor("Unknown option '--reasn'", ["exclude", "add", "x"])).toBe("did you mean --reason?");
    // --reason is exclude's flag, not crawl's: no guess there.
    expect(await suggestionFor("Unknown option '--reasn'", ["crawl"])).toBeUndefined();
    expect(await suggestionFor('unknown command "statsu"', ["statsu"])).toBe("did you mean status?");
    expect(await suggestionFor('index: unknown subcommand "merg"', ["index", "merg"])).toBe("did you mean merge?");
    expect(await suggestionFor("--out <dir> is required", ["crawl"])).toBeUndefined();
  });
});

describe("command catalogue", () => {
  // Flags a usage text names that belong to another command (it tells where a file comes from).
  const OTHER_COMMANDS_FLAGS: Record<string, string[]> = { cluster: ["--config"], index: ["--derivatives"] };
  const USAGES: Record<string, string> = {
    crawl: CRAWL_USAGE + SHARD_FLAGS_USAGE, shard: SHARD_USAGE, ingest: INGEST_USAGE, status: STATUS_USAGE, cluster: CLUSTER_USAGE,
    rehome: REHOME_USAGE, inspect: INSPECT_USAGE, exclude: EXCLUDE_USAGE, index: INDEX_USAGE,
  };
  for (const [cmd, usage] of Object.entries(USAGES)) {
    it(`${cmd}: every flag parsed is in its usage, every flag in its usage is parsed`, async () => {
      const parsed = new Set(await flagNamesOf(cmd));
      const documented = new Set(usage.match(/--[a-z][a-z0-9-]*/g));
      expect([...parsed].filter((f) => f !== "--help" && !documented.has(f))).toEqual([]);
      expect([...documented].filter((f) => !parsed.has(f) && !OTHER_COMMANDS_FLAGS[cmd]?.includes(f))).toEqual([]);
    });
  }

  it("a subcommand's own flags", async () => {
    expect(await flagNamesOf("cluster", "prometheus")).toContain("--token-file");
    expect(await flagNamesOf("cluster", "plan")).not.toContain("--token-file");
    expect(await flagNamesOf("crawl")).toEqual(expect.arrayContaining(["--politeness-key", "--shard", "--continuous"]));
  });
});
