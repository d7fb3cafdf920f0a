// The crawler's default URL clean-up, mirrored for the coverage ground truth: a crawler that removes
// session-id and tracking parameters (and an empty query) fetches the cleaned URL, so the expected
// set must hold that spelling. Keep in step with shardcrawl's url/strip-params.ts defaults (simweb
// does not depend on the crawler): names, "prefix*", and "name:token" (only session-like values).

const DEFAULT_RULES = [
  "utm_*", "gclid", "gclsrc", "dclid", "fbclid", "msclkid", "yclid", "twclid", "igshid", "mc_cid", "mc_eid",
  "_hsenc", "_hsmi", "jsessionid", "phpsessid", "aspsessionid*", "cfid", "cftoken", "sessionid", "session_id",
  "sid:token", "s_kwcid",
];

const TOKEN_RE = /^(?=.*\d)[A-Za-z0-9_-]{16,}$/;

const RULES = DEFAULT_RULES.map((r) => {
  const m = /^([a-z0-9_]+)(\*)?(:token)?$/.exec(r)!;
  return { name: m[1]!, prefix: m[2] === "*", tokenOnly: m[3] === ":token" };
});

function drops(part: string): boolean {
  const eq = part.indexOf("=");
  const name = (eq < 0 ? part : part.slice(0, eq)).toLowerCase();
  for (const r of RULES) {
    if (r.prefix ? name.startsWith(r.name) : name === r.name) return !r.tokenOnly || (eq >= 0 && TOKEN_RE.test(part.slice(eq + 1)));
  }
  return false;
}

/** The URL as a crawler with the default clean-up fetches it. */
export function crawlerForm(url: string): string {
  const q = url.indexOf("?");
  let path = q < 0 ? url : url.slice(0, q);
  if (path.includes(";")) path = path.replace(/;jsessionid=[^/?;]*/gi, "");
  if (q < 0 || q === url.length - 1) return path;
  const kept = url.slice(q + 1).split("&").filter((p) => !drops(p));
  return kept.length > 0 ? `${path}?${kept.join("&")}` : path;
}
