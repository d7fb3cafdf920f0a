// URL identity as simweb defines it: WHATWG parsing, fragment dropped, and percent-encoded
// unreserved characters decoded (RFC 3986 section 6.2.2.2 says they are equivalent; WHATWG keeps them).

const UNRESERVED = /%(?:[46][1-9A-Fa-f]|[57][0-9Aa]|3[0-9]|2[DdEe]|5[Ff]|7[Ee])/g;

/** Decodes %XX escapes of unreserved characters (ALPHA / DIGIT / - . _ ~); leaves all others alone. */
export function decodeUnreservedPercent(s: string): string {
  if (!s.includes("%")) return s;
  return s.replace(UNRESERVED, (m) => String.fromCharCode(parseInt(m.slice(1), 16)));
}

/**
 * Canonical form of a link: resolve against base, drop the fragment, decode unreserved escapes in
 * the path. Returns null for unparsable input or non-http(s) schemes.
 */
export function canonicalUrl(href: string, base?: string): string | null {
  let u: URL;
  try {
    u = new URL(href, base);
  } catch {
    return null;
  }
  if (u.protocol !== "http:" && u.protocol !== "https:") return null;
  u.hash = "";
  const path = decodeUnreservedPercent(u.pathname);
  if (path !== u.pathname) u.pathname = path;
  return u.href;
}
