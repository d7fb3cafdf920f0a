// What a failed robots.txt fetch means for its host (fetch/robots-outage.ts): wait (and when to try
// again), use the last copy, or fail for good -- pure decisions, no network.
import { describe, expect, it } from "vitest";
import { classifyRobotsFailure, decideOutage, nextTryDelayMs, DEFAULT_ROBOTS_OUTAGE, type OutageState } from "../../src/fetch/robots-outage.js";
import type { RobotsFetchResult } from "../../src/fetch/robots.js";

const S = DEFAULT_ROBOTS_OUTAGE;
const ORIGIN = "https://www.d1.test";
const failed = (errorClass: RobotsFetchResult["errorClass"], detail: string, retryAfterMs = 0): Pick<RobotsFetchResult, "errorClass" | "detail" | "entry"> => ({
  errorClass, detail, entry: { kind: "disallow-all", retryAfterMs, fetchedAt: 0 },
});

describe("classifyRobotsFailure", () => {
  it.each([
    ["robots-unavailable", "robots.txt answered 503"],
    ["robots-unavailable", "robots.txt answered 429"],
    ["connect", "ECONNREFUSED: connect ECONNREFUSED"],
    ["connect-timeout", "UND_ERR_CONNECT_TIMEOUT: Connect Timeout Error"],
    ["connect-timeout", "during TLS handshake: ETIMEDOUT: timed out"],
    ["reset", "ECONNRESET: socket hang up"],
    ["headers-timeout", "UND_ERR_HEADERS_TIMEOUT"],
    ["body-timeout", "UND_ERR_BODY_TIMEOUT"],
    ["total-timeout", "total time cap"],
    ["dns", "ESERVFAIL: queryA ESERVFAIL x.test"],
    ["dns", "ETIMEOUT: queryA ETIMEOUT x.test"],
    ["dns", "EAI_AGAIN: getaddrinfo EAI_AGAIN x.test"],
    ["dns-transient", "ESERVFAIL: queryA ESERVFAIL x.test"],
    ["tls", "during TLS handshake: ECONNRESET: socket hang up"],
  ] as const)("%s (%s) is an outage: wait", (cls, detail) => {
    expect(classifyRobotsFailure(cls, detail)).toBe("transient");
  });

  it("NXDOMAIN needs confirming; certificate errors and blocked addresses are permanent", () => {
    expect(classifyRobotsFailure("dns", "ENOTFOUND: getaddrinfo ENOTFOUND nx.test")).toBe("nxdomain");
    expect(classifyRobotsFailure("tls", "CERT_HAS_EXPIRED: certificate has expired")).toBe("permanent");
    expect(classifyRobotsFailure("tls", "ERR_TLS_CERT_ALTNAME_INVALID: Hostname/IP does not match")).toBe("permanent");
    expect(classifyRobotsFailure("tls", "DEPTH_ZERO_SELF_SIGNED_CERT: self-signed certificate")).toBe("permanent");
    expect(classifyRobotsFailure("tls", "during TLS handshake: UNABLE_TO_VERIFY_LEAF_SIGNATURE: unable to verify")).toBe("permanent");
    expect(classifyRobotsFailure("ssrf-blocked", "127.0.0.1 is private")).toBe("permanent");
  });

  it("redirect loops and undecodable files are not outages", () => {
    expect(classifyRobotsFailure("redirect-limit", "more than 5 redirects")).toBe("final");
    expect(classifyRobotsFailure("decode-error", "cannot decode")).toBe("final");
  });
});

describe("nextTryDelayMs", () => {
  it("doubles from the base up to the cap", () => {
    expect([1, 2, 3, 4, 5, 9, 10, 50].map((t) => nextTryDelayMs(t, S))).toEqual([
      60_000, 120_000, 240_000, 480_000, 960_000, 15_360_000, 21_600_000, 21_600_000,
    ]);
  });

  it("never waits less than Retry-After, even above the cap", () => {
    expect(nextTryDelayMs(1, S, 300_000)).toBe(300_000);
    expect(nextTryDelayMs(20, S, 48 * 3600_000)).toBe(48 * 3600_000);
    expect(nextTryDelayMs(3, S, 1000)).toBe(240_000);
  });
});

describe("decideOutage", () => {
  const now = 1_000_000_000_000;

  it("a first 503 defers the host to now + base, recording the outage", () => {
    const d = decideOutage(ORIGIN, failed("robots-unavailable", "robots.txt answered 503"), undefined, now, S, false);
    expect(d).toEqual({
      action: "defer",
      state: { origin: ORIGIN, firstFailureAt: now, tries: 1, nextTryAt: now + 60_000, lastError: "robots-unavailable: robots.txt answered 503", lastTryAt: now },
    });
  });

  it("later tries keep the first failure time and back off further; Retry-After is honoured", () => {
    const prev: OutageState = { origin: ORIGIN, firstFailureAt: now - 500_000, tries: 3, nextTryAt: now, lastError: "reset: x", lastTryAt: now - 240_000 };
    const d = decideOutage(ORIGIN, failed("reset", "ECONNRESET"), prev, now, S, false);
    expect(d.action).toBe("defer");
    if (d.action !== "defer") return;
    expect(d.state).toMatchObject({ firstFailureAt: now - 500_000, tries: 4, nextTryAt: now + 480_000 });
    const ra = decideOutage(ORIGIN, failed("robots-unavailable", "robots.txt answered 429", 3600_000), undefined, now, S, false);
    expect(ra.action === "defer" && ra.state.nextTryAt).toBe(now + 3600_000);
  });

  it("after --robots-outage-max the last cached copy is used if there is one, else the host keeps waiting", () => {
    const prev: OutageState = { origin: ORIGIN, firstFailureAt: now - S.outageMaxMs, tries: 140, nextTryAt: now, lastError: "x", lastTryAt: now - 1 };
    expect(decideOutage(ORIGIN, failed("robots-unavailable", "503"), prev, now, S, true).action).toBe("use-last-copy");
    expect(decideOutage(ORIGIN, failed("robots-unavailable", "503"), prev, now, S, false).action).toBe("defer");
    const younger = { ...prev, firstFailureAt: now - S.outageMaxMs + 1 };
    expect(decideOutage(ORIGIN, failed("robots-unavailable", "503"), younger, now, S, true).action).toBe("defer");
  });

  it("an NXDOMAIN fails the host only when a second lookup a minute later says it again", () => {
    const nx = failed("dns", "ENOTFOUND: getaddrinfo ENOTFOUND nx.test");
    const first = decideOutage(ORIGIN, nx, undefined, now, S, false);
    expect(first.action).toBe("defer");
    if (first.action !== "defer") return;
    expect(first.state.nextTryAt).toBe(now + 60_000);
    // Too soon (another fetcher's try seconds later): not a confirmation.
    expect(decideOutage(ORIGIN, nx, first.state, now + 5_000, S, false).action).toBe("defer");
    const confirmed = decideOutage(ORIGIN, nx, first.state, now + 60_000, S, false);
    expect(confirmed).toMatchObject({ action: "fail", errorClass: "dns" });
    // A SERVFAIL before does not count as the first NXDOMAIN.
    const servfail: OutageState = { ...first.state, lastError: "dns: ESERVFAIL: x" };
    expect(decideOutage(ORIGIN, nx, servfail, now + 120_000, S, false).action).toBe("defer");
  });

  it("an invalid certificate fails the host's URLs as tls at once", () => {
    expect(decideOutage(ORIGIN, failed("tls", "CERT_HAS_EXPIRED: certificate has expired"), undefined, now, S, true)).toMatchObject({ action: "fail", errorClass: "tls" });
  });
});
