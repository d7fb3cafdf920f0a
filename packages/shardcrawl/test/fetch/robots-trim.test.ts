// The cached form of robots.txt (fetch/robots-trim.ts) decides exactly as the whole file does:
// for every file of a corpus (simweb's robots kinds, the real web bench's file, hand-written
// RFC 9309 / Google-parser corner cases, and generated files), for several user agents and many
// paths derived from the file's own patterns, compileRobots gives the same verdict, Crawl-delay
// and sitemaps on the trimmed copy as on the whole file.
import { describe, expect, it } from "vitest";
import { makeConfig, RealWeb, ROBOTS_KINDS, World } from "../../../simweb/src/index.js";
import { compileRobots, type RobotsEntry } from "../../src/fetch/robots.js";
import { robotsBodyServes, trimRobotsBody } from "../../src/fetch/robots-trim.js";
import { groupsFor, parseRobotsTxt } from "../../src/fetch/robots-rules.js";

const AGENTS = ["shardcrawl/0.1 (+https://x.test/bot)", "ShardCrawl", "otherbot/2.0", "BadBot", "googlebot", "foo", "bar-baz_bot/1", "123bot"];
const rules = (body: string): RobotsEntry => ({ kind: "rules", body, fetchedAt: 0 });

/** Paths that exercise a file's own patterns: each with `*` filled in several ways, `$` kept or dropped, suffixes, case. */
function pathsFor(body: string): string[] {
  const out = new Set<string>(["/", "/robots.txt", "/index.html", "/a", "/a/b", "/x?y=1", "/%7Ebob/", "/~bob/", "/tmp", "/tmpfile", "/private/a.html", "/private/a.htm",
    "/wiki/Main", "/calendar/2026/12", "/go/x", "/doc.pdf", "/doc.pdf?x", "/p.php", "/p.php?a=1", "/s?sort=top", "/s?ref=side", "/ツ", "/%E3%83%84", "/%62%61%7A", "/baz"]);
  for (const g of parseRobotsTxt(body).groups) {
    for (const r of g.rules.slice(0, 120)) {
      const p = r.pattern.startsWith("/") ? r.pattern : `/${r.pattern}`;
      for (const fill of ["", "x", "a/b.c", "?q=1"]) {
        const base = p.replaceAll("*", fill);
        for (const v of [base, base.replace(/\$$/, ""), `${base.replace(/\$$/, "")}z`, `${base.replace(/\$$/, "")}/`, base.toUpperCase(), base.slice(0, -1)]) {
          if (v !== "") out.add(v.startsWith("/") ? v : `/${v}`);
        }
      }
    }
  }
  return [...out];
}

/** Differences between deciding on the whole file and on `trimmed`, for `agent` (empty: none). */
function differences(body: string, trimmed: string, agent: string): string[] {
  const whole = compileRobots(rules(body), agent, { maxCrawlDelayMs: 10_000 });
  const cut = compileRobots(rules(trimmed), agent, { maxCrawlDelayMs: 10_000 });
  const diffs: string[] = [];
  if (whole.crawlDelayMs !== cut.crawlDelayMs) diffs.push(`crawl-delay ${whole.crawlDelayMs} vs ${cut.crawlDelayMs}`);
  if (whole.crawlDelayTooLong !== cut.crawlDelayTooLong) diffs.push("crawl-delay too long");
  if (JSON.stringify(whole.sitemaps) !== JSON.stringify(cut.sitemaps)) diffs.push(`sitemaps ${JSON.stringify(whole.sitemaps)} vs ${JSON.stringify(cut.sitemaps)}`);
  for (const path of pathsFor(body)) {
    let url: string;
    try {
      url = new URL(path, "https://h.test").href;
    } catch {
      continue;
    }
    if (whole.isAllowed(url) !== cut.isAllowed(url)) diffs.push(`${path}: ${whole.isAllowed(url)} vs ${cut.isAllowed(url)}`);
  }
  return diffs;
}

function simwebFiles(): Array<[string, string]> {
  const counts = Object.fromEntries(ROBOTS_KINDS.map((k) => [k, 1])) as Record<(typeof ROBOTS_KINDS)[number], number>;
  const world = new World(makeConfig({ preset: "tiny", seed: 7, hosts: 400, robots: counts }));
  const out: Array<[string, string]> = [];
  const seen = new Set<string>();
  for (let i = 0; i < 400; i++) {
    const h = world.model(i);
    const text = world.robots.text(h);
    // Every kind, and a few hosts of each (the generator draws rules, agents and case per host).
    const key = `${h.info.robots}:${out.filter(([k]) => k.startsWith(`${h.info.robots}:`)).length}`;
    if (text === null || seen.has(key) || out.filter(([k]) => k.startsWith(`${h.info.robots}:`)).length >= 4) continue;
    seen.add(key);
    out.push([key, text]);
  }
  return out;
}

const HAND: Array<[string, string]> = [
  ["empty", ""],
  ["comments only", "# nothing here\n# at all\n"],
  ["own group wins, case-insensitive", "User-agent: *\nDisallow: /\n\nUser-agent: ShardCrawl\nDisallow: /private\nAllow: /private/ok\n"],
  ["own groups merged", "User-agent: shardcrawl\nDisallow: /a\n\nUser-agent: other\nDisallow: /\n\nUser-agent: SHARDCRAWL/2.0\nAllow: /a/b\nDisallow: /c$\n"],
  ["star groups merged", "User-agent: *\nDisallow: /a\nUser-agent: x\nDisallow: /\nUser-agent: *\nDisallow: /b*c$\nAllow: /b/ok\n"],
  ["longest wins, allow wins ties", "User-agent: *\nDisallow: /page\nAllow: /page\nDisallow: /page/\nAllow: /*.html\nDisallow: /p*\n"],
  ["wildcards and anchors", "User-agent: *\nDisallow: /*.pdf$\nDisallow: /*?sort=\nAllow: /$\nDisallow: /\nAllow: /*/public/*\n"],
  ["index.html rule", "User-agent: *\nDisallow: /x/\nAllow: /x/index.html\nAllow: /y/index.htm\n"],
  ["no colon, typos", "user-agent shardcrawl\ndisallow /nocolon\nuseragent: other\ndisalow: /typo\ndissallow: /t2\nUSER AGENT: *\nDISALLOW: /upper\n"],
  ["crawl-delay inside a run of agents", "User-agent: *\nCrawl-delay: 30\nUser-agent: shardcrawl\nCrawl-delay: 2\nDisallow: /z\n"],
  ["crawl-delay junk first", "User-agent: shardcrawl\nCrawl-delay: soon\nCrawl-delay: -1\nCrawl-delay: 4.5\nCrawl-delay: 9\nDisallow:\n"],
  ["crawl-delay only", "User-agent: *\nCrawl-delay: 20\n"],
  ["crawl-delay too long", "User-agent: *\nCrawl-delay: 600\nDisallow: /q\n"],
  ["rules before any agent", "Disallow: /orphan\nSitemap: https://h.test/s.xml\nUser-agent: *\nDisallow: /k\n"],
  ["sitemaps", "Sitemap: https://h.test/a.xml\nsite-map: http://h.test/b.xml\nSitemap: /relative.xml\nSitemap: https://h.test/a.xml\nSitemap: ftp://h.test/c.xml\nUser-agent: *\nAllow: /\n"],
  ["percent encoding", "User-agent: *\nDisallow: /%7Ebob/\nDisallow: /%62%61%7A\nDisallow: /ツ\nAllow: /%e3%83%84/ok\nDisallow: /a%2Fb\n"],
  ["bom, crlf and comments", "\uFEFFUser-agent: * # everyone\r\nDisallow: /c # comment\r\n\r\nUser-agent: shardcrawl\r\nAllow: /c\r\n"],
  ["lone cr line ends", "User-agent: *\rDisallow: /r\rAllow: /r/ok\r"],
  ["empty disallow", "User-agent: shardcrawl\nDisallow:\n\nUser-agent: *\nDisallow: /\n"],
  ["agent values", "User-agent: shardcrawl-beta\nDisallow: /beta\n\nUser-agent: shard crawl\nDisallow: /shard\n\nUser-agent: *bot\nDisallow: /starbot\n"],
  ["long line", `User-agent: *\nDisallow: /${"a".repeat(20_000)}\nDisallow: /short\n`],
  ["unknown lines", "User-agent: *\nHost: h.test\nClean-param: ref /\nNoindex: /x\nDisallow: /d\n"],
];

/** Files generated from a small grammar of real-shaped lines (seeded, so a failure repeats). */
function generatedFiles(n: number): Array<[string, string]> {
  let s = 12345;
  const rnd = (k: number) => ((s = (s * 1103515245 + 12345) & 0x7fffffff) % k);
  const pick = <T,>(xs: readonly T[]) => xs[rnd(xs.length)]!;
  const agents = ["*", "shardcrawl", "ShardCrawl/1.0", "otherbot", "BadBot", "googlebot", "foo"];
  const keys = ["Disallow", "Allow", "disallow", "ALLOW", "disalow"];
  const paths = ["/", "/a", "/a/", "/a/*", "/*.pdf$", "/a$", "/*?x=", "/b/index.html", "/%7Ec", "/~c", "/a*b", "/x/y/z", ""];
  const out: Array<[string, string]> = [];
  for (let f = 0; f < n; f++) {
    const lines: string[] = [];
    for (let i = 0, m = 1 + rnd(30); i < m; i++) {
      const r = rnd(10);
      if (r < 2) lines.push(`User-agent: ${pick(agents)}`);
      else if (r < 8) lines.push(`${pick(keys)}: ${pick(paths)}${rnd(3) === 0 ? pick(["a", "/", "*", "$"]) : ""}`);
      else if (r < 9) lines.push(`Crawl-delay: ${pick(["1", "2.5", "x", "400", ".5"])}`);
      else lines.push(pick(["", "# c", `Sitemap: https://h.test/${rnd(3)}.xml`]));
    }
    out.push([`generated ${f}`, lines.join(pick(["\n", "\r\n"]))]);
  }
  return out;
}

const CORPUS: Array<[string, string]> = [
  ...simwebFiles(),
  // The real web bench serves one file on every host (it needs no corpus to build).
  ["realweb", RealWeb.prototype.robots.call(undefined as never)],
  ...HAND,
  ...generatedFiles(300),
];

describe("trimmed robots.txt (the cached form)", () => {
  it("the comparison can fail: a copy missing one rule, or with another Crawl-delay, is caught", () => {
    const body = "User-agent: *\nDisallow: /a\nDisallow: /b\nCrawl-delay: 2\n";
    expect(differences(body, "User-agent: *\nDisallow: /a\nCrawl-delay: 2\n", AGENTS[0]!)).not.toEqual([]);
    expect(differences(body, "User-agent: *\nDisallow: /a\nDisallow: /b\nCrawl-delay: 3\n", AGENTS[0]!)).not.toEqual([]);
    // And a copy trimmed for one agent is not the file for another.
    const two = "User-agent: shardcrawl\nDisallow: /own\n\nUser-agent: *\nDisallow: /star\n# a comment long enough that trimming pays\n";
    expect(differences(two, trimRobotsBody(two, "otherbot"), AGENTS[0]!)).not.toEqual([]);
  });

  it("covers every simweb kind that serves a file, and the large one", () => {
    const kinds = new Set(simwebFiles().map(([k]) => k.split(":")[0]));
    for (const k of ["empty", "rules", "agent-specific", "crawl-delay", "sitemap", "large", "disallow-all"]) expect(kinds).toContain(k);
  });

  it("decides every path, Crawl-delay and sitemap exactly as the whole file, for every agent", () => {
    const failures: string[] = [];
    for (const [name, body] of CORPUS) {
      for (const agent of AGENTS) {
        const trimmed = trimRobotsBody(body, agent);
        expect(trimmed.length).toBeLessThanOrEqual(body.length);
        for (const d of differences(body, trimmed, agent).slice(0, 3)) failures.push(`${name} / ${agent}: ${d}`);
      }
    }
    expect(failures).toEqual([]);
  });

  it("keeps only our group: another agent's rules and the other groups are gone", () => {
    const body = "User-agent: *\nDisallow: /star\n\nUser-agent: shardcrawl\nDisallow: /own\nCrawl-delay: 3\n\nUser-agent: badbot\nDisallow: /\n# a long comment\nSitemap: https://h.test/s.xml\n";
    const t = trimRobotsBody(body, AGENTS[0]!);
    expect(t).toContain("/own");
    expect(t).not.toContain("/star");
    expect(t).not.toContain("badbot");
    expect(t).toContain("Sitemap:https://h.test/s.xml");
    // inspect host shows the same rules, as written.
    expect(groupsFor(parseRobotsTxt(t), "shardcrawl").groups.flatMap((g) => g.lines)).toEqual(["Crawl-delay: 3", "Disallow: /own"]);
  });

  it("a large file whose rules all apply to us shrinks only by what does not decide", () => {
    const large = simwebFiles().find(([k]) => k.startsWith("large"))![1];
    const t = trimRobotsBody(large, AGENTS[0]!);
    expect(t.length).toBeLessThan(large.length);
    expect(differences(large, t, AGENTS[0]!)).toEqual([]);
  });

  it("a trimmed copy serves only the agent it was trimmed for; a whole file serves any", () => {
    const body = "User-agent: shardcrawl\nDisallow: /own\n\nUser-agent: *\nDisallow: /star\n# padding padding padding\n";
    const t = trimRobotsBody(body, "shardcrawl/0.1");
    expect(robotsBodyServes(t, "ShardCrawl/9")).toBe(true);
    expect(robotsBodyServes(t, "otherbot/1")).toBe(false);
    expect(robotsBodyServes(body, "otherbot/1")).toBe(true);
  });
});
