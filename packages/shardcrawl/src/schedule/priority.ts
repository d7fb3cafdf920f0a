// Priority tiers for newly discovered URLs: seeds and shallow pages first, deep and
// parameter-heavy URLs last, so that when a frontier must shed work it sheds the least valuable.
import { MAX_TIER } from "../shared/types.js";

export interface PriorityRules {
  /** Link depth at or below which a URL is tier 0. */
  shallowDepth: number;
  /** Query parameters above which a URL drops one tier. */
  maxParams: number;
  /** Path segments above which a URL drops one tier. */
  maxSegments: number;
}

export const DEFAULT_PRIORITY_RULES: PriorityRules = { shallowDepth: 1, maxParams: 2, maxSegments: 6 };

export function tierFor(url: string, depth: number, rules: PriorityRules = DEFAULT_PRIORITY_RULES): number {
  let tier = depth <= rules.shallowDepth ? 0 : depth <= rules.shallowDepth + 2 ? 1 : 2;
  const q = url.indexOf("?");
  if (q >= 0) {
    let params = 1;
    for (let i = q + 1; i < url.length; i++) if (url.charCodeAt(i) === 38 /* & */) params++;
    if (params > rules.maxParams) tier++;
  }
  const pathStart = url.indexOf("/", url.indexOf("//") + 2);
  if (pathStart >= 0) {
    let segments = 0;
    const end = q >= 0 ? q : url.length;
    for (let i = pathStart; i < end; i++) if (url.charCodeAt(i) === 47 /* / */) segments++;
    if (segments > rules.maxSegments) tier++;
  }
  return Math.min(MAX_TIER, tier);
}
