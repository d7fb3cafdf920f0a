// Retry-After (RFC 9110 10.2.3): delay-seconds or an HTTP-date. Returns the wait in ms from `now`,
// capped, or undefined when the header is absent or unusable (then our own back-off applies).

/** The first Retry-After header value, if any (names compared case-insensitively). */
export function headerValue(headers: ReadonlyArray<readonly [string, string]>, name: string): string | undefined {
  const lower = name.toLowerCase();
  for (const [k, v] of headers) if (k.toLowerCase() === lower) return v;
  return undefined;
}

export function parseRetryAfter(value: string | undefined, now: number, capMs: number): number | undefined {
  if (value === undefined) return undefined;
  const v = value.trim();
  if (/^\d{1,10}$/.test(v)) return Math.min(capMs, Number(v) * 1000);
  // An HTTP-date: Date.parse reads IMF-fixdate, RFC 850 and asctime forms.
  if (!/[A-Za-z]{3}/.test(v)) return undefined;
  const t = Date.parse(v);
  if (!Number.isFinite(t)) return undefined;
  return Math.min(capMs, Math.max(0, t - now));
}
