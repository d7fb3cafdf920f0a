import { createHash } from "node:crypto";
import { WARCRecord, WARCSerializer } from "warcio";
import { describe, expect, it } from "vitest";
import { base32Encode, payloadDigest, sha1Base32, textDigest } from "../../src/parse/digest.js";

describe("base32Encode (RFC 4648)", () => {
  it("matches the RFC test vectors", () => {
    const vectors: Array<[string, string]> = [
      ["", ""],
      ["f", "MY======"],
      ["fo", "MZXQ===="],
      ["foo", "MZXW6==="],
      ["foob", "MZXW6YQ="],
      ["fooba", "MZXW6YTB"],
      ["foobar", "MZXW6YTBOI======"],
    ];
    for (const [input, output] of vectors) expect(base32Encode(Buffer.from(input))).toBe(output);
  });
});

describe("payload digest", () => {
  it("is the well-known WARC digest of the empty payload", () => {
    expect(payloadDigest(Buffer.alloc(0))).toBe("sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
  });

  it("encodes the SHA-1 bytes in 32 characters without padding", () => {
    const body = Buffer.from("<html>hello</html>");
    const digest = payloadDigest(body);
    expect(digest).toMatch(/^sha1:[A-Z2-7]{32}$/);
    expect(digest).toBe("sha1:" + base32Encode(createHash("sha1").update(body).digest()));
  });

  it("matches what warcio writes as WARC-Payload-Digest", async () => {
    const bodies = [Buffer.from("<html><body>hi</body></html>"), Buffer.alloc(70_000, 0xe9), Buffer.alloc(0)];
    for (const body of bodies) {
      const record = WARCRecord.create(
        {
          url: "http://example.com/",
          type: "response",
          warcVersion: "WARC/1.1",
          httpHeaders: { "Content-Type": "text/html" },
        },
        [new Uint8Array(body)],
      );
      await WARCSerializer.serialize(record, { gzip: false, digest: { algo: "sha-1", prefix: "sha1:", base32: true } });
      expect(payloadDigest(body)).toBe(record.warcPayloadDigest);
    }
  });
});

describe("text digest", () => {
  it("hashes the UTF-8 bytes of the text", () => {
    expect(textDigest("日本語")).toBe(sha1Base32(Buffer.from("日本語", "utf8")));
    expect(textDigest("a")).not.toBe(textDigest("b"));
  });
});
