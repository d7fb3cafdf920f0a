import { describe, expect, it } from "vitest";
import { isScopeMode, registrableDomain } from "../../src/url/scope.js";
import { ScopeFilter, scopeSpecOf } from "../../src/admit/scope-filter.js";
import type { ScopeMode } from "../../src/url/scope.js";

const createScopeFilter = (seeds: readonly string[], mode: ScopeMode) => new ScopeFilter(scopeSpecOf(seeds, mode));

describe("registrableDomain", () => {
  it("is eTLD+1 from the public suffix list", () => {
    expect(registrableDomain("www.example.co.uk")).toBe("example.co.uk");
    expect(registrableDomain("a.b.example.com")).toBe("example.com");
    expect(registrableDomain("example.com")).toBe("example.com");
    expect(registrableDomain("xn--bcher-kva.example")).toBe("xn--bcher-kva.example");
  });

  it("treats private suffixes as suffixes (alice.github.io is its own site)", () => {
    expect(registrableDomain("alice.github.io")).toBe("alice.github.io");
    expect(registrableDomain("www.alice.github.io")).toBe("alice.github.io");
  });

  it("falls back to the host for IP literals, single labels and bare suffixes", () => {
    expect(registrableDomain("127.0.0.1")).toBe("127.0.0.1");
    expect(registrableDomain("[::1]")).toBe("[::1]");
    expect(registrableDomain("localhost")).toBe("localhost");
    expect(registrableDomain("co.uk")).toBe("co.uk");
    expect(registrableDomain("")).toBe("");
  });
});

describe("ScopeFilter (admit/scope-filter.ts)", () => {
  const seeds = ["https://www.example.co.uk/start", "http://127.0.0.1:8080/", "http://alice.github.io/", "not a url"];

  it("domains: same registrable domain as a seed", () => {
    const scope = createScopeFilter(seeds, "domains");
    expect(scope.allowsUrl("https://blog.example.co.uk/post")).toBe(true);
    expect(scope.allowsUrl("http://example.co.uk/")).toBe(true);
    expect(scope.allowsUrl("http://127.0.0.1:9999/other-port")).toBe(true);
    expect(scope.allowsUrl("http://www.alice.github.io/")).toBe(true);
    expect(scope.allowsUrl("http://bob.github.io/")).toBe(false);
    expect(scope.allowsUrl("http://example.com/")).toBe(false);
    expect(scope.allowsUrl("http://127.0.0.2/")).toBe(false);
    expect(scope.allowsUrl("garbage")).toBe(false);
    expect(scope.allowsHost("shop.example.co.uk")).toBe(true);
  });

  it("hosts: exactly the seed hosts (any port)", () => {
    const scope = createScopeFilter(seeds, "hosts");
    expect(scope.allowsUrl("https://www.example.co.uk/other")).toBe(true);
    expect(scope.allowsUrl("https://blog.example.co.uk/post")).toBe(false);
    expect(scope.allowsUrl("http://127.0.0.1:1234/")).toBe(true);
  });

  it("any: everything that parses", () => {
    const scope = createScopeFilter([], "any");
    expect(scope.allowsUrl("http://anything.example/")).toBe(true);
    expect(scope.allowsUrl("::")).toBe(false);
  });

  it("with no usable seed, domains and hosts allow nothing", () => {
    expect(createScopeFilter(["nope"], "domains").allowsUrl("http://example.com/")).toBe(false);
    expect(createScopeFilter([], "hosts").allowsUrl("http://example.com/")).toBe(false);
  });

  it("isScopeMode", () => {
    expect(isScopeMode("domains")).toBe(true);
    expect(isScopeMode("Domains")).toBe(false);
  });
});
