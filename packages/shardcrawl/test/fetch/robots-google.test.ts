// robots.txt as Google's open-source parser (google/robotstxt) reads it, wherever RFC 9309 leaves
// room: one test per behaviour its published unit tests describe, written for our compileRobots
// (agent = the product token of our User-Agent). Where the RFC is explicit and Google differs,
// the RFC wins (noted in the test).
import { describe, expect, it } from "vitest";
import { compileRobots, type RobotsEntry } from "../../src/fetch/robots.js";
import { MAX_LINE_CHARS, agentOfValue, parseRobotsTxt } from "../../src/fetch/robots-rules.js";

const rules = (body: string): RobotsEntry => ({ kind: "rules", body, fetchedAt: 0 });
/** Is `path` allowed for agent `agent` (a User-Agent whose product token is the agent name)? */
const ok = (body: string, agent: string, path: string) => compileRobots(rules(body), `${agent}/1.0 (+https://example.org/bot)`).isAllowed(`http://foo.bar${path}`);

describe("robots.txt as Google's parser reads it", () => {
  it("an empty file allows everything; a file for another agent does not concern us", () => {
    expect(ok("", "FooBot", "/")).toBe(true);
    expect(ok("user-agent: BarBot\ndisallow: /\n", "FooBot", "/x")).toBe(true);
  });

  it("accepts a record without its colon when the line is exactly two words", () => {
    expect(ok("user-agent FooBot\ndisallow /\n", "FooBot", "/x/y")).toBe(false);
    expect(ok("user-agent: FooBot\ndisallow: /\n", "FooBot", "/x/y")).toBe(false);
    // Unknown keys mean nothing; three words without a colon are junk.
    expect(ok("foo: FooBot\nbar: /\n", "FooBot", "/x/y")).toBe(true);
    expect(ok("user-agent FooBot\ndisallow / now\n", "FooBot", "/x/y")).toBe(true);
  });

  it("groups: rules before any user-agent are ignored, blank lines do not end a run of user-agents, same-agent groups merge", () => {
    const body = [
      "allow: /foo/bar/", "", "user-agent: FooBot", "disallow: /", "allow: /x/", "user-agent: BarBot", "disallow: /", "allow: /y/",
      "", "", "allow: /w/", "user-agent: BazBot", "", "user-agent: FooBot", "allow: /z/", "disallow: /",
    ].join("\n");
    expect(ok(body, "FooBot", "/x/b")).toBe(true);
    expect(ok(body, "FooBot", "/z/d")).toBe(true);
    expect(ok(body, "FooBot", "/y/c")).toBe(false);
    expect(ok(body, "BarBot", "/y/c")).toBe(true);
    expect(ok(body, "BarBot", "/w/a")).toBe(true);
    expect(ok(body, "BarBot", "/z/d")).toBe(false);
    expect(ok(body, "BazBot", "/z/d")).toBe(true);
    for (const agent of ["FooBot", "BarBot", "BazBot"]) expect(ok(body, agent, "/foo/bar/"), agent).toBe(false);
  });

  it("key names are case-insensitive, matched by prefix, and the frequent typos count", () => {
    for (const [ua, dis, al] of [["USER-AGENT", "DISALLOW", "ALLOW"], ["uSeR-aGeNt", "dIsAlLoW", "AlLoW"], ["useragent", "disalow", "allowed"], ["user agent", "dissallow", "allow"]]) {
      const body = `${ua}: FooBot\n${al}: /x/\n${dis}: /\n`;
      expect(ok(body, "FooBot", "/x/y"), body).toBe(true);
      expect(ok(body, "FooBot", "/a/b"), body).toBe(false);
    }
    for (const typo of ["dissalow", "diasllow", "disallaw"]) expect(ok(`user-agent: FooBot\n${typo}: /a\n`, "FooBot", "/a"), typo).toBe(false);
    expect(parseRobotsTxt("site-map: http://foo.bar/s.xml\n").sitemaps).toEqual(["http://foo.bar/s.xml"]);
  });

  it("a user-agent value names the agent by its leading letters, '-' and '_', case-insensitively", () => {
    for (const value of ["FOO BAR", "foo bar", "FoO bAr", "Foo/2.1", "foo123"]) {
      const body = `User-Agent: ${value}\nAllow: /x/\nDisallow: /\n`;
      expect(ok(body, "Foo", "/x/y"), value).toBe(true);
      expect(ok(body, "foo", "/a/b"), value).toBe(false);
    }
    expect(agentOfValue("Foo-Bar_baz/1")).toBe("foo-bar_baz");
    expect(agentOfValue("* # everyone")).toBe("*");
    expect(agentOfValue("*bot")).toBe("");
    // "User-Agent: Foo Bar" is the group of Foo; our global rules do not apply to Foo then.
    const body = "User-Agent: *\nDisallow: /\nUser-Agent: Foo Bar\nAllow: /x/\nDisallow: /\n";
    expect(ok(body, "Foo", "/x/y")).toBe(true);
    expect(ok(body, "Bar", "/x/y")).toBe(false);
  });

  it("falls back to the * groups only when no group names us; with neither, nothing is disallowed", () => {
    const global = "user-agent: *\nallow: /\nuser-agent: FooBot\ndisallow: /\n";
    expect(ok(global, "FooBot", "/x/y")).toBe(false);
    expect(ok(global, "BarBot", "/x/y")).toBe(true);
    expect(ok("user-agent: FooBot\nallow: /\nuser-agent: BarBot\ndisallow: /\nuser-agent: BazBot\ndisallow: /\n", "QuxBot", "/x/y")).toBe(true);
    // A group naming us with no rules applies (and allows everything), the * rules do not.
    expect(ok("user-agent: *\ndisallow: /\n\nuser-agent: FooBot\n", "FooBot", "/x")).toBe(true);
  });

  it("rule values are case-sensitive", () => {
    expect(ok("user-agent: FooBot\ndisallow: /x/\n", "FooBot", "/x/y")).toBe(false);
    expect(ok("user-agent: FooBot\ndisallow: /X/\n", "FooBot", "/x/y")).toBe(true);
  });

  it("the longest matching pattern decides; on a tie (also empty patterns) allow wins", () => {
    const g = (lines: string) => `user-agent: FooBot\n${lines}`;
    expect(ok(g("disallow: /x/page.html\nallow: /x/\n"), "FooBot", "/x/page.html")).toBe(false);
    expect(ok(g("allow: /x/page.html\ndisallow: /x/\n"), "FooBot", "/x/page.html")).toBe(true);
    expect(ok(g("allow: /x/page.html\ndisallow: /x/\n"), "FooBot", "/x/")).toBe(false);
    expect(ok(g("disallow: \nallow: \n"), "FooBot", "/x/page.html")).toBe(true);
    expect(ok(g("disallow:\n"), "FooBot", "/x")).toBe(true);
    expect(ok(g("disallow: /\nallow: /\n"), "FooBot", "/x/page.html")).toBe(true);
    expect(ok(g("disallow: /x\nallow: /x/\n"), "FooBot", "/x")).toBe(false);
    expect(ok(g("disallow: /x\nallow: /x/\n"), "FooBot", "/x/")).toBe(true);
    expect(ok(g("disallow: /x/page.html\nallow: /x/page.html\n"), "FooBot", "/x/page.html")).toBe(true);
    expect(ok(g("allow: /page\ndisallow: /*.html\n"), "FooBot", "/page.html")).toBe(false);
    expect(ok(g("allow: /page\ndisallow: /*.html\n"), "FooBot", "/page")).toBe(true);
    expect(ok(g("allow: /x/page.\ndisallow: /*.html\n"), "FooBot", "/x/page.html")).toBe(true);
    expect(ok(g("allow: /x/page.\ndisallow: /*.html\n"), "FooBot", "/x/y.html")).toBe(false);
    const specific = "User-agent: *\nDisallow: /x/\nUser-agent: FooBot\nDisallow: /y/\n";
    expect(ok(specific, "FooBot", "/x/page")).toBe(true);
    expect(ok(specific, "FooBot", "/y/page")).toBe(false);
  });

  it("encoding: a query may hold a URL; non-ASCII in a rule matches the percent-encoded path", () => {
    expect(ok("User-agent: FooBot\nDisallow: /\nAllow: /foo/bar?qux=taz&baz=http://foo.bar?tar&par\n", "FooBot", "/foo/bar?qux=taz&baz=http://foo.bar?tar&par")).toBe(true);
    expect(ok("User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/ツ\n", "FooBot", "/foo/bar/%E3%83%84")).toBe(true);
    expect(ok("User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%E3%83%84\n", "FooBot", "/foo/bar/%E3%83%84")).toBe(true);
    expect(ok("User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%e3%83%84\n", "FooBot", "/foo/bar/%E3%83%84")).toBe(true);
    // Google does not equate %62%61%7A with "baz"; RFC 9309 2.2.2 does, and the RFC wins here.
    expect(ok("User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot", "/foo/bar/baz")).toBe(true);
    expect(ok("User-agent: FooBot\nDisallow: /\nAllow: /foo/bar/%62%61%7A\n", "FooBot", "/foo/bar/%62%61%7A")).toBe(true);
  });

  it("special characters: * matches any run, a final $ anchors the end, # starts a comment", () => {
    const star = "User-agent: FooBot\nDisallow: /foo/bar/quz\nAllow: /foo/*/qux\n";
    expect(ok(star, "FooBot", "/foo/bar/quz")).toBe(false);
    expect(ok(star, "FooBot", "/foo/quz")).toBe(true);
    expect(ok(star, "FooBot", "/foo//quz")).toBe(true);
    expect(ok(star, "FooBot", "/foo/bax/quz")).toBe(true);
    const dollar = "User-agent: FooBot\nDisallow: /foo/bar$\nAllow: /foo/bar/qux\n";
    expect(ok(dollar, "FooBot", "/foo/bar")).toBe(false);
    expect(ok(dollar, "FooBot", "/foo/bar/qux")).toBe(true);
    expect(ok(dollar, "FooBot", "/foo/bar/")).toBe(true);
    expect(ok(dollar, "FooBot", "/foo/bar/baz")).toBe(true);
    const hash = "User-agent: FooBot\n# Disallow: /\nDisallow: /foo/quz#qux\nAllow: /\n";
    expect(ok(hash, "FooBot", "/foo/bar")).toBe(true);
    expect(ok(hash, "FooBot", "/foo/quz")).toBe(false);
  });

  it("Allow: .../index.html also allows the directory itself (exactly)", () => {
    const body = "User-Agent: *\nAllow: /allowed-slash/index.html\nDisallow: /\n";
    expect(ok(body, "foobot", "/allowed-slash/")).toBe(true);
    expect(ok(body, "foobot", "/allowed-slash/index.htm")).toBe(false);
    expect(ok(body, "foobot", "/allowed-slash/index.html")).toBe(true);
    expect(ok(body, "foobot", "/allowed-slash/other")).toBe(false);
    expect(ok(body, "foobot", "/anyother-url")).toBe(false);
    expect(ok("User-Agent: *\nAllow: /d/index.htm\nDisallow: /\n", "foobot", "/d/")).toBe(true);
    // Only for Allow: a disallowed index.html leaves the directory alone.
    expect(ok("User-Agent: *\nDisallow: /d/index.html\n", "foobot", "/d/")).toBe(true);
  });

  it("reads a line only up to its first 16,663 characters", () => {
    const disallow = "disallow: ";
    let long = "/x/";
    while (disallow.length + long.length < MAX_LINE_CHARS) long += "a";
    const body = `user-agent: FooBot\n${disallow}${long}/qux\n`;
    expect(ok(body, "FooBot", "/fux")).toBe(true);
    // The cut rule "/x/aaa...a" (without "/qux") matches.
    expect(ok(body, "FooBot", `${long}/fux`)).toBe(false);
    let longA = "/x/";
    while ("allow: ".length + longA.length < MAX_LINE_CHARS) longA += "a";
    const longB = longA.replace(/a/g, "b");
    const allows = `user-agent: FooBot\ndisallow: /\nallow: ${longA}/qux\nallow: ${longB}/qux\n`;
    expect(ok(allows, "FooBot", "/")).toBe(false);
    expect(ok(allows, "FooBot", `${longA}/fux`)).toBe(true);
    expect(ok(allows, "FooBot", `${longB}/fux`)).toBe(true);
  });

  it("the documented examples: /fish, /fish*, /fish/, /*.php, /*.php$, /fish*.php, /$", () => {
    const g = (allow: string) => `user-agent: FooBot\ndisallow: /\nallow: ${allow}\n`;
    for (const allow of ["/fish", "/fish*"]) {
      for (const p of ["/fish", "/fish.html", "/fish/salmon.html", "/fishheads", "/fishheads/yummy.html", "/fish.html?id=anything"]) expect(ok(g(allow), "FooBot", p), `${allow} ${p}`).toBe(true);
      for (const p of ["/bar", "/Fish.asp", "/catfish", "/?id=fish"]) expect(ok(g(allow), "FooBot", p), `${allow} ${p}`).toBe(false);
    }
    for (const p of ["/fish/", "/fish/salmon", "/fish/?salmon", "/fish/salmon.html", "/fish/?id=anything"]) expect(ok(g("/fish/"), "FooBot", p), p).toBe(true);
    for (const p of ["/fish", "/fish.html", "/Fish/Salmon.html"]) expect(ok(g("/fish/"), "FooBot", p), p).toBe(false);
    for (const p of ["/filename.php", "/folder/filename.php", "/folder/filename.php?parameters", "//folder/any.php.file.html", "/filename.php/", "/index?f=filename.php/"]) expect(ok(g("/*.php"), "FooBot", p), p).toBe(true);
    for (const p of ["/php/", "/index?php", "/windows.PHP"]) expect(ok(g("/*.php"), "FooBot", p), p).toBe(false);
    for (const p of ["/filename.php", "/folder/filename.php"]) expect(ok(g("/*.php$"), "FooBot", p), p).toBe(true);
    for (const p of ["/filename.php?parameters", "/filename.php/", "/filename.php5", "/php/", "/filename?php", "/aaaphpaaa", "//windows.PHP"]) expect(ok(g("/*.php$"), "FooBot", p), p).toBe(false);
    expect(ok(g("/fish*.php"), "FooBot", "/fish.php")).toBe(true);
    expect(ok(g("/fish*.php"), "FooBot", "/fishheads/catfish.php?parameters")).toBe(true);
    expect(ok(g("/fish*.php"), "FooBot", "/Fish.PHP")).toBe(false);
    expect(ok("user-agent: FooBot\nallow: /p\ndisallow: /\n", "FooBot", "/page")).toBe(true);
    expect(ok("user-agent: FooBot\nallow: /folder\ndisallow: /folder\n", "FooBot", "/folder/page")).toBe(true);
    expect(ok("user-agent: FooBot\nallow: /page\ndisallow: /*.htm\n", "FooBot", "/page.htm")).toBe(false);
    expect(ok("user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot", "/")).toBe(true);
    expect(ok("user-agent: FooBot\nallow: /$\ndisallow: /\n", "FooBot", "/page.html")).toBe(false);
  });

  it("line endings: LF, CRLF, CR alone, mixed, and no final newline", () => {
    for (const nl of ["\n", "\r\n", "\r"]) {
      const body = ["User-Agent: foo", "Allow: /some/path", "User-Agent: bar", "", "", "Disallow: /"].join(nl);
      // Two groups: foo (allow /some/path), then bar (disallow /), whatever the line ends.
      expect(parseRobotsTxt(body).groups.map((g) => g.rules.length), JSON.stringify(nl)).toEqual([1, 1]);
      expect(ok(body, "foo", "/other"), JSON.stringify(nl)).toBe(true);
      expect(ok(body, "bar", "/other"), JSON.stringify(nl)).toBe(false);
    }
    const mixed = "User-Agent: foo\nAllow: /some/path\r\nUser-Agent: bar\n\r\n\nDisallow: /";
    expect(ok(mixed, "bar", "/x")).toBe(false);
    expect(parseRobotsTxt(mixed).groups.map((g) => g.rules.length)).toEqual([1, 1]);
  });

  it("a byte order mark is skipped, also a partial one; a broken one spoils only the first line", () => {
    const rulesOf = (body: string) => parseRobotsTxt(body).groups.flatMap((g) => g.rules).length;
    expect(rulesOf("\uFEFFUser-Agent: foo\nAllow: /AnyValue\n")).toBe(1);
    // EF BB and EF alone decode (WHATWG UTF-8) to one U+FFFD before the first key.
    expect(rulesOf(new TextDecoder().decode(Buffer.from([0xef, 0xbb, ...Buffer.from("User-Agent: foo\nAllow: /AnyValue\n")])))).toBe(1);
    expect(rulesOf(new TextDecoder().decode(Buffer.from([0xef, ...Buffer.from("User-Agent: foo\nAllow: /AnyValue\n")])))).toBe(1);
    // EF 11 BF is garbage: the user-agent line is lost, so the allow has no group.
    expect(rulesOf(new TextDecoder().decode(Buffer.from([0xef, 0x11, 0xbf, ...Buffer.from("User-Agent: foo\nAllow: /AnyValue\n")])))).toBe(0);
    // A BOM in the middle spoils its line.
    expect(rulesOf("User-Agent: foo\n\uFEFFAllow: /AnyValue\n")).toBe(0);
  });

  it("a Sitemap line may stand anywhere", () => {
    expect(parseRobotsTxt("User-Agent: foo\nAllow: /some/path\nUser-Agent: bar\n\n\nSitemap: http://foo.bar/sitemap.xml\n").sitemaps).toEqual(["http://foo.bar/sitemap.xml"]);
    expect(parseRobotsTxt("Sitemap: http://foo.bar/sitemap.xml\nUser-Agent: foo\nAllow: /some/path\n").sitemaps).toEqual(["http://foo.bar/sitemap.xml"]);
    expect(compileRobots(rules("Sitemap: http://foo.bar/sitemap.xml\nUser-Agent: foo\nAllow: /x\n"), "foo").sitemaps).toEqual(["http://foo.bar/sitemap.xml"]);
  });

  it("Crawl-delay (not Google's) does not split a group, and belongs to the user-agents written just before it", () => {
    const body = "User-agent: *\nCrawl-delay: 30\nUser-agent: FooBot\nCrawl-delay: 2\nDisallow: /x\n";
    expect(compileRobots(rules(body), "FooBot/1").crawlDelayMs).toBe(2000);
    expect(compileRobots(rules(body), "other/1").crawlDelayMs).toBe(30_000);
    // One group as Google reads it: the Disallow applies to both agents.
    expect(ok(body, "FooBot", "/x")).toBe(false);
    expect(ok(body, "other", "/x")).toBe(false);
    expect(compileRobots(rules("User-agent: a\nUser-agent: b\nCrawl-delay: 4\n"), "b/1").crawlDelayMs).toBe(4000);
  });
});
