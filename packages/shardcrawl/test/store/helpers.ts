// Test helpers for the store: fetched pages of every shape, and reading WARC files back with warcio
// (the standard reader) so the tests prove our files are readable by other tools.
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { WARCParser } from "warcio";
import type { FetchedPage } from "../../src/shared/types.js";
import { prng } from "../prng.js";

export { prng };

export async function tempDir(tag: string): Promise<string> {
  return mkdtemp(join(tmpdir(), `sc-store-${tag}-`));
}

/** sha1:BASE32 computed independently of src/store/digest.ts (BigInt, most significant group first). */
export function referenceSha1Base32(data: Uint8Array): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let n = BigInt(`0x${createHash("sha1").update(data).digest("hex")}`);
  let out = "";
  for (let i = 0; i < 32; i++) {
    out = alphabet[Number(n & 31n)]! + out;
    n >>= 5n;
  }
  return `sha1:${out}`;
}

export function randomBytes(rand: () => number, n: number): Buffer {
  const b = Buffer.allocUnsafe(n);
  for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256);
  return b;
}

export function html(rand: () => number, paragraphs: number): Buffer {
  const words = ["crawl", "archive", "shard", "redis", "frontier", "polite", "robots", "page", "link", "host", "queue", "lease"];
  let s = "<!doctype html><html><head><title>Test page</title></head><body>\n";
  for (let p = 0; p < paragraphs; p++) {
    s += "<p>";
    for (let w = 0; w < 40; w++) s += `${words[Math.floor(rand() * words.length)]} `;
    s += `<a href="/p/${Math.floor(rand() * 1e6)}">next</a></p>\n`;
  }
  return Buffer.from(`${s}</body></html>\n`);
}

export function page(over: Partial<FetchedPage> = {}): FetchedPage {
  const body = over.body ?? Buffer.from("<html><body>hello</body></html>");
  return {
    url: "http://example.com/",
    host: "example.com",
    depth: 0,
    hops: 0,
    fetchedAt: "2024-05-06T07:08:09.123Z",
    ip: "127.0.0.1",
    status: 200,
    httpVersion: "1.1",
    statusText: "OK",
    headers: [
      ["Content-Type", "text/html; charset=utf-8"],
      ["Content-Length", String(body.length)],
    ],
    requestHeaders: [
      ["user-agent", "shardcrawl-test/1.0 (+http://127.0.0.1/bot)"],
      ["accept", "*/*"],
      ["accept-encoding", "gzip, br"],
    ],
    body,
    timings: { total: 5 },
    ...over,
  };
}

/** Every kind of page the brief names, plus a few more. */
export function varietyPages(): FetchedPage[] {
  const rand = prng(7);
  const markup = html(rand, 30);
  const gz = gzipSync(markup);
  const binary = randomBytes(rand, 20_000);
  return [
    page({ url: "http://example.com/index.html", body: markup, headers: [["Content-Type", "text/html"], ["Content-Length", String(markup.length)]] }),
    page({ url: "http://img.example.com/logo.png", body: binary, headers: [["Content-Type", "image/png"], ["Content-Length", String(binary.length)]] }),
    page({ url: "http://example.com/empty", status: 204, statusText: "No Content", body: Buffer.alloc(0), headers: [["Date", "Mon, 06 May 2024 07:08:09 GMT"]] }),
    page({
      url: "http://example.com/big",
      body: markup.subarray(0, 1000),
      truncated: "length",
      headers: [["Content-Type", "text/html"], ["Content-Length", String(markup.length)]],
    }),
    page({ url: "http://example.com/slow", body: markup.subarray(0, 700), truncated: "time", headers: [["Content-Type", "text/html"], ["Transfer-Encoding", "chunked"]] }),
    page({
      url: "http://example.com/gz",
      body: gz,
      headers: [["Content-Type", "text/html; charset=utf-8"], ["Content-Encoding", "gzip"], ["Content-Length", String(gz.length)], ["Vary", "Accept-Encoding"]],
    }),
    page({ url: "http://example.com/chunked", body: markup, headers: [["Content-Type", "text/html"], ["Transfer-Encoding", "chunked"]] }),
    page({ url: "http://www.pcmag.com/join/0,,,00.asp", body: markup.subarray(0, 300), headers: [["Content-Type", "text/html"]] }),
    page({
      url: "http://example.com/hostile",
      statusText: "OK\r\nX-Status-Injected: 1",
      headers: [
        ["Content-Type", "text/html\r\nX-Injected: 1"],
        ["X-Split", "a\r\n\r\nWARC/1.1\r\nWARC-Type: response\r\n\r\n"],
        ["X-Nul", "a\u0000b\u0007c"],
        ["Bad Name:\r\nX-Name-Injected", "v"],
        ["X-Unicode", "ünïcødé ✓"],
        ["X-Long", "x".repeat(10_000)],
        ["Content-Length", "31"],
      ],
      requestHeaders: [["user-agent", "bot\r\nX-Req-Injected: 1"]],
    }),
    page({ url: "http://example.com/old", redirectTo: "http://example.com/new", status: 301, statusText: "Moved Permanently", body: Buffer.alloc(0), headers: [["Location", "/new"], ["Content-Length", "0"]] }),
    page({ url: "http://example.com/missing", status: 404, statusText: "Not Found", httpVersion: "1.0", headers: [["Server", "x"]] }),
    page({ url: "http://www.example.com/search?q=b&a=1", headers: [["Content-Type", "text/html"]] }),
    page({ url: "http://[::1]:8080/v6", ip: "::1", headers: [["Content-Type", "text/plain"]] }),
    page({ url: "http://example.com/no-ip", ip: "not an ip", headers: [["Content-Type", "text/plain"]] }),
  ];
}

export interface ReadRecord {
  type: string;
  warc: Headers;
  http: { status: number | string | undefined; statusline: string; headers: Headers; method?: string; path?: string } | null;
  /** Payload as stored (after the HTTP head), not decoded. */
  payload: Buffer;
  offset: number;
}

/** Reads every record with warcio's WARCParser; `start`/`end` read a byte range (inclusive end). */
export async function readWithWarcio(path: string, range: { start?: number; end?: number } = {}): Promise<ReadRecord[]> {
  const parser = new WARCParser(createReadStream(path, range));
  const out: ReadRecord[] = [];
  for await (const rec of parser) {
    const offset = parser.offset;
    const payload = Buffer.from(await rec.readFully(false));
    const h = rec.httpHeaders;
    out.push({
      type: rec.warcType,
      warc: rec.warcHeaders.headers as Headers,
      http: h
        ? {
            status: h.statusCode,
            statusline: h.statusline,
            headers: h.headers as Headers,
            ...(rec.warcType === "request" ? { method: h.method, path: h.requestPath } : {}),
          }
        : null,
      payload,
      offset,
    });
  }
  return out;
}

export function id(urn: string): string {
  return `<${urn}>`;
}
