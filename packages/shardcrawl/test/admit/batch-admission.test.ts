// The in-process admission at the frontier's door (seeds, parsed links, inbox URLs): shard routing,
// the opt-out list and the trap filters in the chain's order, each refusal counted under the stats
// field the metrics map back to its filter, and the opt-out list re-read for every batch.
import { describe, expect, it } from "vitest";
import { AdmissionCounts, BatchAdmission, ExclusionFilter, buildAdmissionChain, refusalsByFilter, takeAdmissionFields } from "../../src/admit/index.js";
import { ExclusionSet, type Exclusion } from "../../src/frontier/index.js";
import { ShardRouter, equalNodes } from "../../src/shard/shard-spec.js";

const link = (url: string) => ({ url, host: new URL(url).hostname });
const excluded = (pattern: string): Exclusion => ({ pattern, kind: "host", reason: "", at: 0 });

describe("BatchAdmission", () => {
  it("routes, refuses and admits in CHAIN_ORDER, counting refusals under their counters", async () => {
    const router = new ShardRouter({ self: "node0", nodes: equalNodes(2), key: "host" });
    // Hosts owned by each node, so the test does not depend on the hash.
    const hosts = Array.from({ length: 40 }, (_, i) => `h${i}.test`);
    const mine = hosts.filter((h) => router.ownsHost(h));
    const theirs = hosts.filter((h) => !router.ownsHost(h));
    const counts = new AdmissionCounts();
    const admission = new BatchAdmission({
      router, urlFilters: ["max-path-depth=2"], counts,
      exclusions: { current: () => Promise.resolve(new ExclusionSet([excluded(mine[0]!), excluded(theirs[0]!)])) },
    });
    expect(admission.chain.names).toEqual(["shard", "exclusions", "trap"]);
    const batch = [
      link(`http://${mine[1]}/ok`),
      link(`http://${mine[0]}/excluded`),
      link(`http://${mine[1]}/a/b/c`),
      // Another node's URL goes to its owner whatever it is: the owner's chain decides.
      link(`http://${theirs[0]}/a/b/c`),
    ];
    const r = await admission.admit(batch);
    expect(r.own.map((l) => l.url)).toEqual([`http://${mine[1]}/ok`]);
    expect(r.refused).toBe(2);
    expect([...r.elsewhere]).toEqual([["node1", [batch[3]]]]);
    const fields = Object.fromEntries(takeAdmissionFields(counts).filter(([f]) => !f.startsWith("admitNs:") && !f.startsWith("admitTimed:")));
    expect(fields).toEqual({ "admit:shard": 1, "excluded:refused": 1, "filtered:path-depth": 1 });
    expect(Object.fromEntries(refusalsByFilter(fields))).toEqual({ shard: 1, exclusions: 1, trap: 1 });
  });

  it("re-reads the opt-out list for every batch: an exclusion added meanwhile refuses the next one", async () => {
    let set = new ExclusionSet();
    const admission = new BatchAdmission({ exclusions: { current: () => Promise.resolve(set) }, counts: new AdmissionCounts() });
    expect((await admission.admit([link("http://a.test/1")])).own).toHaveLength(1);
    set = new ExclusionSet([excluded("a.test")]);
    expect(await admission.admit([link("http://www.a.test/2"), link("http://b.test/")])).toMatchObject({ own: [link("http://b.test/")], refused: 1 });
  });

  it("writes its own counts to the node's stats, leaving out what the caller skips", async () => {
    const admission = new BatchAdmission({ urlFilters: ["max-query-params=1"], counts: new AdmissionCounts() });
    await admission.admit([link("http://a.test/?a&b"), link("http://a.test/?a")]);
    const written: Array<readonly [string, number]> = [];
    const stats = { addCounters: (d: Iterable<readonly [string, number]>) => Promise.resolve(void written.push(...d)) };
    await admission.writeCounts(stats, (f) => f.startsWith("admit"));
    expect(written).toEqual([["filtered:query-params", 1]]);
    // Nothing counted since: nothing written.
    await admission.writeCounts(stats);
    expect(written).toHaveLength(1);
  });

  it("with no filter configured admits everything as it comes", async () => {
    const admission = new BatchAdmission({ urlFilters: [] });
    expect(admission.empty).toBe(true);
    const batch = [link("http://a.test/1/2/3/4/5/6/7/8/9")];
    expect(await admission.admit(batch)).toMatchObject({ own: batch, refused: 0 });
  });

  it("the fetcher's lease-time opt-out check counts as admit:exclusions, not as an admission refusal", () => {
    const counts = new AdmissionCounts();
    const set = new ExclusionSet([excluded("a.test")]);
    const chain = buildAdmissionChain([new ExclusionFilter(() => set, "lease")], counts);
    expect(chain.check("http://a.test/", "a.test")).toMatchObject({ filter: "exclusions", reason: "excluded" });
    expect(counts.take().refused.get("admit:exclusions")).toBe(1);
  });
});
