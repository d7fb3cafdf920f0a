import { describe, expect, it } from "vitest";
import {
  HostMappingSyntaxError,
  applyConnectTo,
  lookupOverride,
  parseConnectTo,
  parseResolve,
} from "../../src/fetch/connect-to.js";

describe("parseConnectTo", () => {
  it("parses all four fields", () => {
    expect(parseConnectTo("example.com:443:127.0.0.1:8443")).toEqual({
      fromHost: "example.com",
      fromPort: 443,
      toHost: "127.0.0.1",
      toPort: 8443,
    });
  });

  it("treats empty fields as wildcards (from) or keep-original (to)", () => {
    expect(parseConnectTo("::other.test:")).toEqual({ fromHost: null, fromPort: null, toHost: "other.test", toPort: null });
    expect(parseConnectTo(":80::8080")).toEqual({ fromHost: null, fromPort: 80, toHost: null, toPort: 8080 });
  });

  it("accepts IPv6 hosts in brackets and lower-cases names", () => {
    expect(parseConnectTo("[2001:DB8::1]:443:[::1]:9443")).toEqual({
      fromHost: "2001:db8::1",
      fromPort: 443,
      toHost: "::1",
      toPort: 9443,
    });
    expect(parseConnectTo("WWW.Example.COM:80:Backend.Test:81").fromHost).toBe("www.example.com");
  });

  it.each([
    "example.com:443:127.0.0.1",
    "example.com:443:127.0.0.1:8443:9",
    "example.com:http:127.0.0.1:80",
    "example.com:0:127.0.0.1:80",
    "example.com:70000:127.0.0.1:80",
    "[::1:443:127.0.0.1:80",
    "[not-v6]:443:127.0.0.1:80",
    "exa mple.com:443:127.0.0.1:80",
  ])("rejects %s with a specific error", (spec) => {
    expect(() => parseConnectTo(spec)).toThrow(HostMappingSyntaxError);
  });
});

describe("applyConnectTo", () => {
  const rules = [
    parseConnectTo("a.test:443:127.0.0.1:8443"),
    parseConnectTo("a.test::127.0.0.2:"),
    parseConnectTo(":8080:127.0.0.3:"),
    parseConnectTo("[::1]:80:[::1]:8081"),
  ];

  it("uses the first matching rule, as curl does", () => {
    expect(applyConnectTo(rules, "a.test", 443)).toEqual({ host: "127.0.0.1", port: 8443 });
    expect(applyConnectTo(rules, "A.TEST", 80)).toEqual({ host: "127.0.0.2", port: 80 });
  });

  it("matches any host when HOST1 is empty", () => {
    expect(applyConnectTo(rules, "b.test", 8080)).toEqual({ host: "127.0.0.3", port: 8080 });
  });

  it("matches bracketed and bare IPv6 hosts", () => {
    expect(applyConnectTo(rules, "[::1]", 80)).toEqual({ host: "::1", port: 8081 });
    expect(applyConnectTo(rules, "::1", 80)).toEqual({ host: "::1", port: 8081 });
  });

  it("leaves unmatched destinations alone", () => {
    expect(applyConnectTo(rules, "b.test", 443)).toEqual({ host: "b.test", port: 443 });
  });
});

describe("parseResolve / lookupOverride", () => {
  it("parses host:port:addr lists with IPv6 in brackets or bare", () => {
    expect(parseResolve("Example.com:443:127.0.0.1,[::1]")).toEqual({ host: "example.com", port: 443, addresses: ["127.0.0.1", "::1"] });
    expect(parseResolve("+v6.test:80:::ffff:127.0.0.1")).toEqual({ host: "v6.test", port: 80, addresses: ["::ffff:127.0.0.1"] });
    expect(parseResolve("*:*:127.0.0.9")).toEqual({ host: "*", port: null, addresses: ["127.0.0.9"] });
  });

  it.each(["example.com:443", "example.com:443:", "example.com:443:not-an-ip", ":443:127.0.0.1", "example.com:x:127.0.0.1"])(
    "rejects %s",
    (spec) => {
      expect(() => parseResolve(spec)).toThrow(HostMappingSyntaxError);
    },
  );

  it("prefers an exact host over the * wildcard and respects the port", () => {
    const overrides = [parseResolve("*:80:127.0.0.9"), parseResolve("a.test:80:127.0.0.1"), parseResolve("a.test:*:127.0.0.2")];
    expect(lookupOverride(overrides, "a.test", 80)).toEqual(["127.0.0.1"]);
    expect(lookupOverride(overrides, "A.test", 81)).toEqual(["127.0.0.2"]);
    expect(lookupOverride(overrides, "b.test", 80)).toEqual(["127.0.0.9"]);
    expect(lookupOverride(overrides, "b.test", 81)).toBeUndefined();
  });
});
