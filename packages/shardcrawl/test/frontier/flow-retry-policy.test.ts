// The retry policy (pure): what is retried, what never is, the attempt budget, Retry-After in both
// forms with its cap, full jitter, and signals that belong to us (upstream limit and quota).
import { describe, expect, it } from "vitest";
import { backoffMs, decide, DEFAULT_RETRY, type RetrySettings } from "../../src/fetch/retry-policy.js";
import { parseRetryAfter } from "../../src/fetch/retry-after.js";
import type { FetchOutcome } from "../../src/fetch/http-client.js";
import type { FetchErrorClass } from "../../src/shared/types.js";

const S: RetrySettings = { ...DEFAULT_RETRY, maxAttempts: 3, baseMs: 1000, capMs: 30_000, maxRetryAfterMs: 120_000 };
const NOW = Date.UTC(2026, 0, 1);

function http(status: number, headers: Array<[string, string]> = []): FetchOutcome {
  return {
    ok: true, url: "https://a.test/", fetchedAt: "", status, statusText: "", httpVersion: "1.1", headers, requestLine: "GET / HTTP/1.1",
    requestHeaders: [], body: Buffer.alloc(0), reusedConnection: false, timings: { total: 5 },
  };
}
function failure(errorClass: FetchErrorClass): FetchOutcome {
  return { ok: false, url: "https://a.test/", fetchedAt: "", errorClass, detail: "x", timings: { total: 5 } };
}

describe("retry policy", () => {
  it("retries 408, 429, 5xx and network hiccups, within the attempt budget", () => {
    for (const st of [408, 429, 500, 502, 503, 504]) expect(decide(http(st), 0, S, NOW).action).toBe("retry");
    for (const e of ["reset", "connect", "connect-timeout", "headers-timeout", "total-timeout"] as const) expect(decide(failure(e), 1, S, NOW).action).toBe("retry");
    expect(decide(http(503), 2, S, NOW).action).toBe("record");
    expect(decide(failure("reset"), 2, S, NOW).action).toBe("record");
  });

  it("never retries what cannot succeed", () => {
    for (const st of [200, 301, 400, 401, 403, 404, 410, 451]) expect(decide(http(st), 0, S, NOW).action).toBe("record");
    for (const e of ["tls", "ssrf-blocked", "robots-disallowed", "dns", "redirect-limit", "decode-bomb", "url-invalid", "too-large-headers"] as const) {
      expect(decide(failure(e), 0, S, NOW).action).toBe("record");
    }
  });

  it("a name that does not resolve (SERVFAIL, no answer) is retried, then waits with its host instead of failing", () => {
    expect(decide(failure("dns-transient"), 0, S, NOW).action).toBe("retry");
    expect(decide(failure("dns-transient"), 2, S, NOW)).toMatchObject({ action: "defer-host", reason: "dns-transient", until: NOW + 4000 });
    // Long after the budget: the wait is capped, and still not a recorded failure.
    expect(decide(failure("dns-transient"), 40, S, NOW)).toMatchObject({ action: "defer-host", until: NOW + S.capMs });
    expect(decide(failure("dns"), 2, S, NOW).action).toBe("record");
  });

  it("routes signals: 429/503/timeouts/challenges back off the host, resets say nothing, a 200 is ok", () => {
    expect(decide(http(429), 0, S, NOW)).toMatchObject({ signal: "backoff" });
    expect(decide(http(500), 0, S, NOW)).toMatchObject({ signal: "ok" });
    expect(decide(http(403, [["cf-mitigated", "challenge"]]), 0, S, NOW)).toMatchObject({ action: "retry", signal: "backoff", reason: "challenge" });
    expect(decide(failure("headers-timeout"), 0, S, NOW)).toMatchObject({ signal: "backoff" });
    expect(decide(failure("reset"), 0, S, NOW)).toMatchObject({ signal: "none" });
    expect(decide(http(200), 0, S, NOW)).toEqual({ action: "record", signal: "ok" });
  });

  it("honours Retry-After in seconds and as a date, capped, and never sooner than the jitter", () => {
    const zero = () => 0;
    expect(decide(http(429, [["Retry-After", "7"]]), 0, S, NOW, zero)).toMatchObject({ action: "retry", notBefore: NOW + 7000 });
    const date = new Date(NOW + 30_000).toUTCString();
    expect(decide(http(503, [["retry-after", date]]), 0, S, NOW, zero)).toMatchObject({ notBefore: NOW + 30_000 });
    // Above --max-retry-after the wait is never shortened: the host is deferred as long as asked,
    // the URL uncounted (also with no attempt left: it has not been refused, only delayed).
    expect(decide(http(503, [["retry-after", "86400"]]), 0, S, NOW, zero)).toEqual({ action: "defer-host", signal: "backoff", until: NOW + 86_400_000, retryAfterMs: 86_400_000, reason: "http-503" });
    expect(decide(http(429, [["retry-after", "121"]]), 2, S, NOW, zero)).toMatchObject({ action: "defer-host", until: NOW + 121_000 });
    expect(decide(http(429, [["retry-after", "120"]]), 0, S, NOW, zero)).toMatchObject({ action: "retry", notBefore: NOW + 120_000 });
    // A date years ahead is read as 30 days; a Retry-After on a 200 or a 404 is no request to wait.
    expect(decide(http(503, [["retry-after", new Date(NOW + 5 * 365 * 86_400_000).toUTCString()]]), 0, S, NOW, zero)).toMatchObject({ action: "defer-host", retryAfterMs: 30 * 86_400_000 });
    expect(decide(http(404, [["retry-after", "86400"]]), 0, S, NOW, zero).action).toBe("record");
    expect(decide(http(429, [["retry-after", "0"]]), 2, S, NOW, () => 0.5)).toMatchObject({ action: "record", notBefore: NOW });
    expect(parseRetryAfter("soon", NOW, 1000)).toBeUndefined();
    expect(parseRetryAfter(new Date(NOW - 5000).toUTCString(), NOW, 1000)).toBe(0);
  });

  it("uses full jitter: uniform in [0, min(cap, base x 2^attempt)]", () => {
    expect(backoffMs(0, S, () => 0.999)).toBe(999);
    expect(backoffMs(3, S, () => 0.5)).toBe(4000);
    expect(backoffMs(20, S, () => 0.999)).toBe(29_970);
    const draws = Array.from({ length: 2000 }, () => backoffMs(2, S));
    expect(Math.min(...draws)).toBeLessThan(200);
    expect(Math.max(...draws)).toBeGreaterThan(3800);
    expect(new Set(draws.map((d) => Math.floor(d / 400))).size).toBe(10);
  });

  it("recognises our upstream plan's limit and quota", () => {
    const s = { ...S, upstreamLimitHeader: "x-plan-limit", upstreamQuotaHeader: "x-quota-exhausted" };
    expect(decide(http(429, [["X-Plan-Limit", "1"], ["retry-after", "3"]]), 0, s, NOW)).toEqual({ action: "upstream-pause", until: NOW + 3000 });
    expect(decide(http(429), 0, s, NOW).action).toBe("retry");
    expect(decide(http(402, [["x-quota-exhausted", "monthly"]]), 0, s, NOW)).toMatchObject({ action: "quota-stop" });
  });
});
