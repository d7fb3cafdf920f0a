// Help is an answer: `--help` of every command and subcommand prints its usage on stdout and exits 0;
// a misspelled flag or command is a usage error (exit 2) that names what was not understood.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { SHARDCRAWL } from "./harness/crawl.js";

const run = (...args: string[]) => spawnSync(process.execPath, [SHARDCRAWL, ...args], { encoding: "utf8", timeout: 30_000 });

const COMMANDS = [
  ["crawl"], ["node"], ["shard"], ["ingest"], ["rehome"], ["status"], ["cluster"], ["cluster", "plan"],
  ["inspect"], ["inspect", "host"], ["inspect", "url"], ["help"],
];

describe("shardcrawl --help", () => {
  for (const cmd of COMMANDS) {
    for (const flag of ["--help", "-h"]) {
      it(`${cmd.join(" ")} ${flag}: usage on stdout, exit 0`, () => {
        const r = run(...cmd, flag);
        expect(r.status, r.stderr).toBe(0);
        expect(r.stdout).toMatch(/usage: shardcrawl/);
      });
    }
  }

  it("help <command> shows that command's usage", () => {
    const r = run("help", "crawl");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^usage: shardcrawl crawl/);
  });

  it("a misspelled flag: exit 2, naming it", () => {
    const r = run("crawl", "--seeds", "s.txt", "--out", "o", "--max-page", "3");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--max-page\b/);
  });

  it("an unknown command: exit 2, naming it", () => {
    const r = run("crawll");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown command "crawll"/);
  });
});
