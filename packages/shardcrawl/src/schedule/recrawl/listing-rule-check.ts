// A listing rule's text checked and compiled without reading any page (listing-rules.ts reads pages
// with htmlparser2): config and flag checking use this alone, so a node that is not in continuous
// mode does not load an HTML parser to check its flags.

export interface ListingRule {
  /** Regular expression on the listing page's URL. */
  pattern: string;
  /** Regular expression over the HTML with named groups `link` and `summary`. */
  item?: string;
  /** Selector of an item element (with `summarySelector`), instead of `item`. */
  itemSelector?: string;
  summarySelector?: string;
  /** How often a listing page is read (ms); default: one planning cycle. */
  revisitMs?: number;
}

export interface Compound {
  tag?: string;
  id?: string;
  classes: string[];
}

export function parseSelector(sel: string): Compound {
  const s = sel.trim();
  const m = /^([a-zA-Z][a-zA-Z0-9-]*)?((?:[.#][a-zA-Z0-9_-]+)*)$/.exec(s);
  if (!s || !m) throw new Error(`selector ${JSON.stringify(sel)}: only one compound selector (tag, #id, .class) is supported`);
  const out: Compound = { classes: [] };
  if (m[1]) out.tag = m[1].toLowerCase();
  for (const part of (m[2] ?? "").match(/[.#][a-zA-Z0-9_-]+/g) ?? []) {
    if (part.startsWith("#")) out.id = part.slice(1);
    else out.classes.push(part.slice(1));
  }
  return out;
}

export function matches(el: { name: string; attribs: Record<string, string> }, c: Compound): boolean {
  if (c.tag && el.name.toLowerCase() !== c.tag) return false;
  if (c.id && el.attribs.id !== c.id) return false;
  if (c.classes.length > 0) {
    const have = (el.attribs.class ?? "").split(/\s+/);
    if (!c.classes.every((k) => have.includes(k))) return false;
  }
  return true;
}

/** A rule's compiled parts: its URL pattern, and how an item is found (a regex, or selectors). */
export interface CompiledListingRule {
  url: RegExp;
  itemRe?: RegExp;
  itemSel?: Compound;
  summarySel?: Compound;
  revisitMs: number | undefined;
}

/** Compiles one rule; throws with a message naming the rule when it cannot work. */
export function compileListingRule(rule: ListingRule): CompiledListingRule {
  const out: CompiledListingRule = { url: new RegExp(rule.pattern), revisitMs: rule.revisitMs };
  if ((rule.item === undefined) === (rule.itemSelector === undefined)) throw new Error(`listing rule ${JSON.stringify(rule.pattern)}: give exactly one of "item" (regex) or "itemSelector"`);
  if (rule.item !== undefined) {
    out.itemRe = new RegExp(rule.item, "g");
    const groups = /\(\?<link>/.test(rule.item) && /\(\?<summary>/.test(rule.item);
    if (!groups) throw new Error(`listing rule ${JSON.stringify(rule.pattern)}: "item" needs the named groups (?<link>...) and (?<summary>...)`);
  } else {
    out.itemSel = parseSelector(rule.itemSelector as string);
    if (rule.summarySelector !== undefined) out.summarySel = parseSelector(rule.summarySelector);
  }
  if (rule.revisitMs !== undefined && !(rule.revisitMs >= 1000)) throw new Error(`listing rule ${JSON.stringify(rule.pattern)}: revisitMs must be >= 1000`);
  return out;
}

/** Checks a rules value from a config file; returns the rules or throws with a message naming the problem. */
export function parseListingRules(v: unknown): ListingRule[] {
  if (!Array.isArray(v)) throw new Error(`expected a list of {"pattern", "item" | "itemSelector", "summarySelector"?, "revisitMs"?}`);
  const rules = v.map((r: unknown, i) => {
    if (typeof r !== "object" || r === null || typeof (r as ListingRule).pattern !== "string") throw new Error(`rule ${i} needs a string "pattern"`);
    const o = r as Record<string, unknown>;
    for (const k of Object.keys(o)) if (!["pattern", "item", "itemSelector", "summarySelector", "revisitMs"].includes(k)) throw new Error(`rule ${i}: unknown key "${k}"`);
    for (const k of ["item", "itemSelector", "summarySelector"]) if (o[k] !== undefined && typeof o[k] !== "string") throw new Error(`rule ${i}: "${k}" must be a string`);
    if (o.revisitMs !== undefined && typeof o.revisitMs !== "number") throw new Error(`rule ${i}: "revisitMs" must be a number`);
    return o as unknown as ListingRule;
  });
  for (const r of rules) compileListingRule(r); // a bad pattern fails here, at load time
  return rules;
}
