// robots.txt variety per host, and the ground truth of what it allows. The text is generated from
// the host's seed; the verdicts come from robots-parser (a maintained RFC 9309 implementation with
// * and $ support and group selection), so simweb's truth does not depend on a parser we wrote.
import { createRequire } from "node:module";
import { Rng, mix } from "./prng.js";
import { Lru } from "./lru.js";
import type { HostModel, World } from "./world.js";

/** The part of robots-parser we use (CommonJS; its typings do not type the default export under NodeNext). */
interface Robot {
  isAllowed(url: string, ua?: string): boolean | undefined;
}
const robotsParser = createRequire(import.meta.url)("robots-parser") as (url: string, contents: string) => Robot;

/** Size the "large" robots.txt grows to: above the 500 KiB a crawler must read (RFC 9309). */
const LARGE_ROBOTS_BYTES = 600 * 1024;

export class RobotsBook {
  private readonly texts = new Lru<number, string>(2_000, 64 * 1024 * 1024, (s) => s.length);
  private readonly parsers = new Lru<number, Robot>(20_000, 256 * 1024 * 1024, () => 8_000);

  constructor(private readonly world: World) {}

  /** The robots.txt body for hosts whose robots.txt is a file (null for absent/5xx/unreachable). */
  text(h: HostModel): string | null {
    const kind = h.info.robots;
    if (kind === "absent" || kind === "server-error" || kind === "unreachable") return null;
    const cached = this.texts.get(h.info.index);
    if (cached !== undefined) return cached;
    const t = this.generate(h);
    this.texts.set(h.info.index, t);
    return t;
  }

  /** True when the host's robots.txt makes every path off-limits (5xx or unreachable: RFC 9309 section 2.3.1.4). */
  disallowsAll(h: HostModel): boolean {
    return h.info.robots === "server-error" || h.info.robots === "unreachable";
  }

  /** Whether the user agent may fetch this path (+query) on the host. */
  allows(h: HostModel, path: string, userAgent: string): boolean {
    if (this.disallowsAll(h)) return false;
    const text = this.text(h);
    if (text === null) return true;
    let p = this.parsers.get(h.info.index);
    if (!p) {
      p = robotsParser(`${this.world.origin(h)}/robots.txt`, text);
      this.parsers.set(h.info.index, p);
    }
    return p.isAllowed(`${this.world.origin(h)}${path}`, userAgent) !== false;
  }

  private generate(h: HostModel): string {
    const kind = h.info.robots;
    const r = new Rng(mix(h.seed, 0x20b07));
    const token = this.world.config.robotsAgentToken;
    const nl = r.chance(0.2) ? "\r\n" : "\n";
    const L: string[] = [];
    if (kind === "empty") return "";
    if (kind === "disallow-all") return ["User-agent: *", "Disallow: /", ""].join(nl);
    if (r.chance(0.5)) L.push(`# robots.txt for ${h.info.name}`, "");
    const ua = r.chance(0.2) ? "user-agent" : r.chance(0.1) ? "USER-AGENT" : "User-agent";
    const dis = r.chance(0.1) ? "disallow" : "Disallow";
    // Rules that hit generated paths: sections, the ?sort= template, tilde homes, files, traps.
    const pool: string[] = [
      `${dis}: /${r.pick(h.sections)}/`,
      `${dis}: /*sort=top`,
      `${dis}: /*.pdf$`,
      `${dis}: /*.php$`, // matches nothing with a query string: tests that $ anchors the whole path+query
      `${dis}: /~${r.pick(["alice", "bob", "carol"])}/`,
      `${dis}: /*?ref=side`,
      `${dis}: /wiki/`,
      `${dis}: /calendar/`,
      `${dis}: /go/`,
      `${dis}: /tmp`,
    ];
    const star: string[] = [];
    for (let i = 0, n = r.range(2, 4); i < n; i++) star.push(pool.splice(r.int(pool.length), 1)[0] as string);
    const privateRule = star.find((l) => l.endsWith("/private/"));
    if (privateRule || r.chance(0.3)) star.push("Allow: /private/*.html$");
    L.push(`${ua}: *`, ...star);
    if (kind === "crawl-delay" || r.chance(0.1)) L.push(`Crawl-delay: ${r.pick(["1", "2", "0.5", "5"])}`);
    if (r.chance(0.2)) L.push(`Host: ${h.info.name}`, "Clean-param: ref /"); // unknown directives: ignore them
    L.push("");
    if (kind === "agent-specific") {
      L.push(`${ua}: ${r.pick([token, token.toUpperCase(), `${token}/1.0`])}`, `${dis}: /${r.pick(h.sections)}/`, `${dis}: /*lang=ru`, "Allow: /", "Crawl-delay: 1", "");
      L.push(`${ua}: otherbot`, `${ua}: BadBot`, `${dis}: /`, "");
    }
    if (kind === "sitemap" || r.chance(0.1)) L.push(`Sitemap: ${this.world.origin(h)}/sitemap.xml`);
    if (kind === "large") {
      // Inert padding after the real rules: any truncation at >= 500 KiB gives the same verdicts.
      L.push("# archive of retired paths", `${ua}: *`);
      let bytes = L.join(nl).length;
      for (let i = 0; bytes < LARGE_ROBOTS_BYTES; i++) {
        const line = `${dis}: /zz-retired-${i.toString(36)}-${r.pick(["a", "b", "c"])}/`;
        L.push(line);
        bytes += line.length + nl.length;
      }
    }
    L.push("");
    return L.join(nl);
  }
}
