// The real-page web: hrefs rewritten onto served hosts, the rest of a body byte for byte, over real
// HTTP and HTTPS with robots.txt on every host.
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { Agent as HttpAgent, request as httpRequest } from "node:http";
import { RealWeb, startRealweb, type RunningRealweb } from "../src/realweb.js";
import { get } from "./client.js";

const PAGE = `<html><head><link rel="canonical" href="http://www.origin.com/a/page.html"></head><body>
<a href="/nav">nav</a> <a href="/nav">nav again</a> <a href='http://origin.com/about?x=1&amp;y=2'>about</a>
<a href=https://other-site.org/p>other</a> <a href="mailto:x@y.z">mail</a> <a href="#top">top</a>
<p>caf\xe9 latin-1 bytes stay</p></body></html>`;

function corpus(): string {
  const dir = mkdtempSync(join(tmpdir(), "realweb-corpus-"));
  writeFileSync(join(dir, "a.html"), Buffer.from(PAGE, "latin1"));
  return dir;
}

function hrefs(html: string): string[] {
  return [...html.matchAll(/href=["']?([^"'\s>]+)/g)].map((m) => m[1]!);
}

describe("RealWeb", () => {
  test("rewrites same-site links onto the serving host and keeps the page's link count and duplicates", () => {
    const web = new RealWeb({ corpusDir: corpus(), hosts: 3, templatesPerHost: 1, externalInScope: 0, seed: 1 });
    const html = web.page("http", 2, "/any/path", false).toString("latin1");
    expect(hrefs(html)).toEqual([
      "http://www.real2.test/a/page.html", // the canonical link is a same-site href too
      "http://www.real2.test/nav", "http://www.real2.test/nav", "http://www.real2.test/about?x=1&amp;y=2",
      "https://other-site.org/p", "mailto:x@y.z", "#top",
    ]);
    expect(html).toContain("caf\xe9 latin-1 bytes stay"); // bytes outside hrefs unchanged
    expect(web.stats).toMatchObject({ templates: 1, hrefsPerPage: 7, sameSitePerPage: 4, otherServedPerPage: 0, outOfScopePerPage: 1, otherPerPage: 2 });
  });

  test("maps another site's links onto one served host when that site is in scope", () => {
    const web = new RealWeb({ corpusDir: corpus(), hosts: 3, templatesPerHost: 1, externalInScope: 1, seed: 1 });
    const a = hrefs(web.page("https", 0, "/", false).toString("latin1")).find((h) => h.endsWith("/p"));
    const b = hrefs(web.page("https", 1, "/x", false).toString("latin1")).find((h) => h.endsWith("/p"));
    expect(a).toMatch(/^https:\/\/www\.real\d\.test\/p$/);
    expect(b).toBe(a); // the same original URL is the same served URL on every page
  });
});

describe("realweb over HTTP and HTTPS", () => {
  let sim: RunningRealweb;
  beforeAll(async () => {
    sim = await startRealweb({ corpusDir: corpus(), hosts: 2, templatesPerHost: 1, externalInScope: 0.5, seed: 1 });
  });
  afterAll(async () => {
    await sim?.close();
  });

  test("serves pages (gzip when accepted), robots.txt, and refuses unknown hosts", async () => {
    const page = await get(sim, "http://www.real1.test/x", { headers: { "accept-encoding": "gzip" } });
    expect(page.status).toBe(200);
    expect(gunzipSync(page.body).toString("latin1")).toContain("http://www.real1.test/nav");
    const robots = await get(sim, "http://www.real0.test/robots.txt");
    expect(robots.body.toString()).toMatch(/^User-agent: \*/);
    expect((await get(sim, "http://www.elsewhere.test/")).status).toBe(421);
  });

  test("HTTPS with a certificate for the host, signed by the printed CA", async () => {
    const r = await get(sim, "https://www.real0.test/");
    expect(r.status).toBe(200);
    const body = r.body.toString("latin1");
    expect(body).toContain("https://www.real0.test/nav");
  });
});

describe("realweb --connection-close", () => {
  /** Two GETs through one keep-alive agent; true when the second went over the first's socket. */
  async function secondReusesSocket(sim: RunningRealweb): Promise<{ reused: boolean; connection: string | undefined }> {
    const agent = new HttpAgent({ keepAlive: true, maxSockets: 1 });
    const one = (): Promise<{ socket: object; connection: string | undefined }> =>
      new Promise((resolve, reject) => {
        const req = httpRequest({ host: "127.0.0.1", port: sim.httpPort, path: "/p", agent, headers: { host: "www.real0.test" } }, (res) => {
          res.resume();
          res.on("end", () => resolve({ socket: req.socket!, connection: res.headers.connection }));
        });
        req.on("error", reject);
        req.end();
      });
    const a = await one();
    // The agent takes a kept-alive socket back on the next turns of the event loop.
    await new Promise((r) => setTimeout(r, 50));
    const b = await one();
    agent.destroy();
    return { reused: a.socket === b.socket, connection: b.connection };
  }

  test("answers Connection: close and closes the socket, so every request opens a new connection", async () => {
    const closing = await startRealweb({ corpusDir: corpus(), hosts: 1, templatesPerHost: 1, externalInScope: 0, seed: 1, connectionClose: true });
    const keeping = await startRealweb({ corpusDir: corpus(), hosts: 1, templatesPerHost: 1, externalInScope: 0, seed: 1 });
    try {
      expect(await secondReusesSocket(closing)).toEqual({ reused: false, connection: "close" });
      expect(await secondReusesSocket(keeping)).toEqual({ reused: true, connection: "keep-alive" });
    } finally {
      await closing.close();
      await keeping.close();
    }
  });
});
