// robots.txt: RFC 9309 matching (compileRobots) and fetching over a real server (fetchRobots).
import http from "node:http";
import net from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHttpClient, type HttpClient } from "../../src/fetch/http-client.js";
import {
  ROBOTS_MAX_BYTES,
  ROBOTS_TTL_MS,
  compileRobots,
  fetchRobots,
  normalizePercentEncoding,
  normalizeRules,
  productToken,
  type RobotsEntry,
} from "../../src/fetch/robots.js";
import { parseRetryAfter } from "../../src/fetch/retry-after.js";
import { listen, shutdown, trackConnections } from "./helpers/servers.js";
import { createRequire } from "node:module";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { prng } from "../prng.js";

const UA = "ShardCrawl/0.1 (+https://example.invalid/bot)";
const rules = (body: string): RobotsEntry => ({ kind: "rules", body, fetchedAt: 0 });
const allowed = (body: string, path: string, ua = UA) => compileRobots(rules(body), ua).isAllowed(`https://example.test${path}`);

describe("compileRobots (RFC 9309 matching)", () => {
  it("takes the product token from the user agent", () => {
    expect(productToken(UA)).toBe("shardcrawl");
    expect(productToken("my_bot-2/1.0")).toBe("my_bot-");
    expect(productToken("")).toBe("*");
  });

  it("selects our group case-insensitively, else *", () => {
    const body = "User-agent: *\nDisallow: /\n\nUser-agent: SHARDCRAWL\nDisallow: /private\n";
    expect(allowed(body, "/public")).toBe(true);
    expect(allowed(body, "/private/x")).toBe(false);
    expect(allowed(body, "/public", "otherbot/1.0")).toBe(false);
  });

  it("merges several groups for the same agent, and ignores * when ours exists", () => {
    const body = [
      "User-agent: shardcrawl",
      "Disallow: /a",
      "",
      "User-agent: *",
      "Disallow: /b",
      "",
      "User-agent: otherbot",
      "User-agent: shardcrawl",
      "Disallow: /c",
    ].join("\n");
    expect(allowed(body, "/a")).toBe(false);
    expect(allowed(body, "/c")).toBe(false);
    expect(allowed(body, "/b")).toBe(true);
    expect(allowed(body, "/b", "otherbot")).toBe(true);
    expect(allowed(body, "/c", "otherbot")).toBe(false);
  });

  it("uses the longest match, whichever order the rules come in", () => {
    const body = "User-agent: *\nAllow: /shop/cart/public\nDisallow: /shop/cart\nDisallow: /shop\nAllow: /shop/catalog\n";
    expect(allowed(body, "/shop")).toBe(false);
    expect(allowed(body, "/shop/catalog/1")).toBe(true);
    expect(allowed(body, "/shop/cart/x")).toBe(false);
    expect(allowed(body, "/shop/cart/public/1")).toBe(true);
    expect(allowed(body, "/other")).toBe(true);
  });

  it("lets allow win a tie between equally long rules", () => {
    expect(allowed("User-agent: *\nDisallow: /page\nAllow: /page\n", "/page")).toBe(true);
    expect(allowed("User-agent: *\nAllow: /page\nDisallow: /page\n", "/page")).toBe(true);
    expect(allowed("User-agent: *\nDisallow: /*.php\nAllow: /page\n", "/page.php")).toBe(false);
  });

  it("supports * and $ (and the query string is part of the path)", () => {
    const body = "User-agent: *\nDisallow: /*.pdf$\nDisallow: /*?sessionid=\nDisallow: /exact$\nDisallow: /fish*salmon\n";
    expect(allowed(body, "/docs/a.pdf")).toBe(false);
    expect(allowed(body, "/docs/a.pdf?x=1")).toBe(true);
    expect(allowed(body, "/docs/a.pdfx")).toBe(true);
    expect(allowed(body, "/list?sessionid=42")).toBe(false);
    expect(allowed(body, "/exact")).toBe(false);
    expect(allowed(body, "/exact/more")).toBe(true);
    expect(allowed(body, "/fish-and-salmon")).toBe(false);
    expect(allowed(body, "/fish")).toBe(true);
  });

  it("treats percent-encoded unreserved characters and UTF-8 as equivalent (RFC 9309 2.2.2)", () => {
    expect(normalizePercentEncoding("/foo/%62%61%7A/%2f%e3")).toBe("/foo/baz/%2F%E3");
    expect(allowed("User-agent: *\nDisallow: /foo/bar/%62%61%7A\n", "/foo/bar/baz")).toBe(false);
    expect(allowed("User-agent: *\nDisallow: /foo/bar/baz\n", "/foo/bar/%62%61%7A")).toBe(false);
    expect(allowed("User-agent: *\nDisallow: /~joe\n", "/%7Ejoe/x")).toBe(false);
    expect(allowed("User-agent: *\nDisallow: /foo/bar/ツ\n", "/foo/bar/%E3%83%84")).toBe(false);
    expect(allowed("User-agent: *\nDisallow: /foo/bar/%E3%83%84\n", "/foo/bar/ツ")).toBe(false);
    expect(allowed("User-agent: *\nDisallow: /a%2Fb\n", "/a/b")).toBe(true);
  });

  it("decides as robots-parser's own isAllowed does (random files, groups and paths)", () => {
    // compileRobots matches through its own prefix index; robots-parser, given the same text and
    // path, is the reference.
    const robotsParser = createRequire(import.meta.url)("robots-parser") as (url: string, body: string) => { isAllowed(url: string, ua: string): boolean | undefined };
    const next = prng(9309);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
    const pieces = ["/", "a", "b", "ab", "*", "%61", "%2f", "%E3%83%84", "ツ", "?", "=", ".", "-", "x/", "$"];
    const pattern = () => {
      let p = next() < 0.1 ? "*" : "/";
      for (let i = 0, n = Math.floor(next() * 6); i < n; i++) p += pick(pieces);
      return next() < 0.2 ? `${p}$` : p;
    };
    const paths = () => {
      let p = "/";
      for (let i = 0, n = Math.floor(next() * 7); i < n; i++) p += pick(pieces.filter((x) => x !== "*" && x !== "$"));
      return p;
    };
    let disallowed = 0;
    let checked = 0;
    for (let f = 0; f < 300; f++) {
      const lines: string[] = [];
      for (const agent of ["*", "shardcrawl", "otherbot"]) {
        if (next() < 0.4) continue;
        lines.push(`User-agent: ${agent}`);
        // Up to 60 rules: both the plain scan and the prefix index (32 rules or more) are compared.
        // At least one: a group without rules is where robots-parser and Google's parser differ
        // (Google: our empty group applies, allowing everything; tested on its own below).
        for (let r = 0, n = 1 + Math.floor(next() * (f % 2 === 0 ? 8 : 60)); r < n; r++) lines.push(`${next() < 0.3 ? "Allow" : "Disallow"}: ${pattern()}`);
      }
      const body = lines.join("\n");
      const compiled = compileRobots(rules(body), UA);
      const reference = robotsParser("http://robots.invalid/robots.txt", normalizeRules(body));
      for (let u = 0; u < 40; u++) {
        const url = new URL(`https://example.test${paths()}`);
        const path = url.pathname + url.search;
        const expected = path === "/robots.txt" || reference.isAllowed(`http://robots.invalid${normalizePercentEncoding(path)}`, "shardcrawl") !== false;
        expect(compiled.isAllowed(url.href), `${JSON.stringify(body)} ${path}`).toBe(expected);
        if (!expected) disallowed++;
        checked++;
      }
    }
    // Both answers occur often (the comparison is not trivially "allowed" everywhere).
    expect(disallowed).toBeGreaterThan(checked / 10);
    expect(disallowed).toBeLessThan(checked * 0.9);
  });

  it("checks a URL against a large file's rules (thousands sharing a prefix)", () => {
    const retired = Array.from({ length: 20_000 }, (_, i) => `Disallow: /zz-retired-${i.toString(36)}/`);
    const body = ["User-agent: *", "Disallow: /private/", "Allow: /zz-retired-1/ok$", ...retired, ""].join("\n");
    const c = compileRobots(rules(body), UA);
    expect(c.isAllowed("https://example.test/index.html")).toBe(true);
    expect(c.isAllowed("https://example.test/private/x")).toBe(false);
    expect(c.isAllowed("https://example.test/zz-retired-abc/x")).toBe(false);
    expect(c.isAllowed("https://example.test/zz-retired-1/ok")).toBe(true);
    expect(c.isAllowed("https://example.test/zz-retired-1/ok2")).toBe(false);
    expect(c.isAllowed("https://example.test/zz-retired-zzzz/x")).toBe(true);
  });

  it("holds a large file's rules compactly: well under a megabyte of heap for 500 KiB of rules", () => {
    const retired: string[] = [];
    for (let i = 0, n = 0; n < ROBOTS_MAX_BYTES; i++) {
      retired.push(`Disallow: /zz-retired-${i.toString(36)}/`);
      n += retired[i]!.length + 1;
    }
    const body = ["User-agent: *", "Disallow: /private/", "Sitemap: https://example.test/sitemap.xml", ...retired].join("\n");
    setFlagsFromString("--expose-gc");
    const gc = runInNewContext("gc") as () => void;
    gc();
    const before = process.memoryUsage().heapUsed;
    // Each file's own text (as a fetched body is), dropped after compiling; rules indexed by a first check.
    const kept = Array.from({ length: 10 }, (_, i) => compileRobots(rules(`${body}\n# copy ${i}`), UA));
    for (const c of kept) expect(c.isAllowed("https://example.test/zz-retired-1/x")).toBe(false);
    gc();
    const perFile = (process.memoryUsage().heapUsed - before) / kept.length;
    // An object and a string per rule came to ~4 MB per file.
    expect(perFile).toBeLessThan(1_000_000);
    expect(kept[0]!.bytes).toBeGreaterThan(perFile / 2);
    expect(kept[0]!.bytes).toBeLessThan(1_000_000);
  });

  it("always allows /robots.txt itself", () => {
    const c = compileRobots(rules("User-agent: *\nDisallow: /\n"), UA);
    expect(c.isAllowed("https://example.test/robots.txt")).toBe(true);
    expect(c.isAllowed("https://example.test/index.html")).toBe(false);
    const none = compileRobots({ kind: "disallow-all", retryAfterMs: 1, fetchedAt: 0 }, UA);
    expect(none.isAllowed("https://example.test/robots.txt")).toBe(true);
    expect(none.isAllowed("https://example.test/")).toBe(false);
    expect(compileRobots({ kind: "allow-all", fetchedAt: 0 }, UA).isAllowed("https://example.test/x")).toBe(true);
  });

  it("survives a byte order mark, comments, CRLF and junk lines", () => {
    const body = "\uFEFFUser-agent: *\r\nDisallow: /a # not /b\r\nthis is junk\r\nDisallow /nocolon\r\nthree words here /x\r\n";
    expect(allowed(body, "/a")).toBe(false);
    expect(allowed(body, "/b")).toBe(true);
    // Google's parser reads a two-word line without a colon as key and value (robots-rules.ts).
    expect(allowed(body, "/nocolon")).toBe(false);
    expect(allowed(body, "/x")).toBe(true);
  });

  it("reads Crawl-delay for our group (fractional seconds), never shortened: above the max it is too long", () => {
    const body = "User-agent: *\nCrawl-delay: 30\n\nUser-agent: shardcrawl\nCrawl-delay: 2.5\nDisallow: /x\n";
    expect(compileRobots(rules(body), UA).crawlDelayMs).toBe(2500);
    expect(compileRobots(rules(body), UA).crawlDelayTooLong).toBeUndefined();
    expect(compileRobots(rules(body), "otherbot").crawlDelayMs).toBe(30_000);
    const capped = compileRobots(rules(body), "otherbot", { maxCrawlDelayMs: 10_000 });
    expect(capped.crawlDelayMs).toBe(30_000);
    expect(capped.crawlDelayTooLong).toBe(true);
    // The default honours up to 300 s.
    expect(compileRobots(rules("User-agent: *\nCrawl-delay: 300\n"), UA).crawlDelayTooLong).toBeUndefined();
    expect(compileRobots(rules("User-agent: *\nCrawl-delay: 301\n"), UA).crawlDelayTooLong).toBe(true);
    expect(compileRobots(rules("User-agent: *\nCrawl-delay: soon\n"), UA).crawlDelayMs).toBeUndefined();
    expect(compileRobots(rules("User-agent: *\nCrawl-delay: -5\n"), UA).crawlDelayMs).toBeUndefined();
    expect(compileRobots(rules("User-agent: *\nDisallow: /\n"), UA).crawlDelayMs).toBeUndefined();
  });

  it("lists absolute http(s) sitemaps", () => {
    const body = "Sitemap: https://example.test/s1.xml\nUser-agent: *\nDisallow:\nSitemap: /relative.xml\nsitemap: http://example.test/s2.xml\n";
    expect(compileRobots(rules(body), UA).sitemaps).toEqual(["https://example.test/s1.xml", "http://example.test/s2.xml"]);
  });

  it("parses Retry-After as seconds or a date (the one parser robots.txt and page retries share)", () => {
    expect(parseRetryAfter("120", 0, Infinity)).toBe(120_000);
    expect(parseRetryAfter("Thu, 01 Jan 1970 00:01:00 GMT", 0, Infinity)).toBe(60_000);
    expect(parseRetryAfter("whenever", 0, Infinity)).toBeUndefined();
  });
});

describe("fetchRobots over HTTP", () => {
  let server: http.Server;
  let port: number;
  let other: http.Server;
  let otherPort: number;
  let client: HttpClient;
  const userAgents: string[] = [];
  const arrivals: Array<{ host: string; at: number }> = [];
  const bigBody = (() => {
    // 1 MB: an allowed prefix, then a rule that starts before the 500 KiB cut and ends after
    // it, then a rule wholly beyond it.
    const head = "User-agent: *\nDisallow: /early\n#";
    // the cut falls right after "Disallow: /cut" (14 bytes) of "Disallow: /cut-in-the-middle"
    const filler = "x".repeat(ROBOTS_MAX_BYTES - head.length - 15) + "\n";
    return head + filler + "Disallow: /cut-in-the-middle\n" + "#".repeat(400_000) + "\nDisallow: /\n";
  })();

  beforeAll(async () => {
    other = http.createServer((req, res) => {
      res.end("User-agent: *\nDisallow: /from-other-host\n");
    });
    trackConnections(other);
    otherPort = await listen(other);
    server = http.createServer((req, res) => {
      userAgents.push(req.headers["user-agent"] ?? "");
      arrivals.push({ host: (req.headers.host ?? "").split(":")[0] ?? "", at: Date.now() });
      const host = (req.headers.host ?? "").split(":")[0] ?? "";
      const hop = /^\/hop(\d+)\/robots.txt$/.exec(req.url ?? "");
      if (host === "rules.test") res.end("User-agent: *\nDisallow: /private\n");
      else if (host === "missing.test") res.writeHead(404).end("not found");
      else if (host === "gone.test") res.writeHead(410).end();
      else if (host === "broken.test") res.writeHead(500).end("oops");
      else if (host === "busy.test") res.writeHead(503, { "Retry-After": "120" }).end();
      else if (host === "slowdown.test") res.writeHead(429).end();
      else if (host === "big.test") res.end(bigBody);
      else if (host === "gzip.test") res.writeHead(200, { "Content-Encoding": "gzip" }).end(gzipSync("User-agent: *\nDisallow: /zipped\n"));
      else if (host === "bomb.test") res.writeHead(200, { "Content-Encoding": "gzip" }).end(gzipSync(Buffer.alloc(20 * 1024 * 1024, 35)));
      else if (host === "elsewhere.test") res.writeHead(301, { Location: `http://other.test:${otherPort}/robots.txt` }).end();
      else if (host.startsWith("chain")) {
        // chainN.test: N redirects, then the file
        const total = Number(host.slice(5, host.indexOf(".")));
        const n = hop ? Number(hop[1]) : 0;
        if (n < total) res.writeHead(302, { Location: `/hop${n + 1}/robots.txt` }).end();
        else res.end(`User-agent: *\nDisallow: /after-${n}\n`);
      } else res.writeHead(404).end();
    });
    trackConnections(server);
    port = await listen(server);
    const names = ["rules", "missing", "gone", "broken", "busy", "slowdown", "big", "gzip", "bomb", "elsewhere", "chain5", "chain6"];
    client = createHttpClient({
      userAgent: "default-agent/1",
      allowPrivate: true,
      maxBodyBytes: 1000, // the page cap must not limit robots.txt, which reads 500 KiB
      resolve: [...names.map((n) => `${n}.test:${port}:127.0.0.1`), `other.test:${otherPort}:127.0.0.1`],
    });
  });

  afterAll(async () => {
    await client.close();
    await shutdown(server);
    await shutdown(other);
  });

  const origin = (name: string) => `http://${name}.test:${port}`;

  it("turns a 200 into rules cached for 24 h, sending the given user agent", async () => {
    const r = await fetchRobots(client, origin("rules"), UA);
    expect(r.entry.kind).toBe("rules");
    expect(r.ttlMs).toBe(ROBOTS_TTL_MS);
    expect(r.status).toBe(200);
    expect(userAgents.at(-1)).toBe(UA);
    const c = compileRobots(r.entry, UA);
    expect(c.isAllowed(`${origin("rules")}/private/1`)).toBe(false);
    expect(c.isAllowed(`${origin("rules")}/public`)).toBe(true);
  });

  it.each(["missing", "gone"])("treats 4xx (%s) as allow-all", async (name) => {
    const r = await fetchRobots(client, origin(name), UA);
    expect(r.entry).toMatchObject({ kind: "allow-all" });
    expect(r.ttlMs).toBe(ROBOTS_TTL_MS);
  });

  it("treats 5xx as disallow-all with a short retry", async () => {
    const r = await fetchRobots(client, origin("broken"), UA);
    expect(r.entry).toMatchObject({ kind: "disallow-all", retryAfterMs: 10 * 60_000 });
    expect(r.ttlMs).toBe(10 * 60_000);
    expect(r.errorClass).toBe("robots-unavailable");
    expect(compileRobots(r.entry, UA).isAllowed(`${origin("broken")}/`)).toBe(false);
  });

  it("honours Retry-After on 503, and treats 429 as unavailable too", async () => {
    expect((await fetchRobots(client, origin("busy"), UA)).entry).toMatchObject({ kind: "disallow-all", retryAfterMs: 120_000 });
    expect((await fetchRobots(client, origin("slowdown"), UA)).entry.kind).toBe("disallow-all");
  });

  it("treats an unreachable host as disallow-all", async () => {
    const probe = net.createServer();
    const deadPort = await listen(probe);
    await shutdown(probe);
    const r = await fetchRobots(client, `http://127.0.0.1:${deadPort}`, UA);
    expect(r.entry.kind).toBe("disallow-all");
    expect(r.errorClass).toBe("connect");
  });

  it("treats a timeout as disallow-all", async () => {
    const silent = net.createServer(() => {});
    trackConnections(silent);
    const silentPort = await listen(silent);
    const c = createHttpClient({ userAgent: UA, allowPrivate: true, timeouts: { headersMs: 300 } });
    const r = await fetchRobots(c, `http://127.0.0.1:${silentPort}`, UA);
    await c.close();
    await shutdown(silent);
    expect(r.entry.kind).toBe("disallow-all");
    expect(r.errorClass).toBe("headers-timeout");
  });

  it("waits the politeness delay before following each redirect hop", async () => {
    arrivals.length = 0;
    const r = await fetchRobots(client, origin("chain5"), UA, { redirectDelayMs: 150 });
    expect(r.redirects).toBe(5);
    const times = arrivals.filter((a) => a.host === "chain5.test").map((a) => a.at);
    expect(times).toHaveLength(6);
    // The server sees each hop at least the delay after the previous one (responses are instant).
    for (let i = 1; i < times.length; i++) expect(times[i]! - times[i - 1]!).toBeGreaterThanOrEqual(150);
  });

  it("follows up to 5 redirects", async () => {
    const r = await fetchRobots(client, origin("chain5"), UA);
    expect(r.redirects).toBe(5);
    expect(r.entry.kind).toBe("rules");
    expect(compileRobots(r.entry, UA).isAllowed(`${origin("chain5")}/after-5`)).toBe(false);
  });

  it("gives up as unreachable at the 6th redirect", async () => {
    const r = await fetchRobots(client, origin("chain6"), UA);
    expect(r.entry.kind).toBe("disallow-all");
    expect(r.errorClass).toBe("redirect-limit");
    expect(r.redirects).toBe(5);
  });

  it("follows a redirect to another host and applies its rules", async () => {
    const r = await fetchRobots(client, origin("elsewhere"), UA);
    expect(r.finalUrl).toBe(`http://other.test:${otherPort}/robots.txt`);
    const c = compileRobots(r.entry, UA);
    expect(c.isAllowed(`${origin("elsewhere")}/from-other-host`)).toBe(false);
    expect(c.isAllowed(`${origin("elsewhere")}/fine`)).toBe(true);
  });

  it("reads at most 500 KiB of a 1 MB file and ignores the rest, including a rule cut in two", async () => {
    const r = await fetchRobots(client, origin("big"), UA);
    expect(r.entry.kind).toBe("rules");
    const body = r.entry.kind === "rules" ? r.entry.body : "";
    expect(body.length).toBeLessThanOrEqual(ROBOTS_MAX_BYTES);
    expect(body.length).toBeGreaterThan(ROBOTS_MAX_BYTES - 100);
    const c = compileRobots(r.entry, UA);
    expect(c.isAllowed(`${origin("big")}/early`)).toBe(false);
    expect(c.isAllowed(`${origin("big")}/cut`)).toBe(true); // the partial "Disallow: /cut" was dropped
    expect(c.isAllowed(`${origin("big")}/anything`)).toBe(true); // "Disallow: /" lies beyond the cut
  });

  it("decodes a gzip-encoded file, and caps a decompression bomb at 500 KiB", async () => {
    const zipped = await fetchRobots(client, origin("gzip"), UA);
    expect(compileRobots(zipped.entry, UA).isAllowed(`${origin("gzip")}/zipped`)).toBe(false);
    const bomb = await fetchRobots(client, origin("bomb"), UA);
    expect(bomb.entry.kind).toBe("rules");
    expect(bomb.entry.kind === "rules" && bomb.entry.body.length).toBeLessThanOrEqual(ROBOTS_MAX_BYTES);
  });
});
