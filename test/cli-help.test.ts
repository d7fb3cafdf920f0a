// Help is an answer: `--help` of every command and subcommand prints its usage on stdout and exits 0;
// a misspelled flag or command is a usage error (exit 2) that names what was not understood and, when
// one is close, the flag or command probably meant.
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { SHARDCRAWL } from "./harness/crawl.js";
import { buildProgram } from "../packages/shardcrawl/src/cli/program.js";

const run = (...args: string[]) => spawnSync(process.execPath, [SHARDCRAWL, ...args], { encoding: "utf8", timeout: 30_000 });

// Every command and subcommand, read from the program's own definitions: a command added later is
// covered without touching this list.
const COMMANDS: string[][] = [];
for (const cmd of buildProgram().commands) {
  COMMANDS.push([cmd.name()]);
  for (const sub of cmd.commands) COMMANDS.push([cmd.name(), sub.name()]);
}
COMMANDS.push(["help"]);

describe("shardcrawl --help", () => {
  it("covers every command the program defines", () => {
    expect(COMMANDS.map((c) => c.join(" "))).toEqual(expect.arrayContaining(["crawl", "node", "cluster plan", "inspect url", "exclude add", "index merge", "completion bash"]));
  });
  for (const cmd of COMMANDS) {
    for (const flag of ["--help", "-h"]) {
      it(`${cmd.join(" ")} ${flag}: usage on stdout, exit 0`, () => {
        const r = run(...cmd, flag);
        expect(r.status, r.stderr).toBe(0);
        expect(r.stdout).toMatch(/Usage: shardcrawl/);
      });
    }
  }

  it("no command at all: the usage on stderr, exit 2", () => {
    const r = run();
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/Usage: shardcrawl/);
  });

  it("help <command> shows that command's usage", () => {
    const r = run("help", "crawl");
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/^Usage: shardcrawl crawl/);
    expect(r.stdout).toMatch(/--max-pages <n>/);
  });

  it("a misspelled flag: exit 2, naming it", () => {
    const r = run("crawl", "--seeds", "s.txt", "--out", "o", "--max-page", "3");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--max-page\b/);
  });

  it("an unknown command: exit 2, naming it and the command meant", () => {
    const r = run("crawll");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/unknown command 'crawll'/);
    expect(r.stderr).toMatch(/did you mean crawl\?/i);
  });

  it("a word far from every command gets no guess", () => {
    const r = run("frobnicate");
    expect(r.status).toBe(2);
    expect(r.stderr).not.toMatch(/did you mean/i);
  });

  it("a misspelled subcommand suggests the subcommand", () => {
    const r = run("cluster", "plna", "--cluster", "c.yaml");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/did you mean plan\?/i);
    const e = run("exclude", "ad", "example.com", "--out", "o");
    expect(e.status).toBe(2);
    expect(e.stderr).toMatch(/did you mean add\?/i);
  });

  // Each command's own flags, read from its parseArgs options: a suggestion names a flag of that
  // command (--reason exists only for exclude, --clustr -> --cluster not --out).
  const MISSPELLED: [string[], string][] = [
    [["crawl", "--seeds", "s.txt", "--out", "o", "--max-page", "3"], "--max-pages"],
    [["crawl", "--out", "o", "--politness-key=host"], "--politeness-key"],
    [["crawl", "--out", "o", "--shrad", "0/2"], "--shard"],
    [["node", "--confg", "n.json"], "--config"],
    [["inspect", "host", "example.com", "--out", "o", "--jsno"], "--json"],
    [["exclude", "add", "example.com", "--out", "o", "--resaon", "asked"], "--reason"],
    [["index", "merge", "--ot", "x.parquet", "dir"], "--out"],
    [["cluster", "plan", "--clustr", "c.yaml"], "--cluster"],
    [["cluster", "prometheus", "--cluster", "c.yaml", "--token-fle", "t"], "--token-file"],
    [["status", "--cluster", "c.yaml", "--timout", "5"], "--timeout"],
    [["shard", "--nodes", "2", "--seeds", "s", "--out", "o", "--shard-kye", "host"], "--shard-key"],
  ];
  for (const [args, meant] of MISSPELLED) {
    it(`${args.slice(0, 2).join(" ")}: a misspelled flag suggests ${meant}, exit 2`, () => {
      const r = run(...args);
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr.toLowerCase()).toContain(`did you mean ${meant}?`);
      expect(r.stderr).toMatch(/^shardcrawl: /);
    });
  }

  it("a flag far from every flag gets no guess", () => {
    const r = run("status", "--cluster", "c.yaml", "--zzzzzz");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--zzzzzz/);
    expect(r.stderr).not.toMatch(/did you mean/i);
  });

  it("a flag value the schema refuses: exit 2, naming the flag and what to do", () => {
    const r = run("crawl", "--out", "o", "--politeness-key", "site");
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--politeness-key: .*"host"\|"domain"|--politeness-key: .*host.*domain/);
    expect(r.stderr).toMatch(/what to do: see "shardcrawl crawl --help"/);
  });
});

describe("shardcrawl completion", () => {
  it("bash: a valid script completing commands, subcommands and each command's flags", () => {
    const r = run("completion", "bash");
    expect(r.status, r.stderr).toBe(0);
    expect(spawnSync("bash", ["-n"], { input: r.stdout, encoding: "utf8" }).status).toBe(0);
    // Ask the script itself, as bash would when <TAB> is pressed.
    const complete = (...words: string[]) => {
      const script = `${r.stdout}\nCOMP_WORDS=(${words.map((w) => `'${w}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _shardcrawl; echo "\${COMPREPLY[*]}"`;
      const b = spawnSync("bash", ["-c", script], { encoding: "utf8" });
      expect(b.status, b.stderr).toBe(0);
      return b.stdout.trim().split(/\s+/);
    };
    expect(complete("shardcrawl", "cr")).toEqual(["crawl"]);
    expect(complete("shardcrawl", "crawl", "--polit")).toEqual(["--politeness-key"]);
    expect(complete("shardcrawl", "crawl", "--out", "o", "--shard")).toEqual(["--shard", "--shard-key"]);
    expect(complete("shardcrawl", "cluster", "p")).toEqual(["plan", "prometheus"]);
    expect(complete("shardcrawl", "cluster", "plan", "--w")).toEqual(["--write"]);
    expect(complete("shardcrawl", "inspect", "host", "example.com", "--j")).toEqual(["--json"]);
    expect(complete("shardcrawl", "completion", "")).toEqual(["bash", "zsh"]);
  });

  it("zsh: lists the same flags and registers with compdef", () => {
    const r = run("completion", "zsh");
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^#compdef shardcrawl/);
    expect(r.stdout).toMatch(/crawl\) flags=\([^)]*--politeness-key/);
    expect(r.stdout).toMatch(/compdef _shardcrawl shardcrawl/);
  });

  // zsh is not on the CI image; where it is, the script must at least parse.
  const hasZsh = spawnSync("zsh", ["-c", "true"]).status === 0;
  it.skipIf(!hasZsh)("zsh: the script parses (zsh -n)", () => {
    const r = run("completion", "zsh");
    expect(spawnSync("zsh", ["-n"], { input: r.stdout, encoding: "utf8" }).status).toBe(0);
  });

  it("an unknown shell is a usage error", () => {
    const r = run("completion", "fish");
    expect(r.status).toBe(2);
  });
});
