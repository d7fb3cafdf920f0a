// Links cross from the parse worker as parallel arrays and one Float64Array of Bloom positions;
// they come back unchanged, and the frontier packs them like arrays of positions.
import { describe, expect, it } from "vitest";
import { packWorkerLinks, unpackWorkerLinks } from "../../src/parse/worker-transfer.js";
import { BloomHasher, bloomParamsFor } from "../../src/frontier/bloom.js";
import { packLinks } from "../../src/frontier/links.js";

describe("worker link transfer", () => {
  const params = bloomParamsFor({ expectedUrls: 1e9, falsePositiveRate: 0.01 });
  const hasher = new BloomHasher(params);
  const links = ["https://a.test/x", "https://b.test/y?z=1", "https://a.test/"].map((url, i) => ({
    url, host: new URL(url).host, tier: i, depth: i + 1, hops: i % 2, bloom: hasher.positions(url),
  }));

  it("round-trips links exactly, positions above 2^32 included", () => {
    expect(params.m).toBeGreaterThan(2 ** 32);
    const back = unpackWorkerLinks(structuredClone(packWorkerLinks(links, params.k)));
    expect(back.map((l) => ({ ...l, bloom: Array.from(l.bloom!) }))).toEqual(links);
  });

  it("gives the frontier the same packed arguments as plain arrays", () => {
    const caps = { maxQueuedPerHost: 0, maxQueuedTotal: 0 };
    const viaWorker = packLinks(unpackWorkerLinks(packWorkerLinks(links, params.k)), hasher, params, caps);
    expect(viaWorker.invalid).toBe(0);
    expect(viaWorker.args).toEqual(packLinks(links, hasher, params, caps).args);
  });

  it("refuses a link without k positions", () => {
    expect(() => packWorkerLinks([{ ...links[0]!, bloom: [1, 2] }], params.k)).toThrow(/Bloom positions/);
  });
});
