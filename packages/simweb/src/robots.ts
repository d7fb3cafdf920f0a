// robots.txt variety per host, and the ground truth of what it allows. The text is generated from
// the host's seed; the verdicts come from robots-parser (a maintained RFC 9309 implementation with
// * and $ support and group selection), so simweb's truth does not depend on a parser we wrote.
import { createRequire } from "node:module";
import { Rng, mix } from "./prng.js";
import { Lru } from "./lru.js";
import type { HostModel, World } from "./world.js";
import { RobotsFaults } from "./robots-faults.js";

/** The part of robots-parser we use (CommonJS; its typings do not type the default export under NodeNext). */
interface Robot {
  isAllowed(url: string, ua?: string): boolean | undefined;
  getCrawlDelay(ua?: string): number | undefined;
}
const robotsParser = createRequire(import.meta.url)("robots-parser") as (url: string, contents: string) => Robot;

/** Size the "large" robots.txt grows to: above the 500 KiB a crawler must read (RFC 9309). */
const LARGE_ROBOTS_BYTES = 600 * 1024;
const PADDING_MARK = "# archive of retired paths";

export class RobotsBook {
  private readonly cores = new Lru<number, string>(20_000, 64 * 1024 * 1024, (s) => s.length);
  private readonly parsers = new Lru<number, Robot>(20_000, 256 * 1024 * 1024, () => 8_000);

  private faultsOf: RobotsFaults | undefined;

  constructor(private readonly world: World) {}

  /** Crawl-delays configured for chosen hosts (robots-faults.ts). */
  private get faults(): RobotsFaults {
    return (this.faultsOf ??= new RobotsFaults(this.world.config));
  }

  /** The robots.txt body for hosts whose robots.txt is a file (null for absent/5xx/unreachable). */
  text(h: HostModel): string | null {
    const core = this.faults.withCrawlDelay(h, this.core(h));
    if (core === null || h.info.robots !== "large") return core;
    // Inert padding after the real rules: any truncation at >= 500 KiB gives the same verdicts.
    const nl = core.includes("\r\n") ? "\r\n" : "\n";
    return `${core}${PADDING_MARK}${nl}User-agent: *${nl}${padding(nl, LARGE_ROBOTS_BYTES - core.length)}`;
  }

  /** The rules part of the file (all of it except a large file's inert padding). */
  private core(h: HostModel): string | null {
    const kind = h.info.robots;
    if (kind === "absent" || kind === "server-error" || kind === "unreachable") return null;
    const cached = this.cores.get(h.info.index);
    if (cached !== undefined) return cached;
    const t = this.generate(h);
    this.cores.set(h.info.index, t);
    return t;
  }

  /** True when the host's robots.txt makes every path off-limits (5xx or unreachable: RFC 9309 section 2.3.1.4). */
  disallowsAll(h: HostModel): boolean {
    return h.info.robots === "server-error" || h.info.robots === "unreachable";
  }

  /**
   * The Crawl-delay (ms) the host's robots.txt asks of this agent, or undefined: a crawler that
   * honours Crawl-delay only up to a maximum skips hosts asking for more (expected.ts).
   */
  crawlDelayMs(h: HostModel, userAgent: string): number | undefined {
    if (this.disallowsAll(h)) return undefined;
    const forced = this.faults.crawlDelayOf(h.info.index);
    if (forced !== undefined) return forced * 1000;
    if (h.info.robots === "absent") return undefined;
    const d = this.parser(h).getCrawlDelay(userAgent);
    return typeof d === "number" && Number.isFinite(d) && d >= 0 ? Math.round(d * 1000) : undefined;
  }

  private parser(h: HostModel): Robot {
    // The padding of a "large" file is inert by construction (its paths are never generated, and
    // a test checks verdicts with and without it): parse only the rules, or every verdict would
    // scan ~20,000 rules.
    let p = this.parsers.get(h.info.index);
    if (!p) {
      p = robotsParser(`${this.world.origin(h)}/robots.txt`, this.core(h) ?? "");
      this.parsers.set(h.info.index, p);
    }
    return p;
  }

  /** Whether the user agent may fetch this path (+query) on the host. */
  allows(h: HostModel, path: string, userAgent: string): boolean {
    if (this.disallowsAll(h)) return false;
    if (h.info.robots === "absent") return true;
    return this.parser(h).isAllowed(`${this.world.origin(h)}${path}`, userAgent) !== false;
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
    L.push("");
    return L.join(nl);
  }
}

const paddingCache = new Map<string, string>();

/** Disallow lines for paths simweb never generates, about `bytes` long; built once per line ending. */
function padding(nl: string, bytes: number): string {
  let full = paddingCache.get(nl);
  if (full === undefined) {
    const lines: string[] = [];
    for (let i = 0, n = 0; n < LARGE_ROBOTS_BYTES; i++) {
      const line = `Disallow: /zz-retired-${i.toString(36)}/`;
      lines.push(line);
      n += line.length + nl.length;
    }
    full = lines.join(nl) + nl;
    paddingCache.set(nl, full);
  }
  if (bytes >= full.length) return full;
  const cut = full.lastIndexOf(nl, Math.max(0, bytes));
  return full.slice(0, cut + nl.length);
}
