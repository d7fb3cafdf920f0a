import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { describe, expect, test } from "vitest";
import { WARCRecord, WARCSerializer } from "warcio";
import { base32, sha1Base32 } from "../../src/store/digest.js";
import { buildMetadataRecord, buildPageRecords, buildWarcinfo, payloadIsCompressed, WarcInputError } from "../../src/store/warc-record.js";
import { verifyWarcFile } from "../../src/store/warc-reader.js";
import { id, page, readWithWarcio, referenceSha1Base32, tempDir, varietyPages } from "./helpers.js";

describe("digest", () => {
  test("sha1 base32 matches the well-known empty-payload digest and an independent encoder", () => {
    expect(sha1Base32(Buffer.alloc(0))).toBe("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    for (const s of ["a", "hello world", "x".repeat(1000)]) {
      expect(sha1Base32(Buffer.from(s))).toBe(referenceSha1Base32(Buffer.from(s)));
    }
    expect(sha1Base32(Buffer.from("ab"), Buffer.from("c"))).toBe(sha1Base32(Buffer.from("abc")));
    expect(base32(Buffer.from("foobar"))).toBe("MZXW6YTBOI======"); // RFC 4648 test vector
  });
});

describe("buildPageRecords", () => {
  test("a payload with a content-coding is stored in its gzip member (level 0), HTML is deflated", () => {
    const html = Buffer.from("<!doctype html><p>" + "repetitive text ".repeat(2000) + "</p>");
    const coded = gzipSync(html);
    const plain = buildPageRecords(page({ body: html }), { gzipLevel: 6 });
    const gz = buildPageRecords(page({ body: coded, headers: [["Content-Type", "text/html"], ["Content-Encoding", "gzip"]] }), { gzipLevel: 6 });
    // Stored: the member is at least as long as its content; deflated HTML is far shorter.
    const gzResponse = gz.data.subarray(gz.responseOffset);
    expect(gzResponse.length).toBeGreaterThan(coded.length);
    expect(gunzipSync(gzResponse).subarray(-coded.length - 4, -4).equals(coded)).toBe(true);
    expect(plain.responseLength).toBeLessThan(html.length / 10);
    expect(payloadIsCompressed([["content-encoding", "identity"]])).toBe(false);
    // A digest handed in by the parse step is used as is; a malformed one is recomputed.
    const given = "sha1:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA";
    expect(buildPageRecords(page({ body: html }), { payloadDigest: given }).payloadDigest).toBe(given);
    expect(buildPageRecords(page({ body: html }), { payloadDigest: "md5:x" }).payloadDigest).toBe(referenceSha1Base32(html));
    expect(payloadIsCompressed([["Content-Encoding", "br"]])).toBe(true);
  });

  test("the request record is a stored member at gzip levels 0-1 and deflated above; both read back", () => {
    const html = Buffer.from("<!doctype html><p>" + "repetitive text ".repeat(200) + "</p>");
    for (const level of [1, 6]) {
      const r = buildPageRecords(page({ body: html }), { gzipLevel: level });
      const request = r.data.subarray(0, r.responseOffset);
      const text = gunzipSync(request).toString("latin1");
      expect(text).toMatch(/^WARC\/1\.1\r\nWARC-Type: request\r\n/);
      // Stored: the member holds its record's bytes as they are (plus header, block and trailer).
      if (level === 1) expect(request.length).toBeGreaterThan(text.length);
      else expect(request.length).toBeLessThan(text.length);
      expect(gunzipSync(r.data.subarray(r.responseOffset)).toString("latin1")).toMatch(/^WARC\/1\.1\r\nWARC-Type: response\r\n/);
    }
  });

  test("stored members (level 0) of every size, across the 65,535-byte block limit, read back whole", async () => {
    const dir = await tempDir("stored");
    const sizes = [0, 1, 65_000, 65_535, 65_536, 131_070, 200_000, 256 * 1024];
    const bodies = sizes.map((n, i) => Buffer.from(Array.from({ length: n }, (_, j) => (j * 31 + i) & 0xff)));
    const built = bodies.flatMap((body, i) => [
      buildPageRecords(page({ url: `http://example.com/coded${i}`, body, headers: [["Content-Encoding", "br"]] }), { gzipLevel: 1 }),
      buildPageRecords(page({ url: `http://example.com/level0-${i}`, body }), { gzipLevel: 0 }),
    ]);
    for (const b of built) {
      // Each member is a whole gzip stream by itself: the CDXJ offset/length of the response reads alone.
      const response = gunzipSync(b.data.subarray(b.responseOffset, b.responseOffset + b.responseLength)).toString("latin1");
      expect(response.startsWith("WARC/1.1\r\nWARC-Type: response\r\n")).toBe(true);
      expect(response.endsWith("\r\n\r\n")).toBe(true);
    }
    const path = join(dir, "stored.warc.gz");
    await writeFile(path, Buffer.concat(built.map((b) => b.data)));
    const records = await readWithWarcio(path);
    const responses = records.filter((r) => r.type === "response");
    expect(responses).toHaveLength(built.length);
    responses.forEach((r, i) => {
      const body = bodies[Math.floor(i / 2)]!;
      expect(r.payload.equals(body)).toBe(true);
      expect(r.warc.get("WARC-Payload-Digest")).toBe(referenceSha1Base32(body));
    });
    const v = await verifyWarcFile(path);
    expect(v.errors).toEqual([]);
  });

  test("request and response are separate gzip members with the documented headers", () => {
    const p = page({ truncated: "length" });
    const r = buildPageRecords(p, { warcinfoId: "urn:uuid:00000000-0000-4000-8000-000000000001" });
    expect(r.responseOffset + r.responseLength).toBe(r.data.length);
    const request = gunzipSync(r.data.subarray(0, r.responseOffset)).toString("latin1");
    const response = gunzipSync(r.data.subarray(r.responseOffset)).toString("latin1");
    expect(request).toMatch(/^WARC\/1\.1\r\nWARC-Type: request\r\n/);
    expect(request).toContain(`WARC-Concurrent-To: <${r.recordIds.response}>\r\n`);
    expect(request).toContain("Content-Type: application/http; msgtype=request\r\n");
    expect(request).toContain("\r\n\r\nGET / HTTP/1.1\r\nHost: example.com\r\nuser-agent: ");
    expect(response).toMatch(/^WARC\/1\.1\r\nWARC-Type: response\r\n/);
    expect(response).toContain(`WARC-Record-ID: <${r.recordIds.response}>\r\n`);
    expect(response).toContain("WARC-Date: 2024-05-06T07:08:09.123Z\r\n");
    expect(response).toContain("WARC-Target-URI: http://example.com/\r\n");
    expect(response).toContain("WARC-IP-Address: 127.0.0.1\r\n");
    expect(response).toContain(`WARC-Concurrent-To: <${r.recordIds.request}>\r\n`);
    expect(response).toContain("WARC-Warcinfo-ID: <urn:uuid:00000000-0000-4000-8000-000000000001>\r\n");
    expect(response).toContain("WARC-Truncated: length\r\n");
    expect(response).toContain(`WARC-Payload-Digest: ${referenceSha1Base32(p.body)}\r\n`);
    expect(response).toContain("Content-Type: application/http; msgtype=response\r\n");
    expect(response.endsWith("<html><body>hello</body></html>\r\n\r\n")).toBe(true);
    expect(r.payloadDigest).toBe(referenceSha1Base32(p.body));
    expect(r.cdx).toEqual({
      urlkey: "com,example)/",
      timestamp: "20240506070809",
      url: "http://example.com/",
      mime: "text/html",
      status: "200",
      digest: r.payloadDigest,
    });
  });

  test("Transfer-Encoding: chunked is dropped (body stored de-chunked), Content-Encoding kept", () => {
    const r = buildPageRecords(
      page({ headers: [["Transfer-Encoding", "chunked"], ["Content-Encoding", "gzip"], ["Transfer-Encoding", "gzip, Chunked"]] }),
    );
    const response = gunzipSync(r.data.subarray(r.responseOffset)).toString("latin1");
    expect(response).not.toMatch(/chunked/i);
    expect(response).toContain("\r\nContent-Encoding: gzip\r\n");
    expect(response).toContain("\r\nTransfer-Encoding: gzip\r\n");
  });

  test("bytes of latin1 header values survive; other text is written as UTF-8", () => {
    const r = buildPageRecords(page({ headers: [["X-Latin", "caf\u00e9"], ["X-Utf", "✓"]] }));
    const response = gunzipSync(r.data.subarray(r.responseOffset));
    expect(response.includes(Buffer.from("X-Latin: caf\xe9\r\n", "latin1"))).toBe(true);
    expect(response.includes(Buffer.from("X-Utf: ✓\r\n", "utf8"))).toBe(true);
  });

  test("bad input gives a specific WarcInputError, not a broken record", () => {
    expect(() => buildPageRecords(page({ url: "not a url" }))).toThrow(WarcInputError);
    expect(() => buildPageRecords(page({ fetchedAt: "yesterday" }))).toThrow(/invalid fetchedAt/);
    expect(() => buildPageRecords(page({ status: 12345 }))).toThrow(/invalid HTTP status/);
    expect(() => buildPageRecords(page(), { warcinfoId: "urn:uuid:x>\r\nWARC-Type: evil" })).toThrow(/invalid warcinfo ID/);
    expect(() => buildPageRecords(page(), { gzipLevel: 11 })).toThrow(RangeError);
  });

  test("a URL with spaces or controls is percent-encoded in WARC-Target-URI", () => {
    const r = buildPageRecords(page({ url: "http://example.com/a b\tc" }));
    const response = gunzipSync(r.data.subarray(r.responseOffset)).toString("latin1");
    expect(response).toContain("WARC-Target-URI: http://example.com/a%20bc\r\n");
  });

  test("warcio's own writer rejects a comma URL (why our serializer is hand-written)", async () => {
    const rec = WARCRecord.create({ url: "http://www.pcmag.com/join/0,,,00.asp", type: "response", warcVersion: "WARC/1.1" }, [Buffer.from("x")]);
    await expect(WARCSerializer.serialize(rec, { gzip: true })).rejects.toThrow(/Invalid multi value WARC header/);
  });
});

describe("records read back with warcio", () => {
  test("every kind of page reads back completely, payload and digests as stored", async () => {
    const dir = await tempDir("record");
    const info = buildWarcinfo({ software: "shardcrawl/test", "robots": "obey" }, { filename: "t.warc.gz" });
    const pages = varietyPages();
    const built = pages.map((p) => buildPageRecords(p, { warcinfoId: info.recordId }));
    const meta = buildMetadataRecord({
      targetUri: pages[0]!.url,
      date: pages[0]!.fetchedAt,
      concurrentTo: built[0]!.recordIds.response,
      warcinfoId: info.recordId,
      fields: { outlinks: 12, "fetch-time-ms": 5, note: "line\r\nbreak" },
    });
    const path = join(dir, "t.warc.gz");
    await writeFile(path, Buffer.concat([info.data, ...built.map((b) => b.data), meta.data]));

    const records = await readWithWarcio(path);
    expect(records.map((r) => r.type)).toEqual(["warcinfo", ...pages.flatMap(() => ["request", "response"]), "metadata"]);
    expect(records[0]!.warc.get("WARC-Filename")).toBe("t.warc.gz");
    expect(records[0]!.payload.toString()).toContain("software: shardcrawl/test\r\n");
    expect(records.at(-1)!.payload.toString()).toContain("note: line  break\r\n");

    pages.forEach((p, i) => {
      const req = records[1 + 2 * i]!;
      const resp = records[2 + 2 * i]!;
      const b = built[i]!;
      expect(req.warc.get("WARC-Record-ID")).toBe(id(b.recordIds.request));
      expect(req.warc.get("WARC-Concurrent-To")).toBe(id(b.recordIds.response));
      expect(req.http?.method).toBe("GET");
      expect(resp.warc.get("WARC-Record-ID")).toBe(id(b.recordIds.response));
      expect(resp.warc.get("WARC-Concurrent-To")).toBe(id(b.recordIds.request));
      expect(resp.warc.get("WARC-Warcinfo-ID")).toBe(id(info.recordId));
      expect(resp.warc.get("WARC-Date")).toBe(new Date(p.fetchedAt).toISOString());
      expect(resp.warc.get("WARC-Truncated")).toBe(p.truncated ?? null);
      expect(Number(resp.http?.status)).toBe(p.status);
      // The payload warcio returns is the body exactly as received, and the digest is over it.
      expect(resp.payload.equals(p.body)).toBe(true);
      expect(resp.warc.get("WARC-Payload-Digest")).toBe(referenceSha1Base32(resp.payload));
      expect(resp.http?.headers.get("transfer-encoding")).toBeNull();
    });

    const byUrl = new Map(pages.map((p, i) => [p.url, records[2 + 2 * i]!]));
    expect(byUrl.get("http://www.pcmag.com/join/0,,,00.asp")!.warc.get("WARC-Target-URI")).toBe("http://www.pcmag.com/join/0,,,00.asp");
    expect(byUrl.get("http://example.com/no-ip")!.warc.get("WARC-IP-Address")).toBeNull();
    expect(byUrl.get("http://[::1]:8080/v6")!.warc.get("WARC-IP-Address")).toBe("::1");
    expect(byUrl.get("http://example.com/missing")!.http?.statusline).toBe("HTTP/1.0 404 Not Found");

    const hostile = byUrl.get("http://example.com/hostile")!;
    expect(hostile.http?.headers.get("x-injected")).toBeNull();
    expect(hostile.http?.headers.get("x-status-injected")).toBeNull();
    expect(hostile.http?.headers.get("x-name-injected")).toBeNull();
    expect(hostile.http?.headers.get("content-type")).toBe("text/html  X-Injected: 1");
    expect(hostile.http?.headers.get("x-long")).toHaveLength(10_000);
    expect(hostile.payload.toString()).toBe("<html><body>hello</body></html>");
    const hostileReq = records[1 + 2 * pages.findIndex((p) => p.url.endsWith("/hostile"))]!;
    expect(hostileReq.http?.headers.get("x-req-injected")).toBeNull();

    const gz = byUrl.get("http://example.com/gz")!;
    expect(gz.http?.headers.get("content-encoding")).toBe("gzip");
    expect(gunzipSync(gz.payload).toString()).toContain("<!doctype html>");

    // Our own verifier agrees, including the block digests warcio does not check.
    const v = await verifyWarcFile(path);
    expect(v.errors).toEqual([]);
    expect(v).toMatchObject({ ok: true, records: records.length, byType: { warcinfo: 1, request: pages.length, response: pages.length, metadata: 1 } });
  });
});
