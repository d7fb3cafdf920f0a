// Session-id and tracking parameters removed from URLs, so one page is not crawled under endless
// spellings (a session id per visit, a campaign tag per link). Applied after normalization to
// every link, redirect target, seed and ingested URL. A list entry is a parameter name
// (case-insensitive), a prefix ending in "*" ("utm_*"), or "name:token": removed only when its value
// looks like a session token (16+ letters and digits, at least one digit). `sid` is listed that
// way because it is also a story or section id on some sites (Slashdot's sid=08/07/15/1234, a
// numeric shop section): those values are kept. Java's ";jsessionid=..." path parameter is removed
// when "jsessionid" is listed. An empty query ("/a?") is removed always: servers answer both
// spellings alike.

export const DEFAULT_STRIP_PARAMS: readonly string[] = [
  "utm_*", "gclid", "gclsrc", "dclid", "fbclid", "msclkid", "yclid", "twclid", "igshid", "mc_cid", "mc_eid",
  "_hsenc", "_hsmi", "jsessionid", "phpsessid", "aspsessionid*", "cfid", "cftoken", "sessionid", "session_id",
  "sid:token", "s_kwcid",
];

interface Rule {
  name: string;
  prefix: boolean;
  tokenOnly: boolean;
}

const TOKEN_RE = /^(?=.*\d)[A-Za-z0-9_-]{16,}$/;

/** A compiled list; `clean` is the hot path (most URLs have no query and leave at once). */
export class ParamStripper {
  private readonly rules: Rule[];
  private readonly pathJsession: boolean;

  constructor(list: readonly string[]) {
    this.rules = list.map((raw) => {
      const spec = raw.trim().toLowerCase();
      const m = /^([a-z0-9_.\-[\]]+)(\*)?(:token)?$/.exec(spec);
      if (!m) throw new RangeError(`strip parameter ${JSON.stringify(raw)}: expected a name, a prefix* or name:token`);
      return { name: m[1]!, prefix: m[2] === "*", tokenOnly: m[3] === ":token" };
    });
    this.pathJsession = this.rules.some((r) => r.name === "jsessionid");
  }

  /** The URL without listed parameters and without an empty query. */
  clean(url: string): string {
    const q = url.indexOf("?");
    let path = q < 0 ? url : url.slice(0, q);
    if (this.pathJsession && path.includes(";")) path = path.replace(/;jsessionid=[^/?;]*/gi, "");
    if (q < 0) return path;
    if (q === url.length - 1) return path;
    const query = url.slice(q + 1);
    if (this.rules.length === 0) return `${path}?${query}`;
    const kept: string[] = [];
    let dropped = false;
    for (const part of query.split("&")) {
      if (this.drops(part)) dropped = true;
      else kept.push(part);
    }
    if (!dropped) return path.length === q ? url : `${path}?${query}`;
    return kept.length > 0 ? `${path}?${kept.join("&")}` : path;
  }

  private drops(part: string): boolean {
    const eq = part.indexOf("=");
    const name = (eq < 0 ? part : part.slice(0, eq)).toLowerCase();
    for (const r of this.rules) {
      if (r.prefix ? name.startsWith(r.name) : name === r.name) {
        if (!r.tokenOnly) return true;
        return eq >= 0 && TOKEN_RE.test(part.slice(eq + 1));
      }
    }
    return false;
  }
}
