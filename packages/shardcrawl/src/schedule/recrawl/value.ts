// Value tiers: a business decision, not a technical one, so they come from configuration as an
// ordered list of URL-pattern rules (first match wins). Three or four coarse tiers are enough.

export interface ValueRule {
  /** Regular expression source matched against the absolute URL. */
  pattern: string;
  tier: number;
}

export interface ValueConfig {
  rules: ValueRule[];
  /** Tier of a URL no rule matches. */
  defaultTier: number;
  /** Weight of each tier (index = tier), e.g. [4, 2, 1]. */
  weights: number[];
}

export const DEFAULT_VALUE_CONFIG: ValueConfig = { rules: [], defaultTier: 1, weights: [4, 2, 1] };

export class ValueTiers {
  private readonly compiled: Array<{ re: RegExp; tier: number }>;
  constructor(readonly config: ValueConfig = DEFAULT_VALUE_CONFIG) {
    if (config.weights.length === 0) throw new Error("value tiers: weights must not be empty");
    for (const w of config.weights) if (!(w > 0)) throw new Error(`value tiers: weight ${w} must be > 0`);
    this.compiled = config.rules.map((r, i) => {
      if (!Number.isInteger(r.tier) || r.tier < 0 || r.tier >= config.weights.length) {
        throw new Error(`value tiers: rule ${i} ("${r.pattern}") has tier ${r.tier}, outside 0..${config.weights.length - 1}`);
      }
      try {
        return { re: new RegExp(r.pattern), tier: r.tier };
      } catch (e) {
        throw new Error(`value tiers: rule ${i} has an invalid pattern "${r.pattern}": ${(e as Error).message}`);
      }
    });
    if (!Number.isInteger(config.defaultTier) || config.defaultTier < 0 || config.defaultTier >= config.weights.length) {
      throw new Error(`value tiers: defaultTier ${config.defaultTier} outside 0..${config.weights.length - 1}`);
    }
  }

  tierOf(url: string): number {
    for (const r of this.compiled) if (r.re.test(url)) return r.tier;
    return this.config.defaultTier;
  }

  weightOf(tier: number): number {
    return this.config.weights[Math.min(Math.max(0, tier), this.config.weights.length - 1)] as number;
  }
}
