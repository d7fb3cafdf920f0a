// The wildcard-subdomain host farm (config `wildcardFarm`), a spider trap of the real web: every
// name under the farm's domain resolves (name-service.ts) and is served, and every page links to
// fresh random subdomains, so following links makes new hosts without end. Only a cap on hosts per
// registrable domain stops a crawler here. Pages are a pure function of (seed, host name).
import { hashString, mix } from "./prng.js";
import type { WildcardFarmConfig } from "./name-service.js";

export interface FarmResponse {
  status: 200 | 404;
  contentType: string;
  body: Buffer;
}

/** Subdomain labels linked from a farm host's home page (distinct per host, so they never run out). */
export function farmLinks(farm: WildcardFarmConfig, seed: number, host: string): string[] {
  const h = hashString(host, seed);
  const out: string[] = [];
  for (let i = 0; i < farm.linksPerPage; i++) {
    const label = `w${(mix(h, i) >>> 0).toString(36)}${(mix(h, i, 1) >>> 0).toString(36)}`;
    out.push(`http://${label}.${farm.domain}/`);
  }
  return out;
}

/** robots.txt and any path but "/" are 404 (allow-all); "/" is a small page of fresh-host links. */
export function farmResponse(farm: WildcardFarmConfig, seed: number, host: string, path: string): FarmResponse {
  if (path !== "/") return { status: 404, contentType: "text/html; charset=utf-8", body: Buffer.from("<!DOCTYPE html><html><body><h1>Not Found</h1></body></html>\n") };
  const links = farmLinks(farm, seed, host).map((u) => `<li><a href="${u}">${u.slice(7, 40)}</a></li>`).join("\n");
  const html = `<!DOCTYPE html><html><head><meta charset="utf-8"><title>${host}</title></head><body><h1>Welcome to ${host}</h1>\n<ul>\n${links}\n</ul></body></html>\n`;
  return { status: 200, contentType: "text/html; charset=utf-8", body: Buffer.from(html, "utf8") };
}
