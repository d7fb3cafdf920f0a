// Continuous mode (--continuous): the node keeps every fetched page in a re-crawl schedule and spends a
// budget on revisits (schedule/recrawl/). This module turns the recrawl section (its keys and
// flags are declared in node/config-schema.ts RECRAWL_SHAPE) into the node's RecrawlNodeConfig:
// budget units, and the value, content and listing rules files loaded and checked.
import { readFileSync } from "node:fs";
// Only the modules that check the config: the flags are read by every `crawl`, continuous or not,
// and the re-crawl engine (with an HTML parser) is ~45 ms of module loading.
import { parseListingRules, type ListingRule } from "./listing-rule-check.js";
import { DEFAULT_VALUE_CONFIG, ValueTiers, type ValueConfig } from "./value.js";
import { DEFAULT_CONTENT_RULES, ContentDigester, type ContentRules } from "./content-rules.js";
import type { BudgetUnit } from "./cost.js";
import type { RecrawlObjective } from "./optimum.js";

/** How the budget is given: fetches per second, or bytes / credits per day. */
export type RecrawlBudgetUnit = "fetches/s" | "bytes/day" | "credits/day";

export interface RecrawlNodeConfig {
  budget: number;
  unit: RecrawlBudgetUnit;
  /** Length of one planning cycle (ms). */
  cycleMs: number;
  /** Value tiers (URL-pattern rules and weights), from --value-rules or the defaults. */
  value: ValueConfig;
  /** Patterns removed from the extracted text before the change digest, from --content-rules or the defaults. */
  contentRules: ContentRules;
  /** Credits per visit by page type (unit credits/day). */
  creditsByType: Record<string, number>;
  /** Visit outcomes kept in the Redis stream the scheduler reads (P rv). */
  outcomeStreamCap: number;
  /** What the schedule maximises: fresh copies (default) or changes captured (optimum.ts). */
  objective: RecrawlObjective;
  /** Listing pages read as change detectors of their items (listing-rules.ts), from --listing-rules. */
  listings?: ListingRule[];
}

export const DEFAULT_RECRAWL_CYCLE_MS = 15 * 60_000;

export class RecrawlConfigError extends Error {}

function readJson(flag: string, file: string): unknown {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (err) {
    throw new RecrawlConfigError(`--${flag}: cannot read ${file}: ${(err as Error).message}`);
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    throw new RecrawlConfigError(`--${flag}: ${file} is not valid JSON: ${(err as Error).message}`);
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

export function loadValueRules(file: string): ValueConfig {
  const j = readJson("value-rules", file);
  if (!isRecord(j) || !Array.isArray(j.rules)) throw new RecrawlConfigError(`--value-rules: ${file}: expected {"rules": [{"pattern": "...", "tier": n}], ...}`);
  const cfg: ValueConfig = {
    rules: j.rules.map((r, i) => {
      if (!isRecord(r) || typeof r.pattern !== "string" || typeof r.tier !== "number") throw new RecrawlConfigError(`--value-rules: ${file}: rule ${i} needs a string "pattern" and a number "tier"`);
      return { pattern: r.pattern, tier: r.tier };
    }),
    defaultTier: typeof j.defaultTier === "number" ? j.defaultTier : DEFAULT_VALUE_CONFIG.defaultTier,
    weights: Array.isArray(j.weights) ? j.weights.map(Number) : DEFAULT_VALUE_CONFIG.weights,
  };
  try {
    new ValueTiers(cfg); // validates tiers, weights and patterns with specific messages
  } catch (err) {
    throw new RecrawlConfigError(`--value-rules: ${file}: ${(err as Error).message}`);
  }
  return cfg;
}

export function loadListingRules(file: string): ListingRule[] {
  const j = readJson("listing-rules", file);
  if (!isRecord(j)) throw new RecrawlConfigError(`--listing-rules: ${file}: expected {"listings": [...]}`);
  try {
    return parseListingRules(j.listings);
  } catch (err) {
    throw new RecrawlConfigError(`--listing-rules: ${file}: ${(err as Error).message}`);
  }
}

export function loadContentRules(file: string): ContentRules {
  const j = readJson("content-rules", file);
  if (!isRecord(j) || !Array.isArray(j.strip) || !j.strip.every((s) => typeof s === "string")) {
    throw new RecrawlConfigError(`--content-rules: ${file}: expected {"strip": ["regular expression", ...]}`);
  }
  const rules = { strip: j.strip as string[] };
  try {
    new ContentDigester(rules);
  } catch (err) {
    throw new RecrawlConfigError(`--content-rules: ${file}: ${(err as Error).message}`);
  }
  return rules;
}

function positive(flag: string, v: string | undefined, fallback: number): number {
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!(n > 0) || !Number.isFinite(n)) throw new RecrawlConfigError(`--${flag}: expected a number > 0, got ${JSON.stringify(v)}`);
  return n;
}

/** The continuous-mode part of the config from parsed flags; undefined without --continuous. */
export function recrawlConfigFromFlags(v: { continuous?: boolean; "recrawl-budget"?: string; "recrawl-unit"?: string; "recrawl-cycle"?: string; "recrawl-objective"?: string; "value-rules"?: string; "content-rules"?: string; "listing-rules"?: string }): RecrawlNodeConfig | undefined {
  const any = v["recrawl-budget"] ?? v["recrawl-unit"] ?? v["recrawl-cycle"] ?? v["recrawl-objective"] ?? v["value-rules"] ?? v["content-rules"] ?? v["listing-rules"];
  if (!v.continuous) {
    if (any !== undefined) throw new RecrawlConfigError("the --recrawl-*, --value-rules, --content-rules and --listing-rules flags need --continuous");
    return undefined;
  }
  const unit = (v["recrawl-unit"] ?? "fetches/s") as RecrawlBudgetUnit;
  if (!["fetches/s", "bytes/day", "credits/day"].includes(unit)) throw new RecrawlConfigError(`--recrawl-unit: expected fetches/s, bytes/day or credits/day, got ${JSON.stringify(unit)}`);
  const objective = (v["recrawl-objective"] ?? "freshness") as RecrawlObjective;
  if (objective !== "freshness" && objective !== "changes") throw new RecrawlConfigError(`--recrawl-objective: expected freshness or changes, got ${JSON.stringify(objective)}`);
  return {
    objective,
    budget: positive("recrawl-budget", v["recrawl-budget"], 1),
    unit,
    cycleMs: positive("recrawl-cycle", v["recrawl-cycle"], DEFAULT_RECRAWL_CYCLE_MS),
    value: v["value-rules"] !== undefined ? loadValueRules(v["value-rules"]) : DEFAULT_VALUE_CONFIG,
    contentRules: v["content-rules"] !== undefined ? loadContentRules(v["content-rules"]) : DEFAULT_CONTENT_RULES,
    creditsByType: { html: 1 },
    outcomeStreamCap: 100_000,
    ...(v["listing-rules"] !== undefined ? { listings: loadListingRules(v["listing-rules"]) } : {}),
  };
}

/** Checks a continuous-mode config (a config file may carry one). */
export function validateRecrawlConfig(r: RecrawlNodeConfig): string[] {
  const errors: string[] = [];
  if (!(r.budget > 0)) errors.push(`recrawl.budget: expected > 0, got ${r.budget}`);
  if (r.objective !== "freshness" && r.objective !== "changes") errors.push(`recrawl.objective: expected freshness or changes, got ${JSON.stringify(r.objective)}`);
  if (!["fetches/s", "bytes/day", "credits/day"].includes(r.unit)) errors.push(`recrawl.unit: expected fetches/s, bytes/day or credits/day, got ${JSON.stringify(r.unit)}`);
  if (!(r.cycleMs >= 100)) errors.push(`recrawl.cycleMs: expected >= 100 ms, got ${r.cycleMs}`);
  if (!(Number.isInteger(r.outcomeStreamCap) && r.outcomeStreamCap >= 1000)) errors.push(`recrawl.outcomeStreamCap: expected an integer >= 1000, got ${r.outcomeStreamCap}`);
  try {
    new ValueTiers(r.value);
    new ContentDigester(r.contentRules);
    if (r.listings) parseListingRules(r.listings);
  } catch (err) {
    errors.push(`recrawl: ${(err as Error).message}`);
  }
  return errors;
}

/** The scheduler's budget per day and the cost model's unit. */
export function budgetPerDay(r: RecrawlNodeConfig): { perDay: number; unit: BudgetUnit } {
  if (r.unit === "fetches/s") return { perDay: r.budget * 86_400, unit: "fetches" };
  return { perDay: r.budget, unit: r.unit === "bytes/day" ? "bytes" : "credits" };
}

/**
 * The `recrawl:` section of a node config file (or the crawl flags gathered the same way, see
 * node/config-schema.ts RECRAWL_SHAPE): { continuous, budget, unit, cycleMs, objective, valueRules
 * (file), contentRules (file), listingRules (file) }. Undefined when continuous is false. Throws
 * RecrawlConfigError naming the flag.
 */
export function recrawlConfigFromObject(o: unknown): RecrawlNodeConfig | undefined {
  if (!isRecord(o)) throw new RecrawlConfigError(`recrawl: expected a mapping {budget, unit, cycleMs, valueRules, contentRules}`);
  const known = new Set(["continuous", "budget", "unit", "cycleMs", "objective", "valueRules", "contentRules", "listingRules"]);
  for (const k of Object.keys(o)) if (!known.has(k)) throw new RecrawlConfigError(`recrawl: unknown key "${k}"`);
  const str = (k: string): string | undefined => {
    const v = o[k];
    if (v === undefined) return undefined;
    if (typeof v !== "string" && typeof v !== "number") throw new RecrawlConfigError(`recrawl.${k}: expected a string or number, got ${JSON.stringify(v)}`);
    return String(v);
  };
  if (o.continuous === false) return undefined;
  return recrawlConfigFromFlags({
    continuous: true, "recrawl-budget": str("budget"), "recrawl-unit": str("unit"), "recrawl-cycle": str("cycleMs"), "recrawl-objective": str("objective"),
    "value-rules": str("valueRules"), "content-rules": str("contentRules"), "listing-rules": str("listingRules"),
  });
}
