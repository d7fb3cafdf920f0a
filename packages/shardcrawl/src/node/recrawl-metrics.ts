// Prometheus lines of continuous mode (issue 7): the cost per detected change (fetches and bytes,
// overall and for the top hosts by fetches), the share of fetches that found no change, the 304
// share, the model's estimated freshness, validator evidence, planned visits by reason, and the
// validation sample's report (predicted vs observed changes, Brier score).
import type { RecrawlMetrics } from "../schedule/recrawl/index.js";
import type { RecrawlSnapshot } from "./recrawl-loop.js";

function esc(v: string): string {
  return v.replace(/["\\\n]/g, "_");
}

/** Prometheus numbers: "+Inf" for a ratio with no change yet. */
function num(v: number): string {
  if (Number.isNaN(v)) return "NaN";
  if (!Number.isFinite(v)) return v > 0 ? "+Inf" : "-Inf";
  return String(v);
}

const PER_SCOPE: Array<[string, "counter" | "gauge", string, (m: RecrawlMetrics) => number]> = [
  ["shardcrawl_recrawl_fetches_total", "counter", "Fetches recorded in the re-crawl history (first visits, revisits, 304s).", (m) => m.fetches],
  ["shardcrawl_recrawl_changes_total", "counter", "Revisits that detected a content change (content digest, not raw bytes).", (m) => m.changes],
  ["shardcrawl_recrawl_unchanged_total", "counter", "Revisits that found the content unchanged (304 included).", (m) => m.unchanged],
  ["shardcrawl_recrawl_not_modified_total", "counter", "Revisits answered 304 Not Modified.", (m) => m.notModified],
  ["shardcrawl_recrawl_bytes_total", "counter", "Body bytes received by recorded fetches.", (m) => m.bytes],
  ["shardcrawl_recrawl_fetches_per_change", "gauge", "Fetches per detected change (+Inf before the first change).", (m) => m.fetchesPerChange],
  ["shardcrawl_recrawl_bytes_per_change", "gauge", "Body bytes per detected change (+Inf before the first change).", (m) => m.bytesPerChange],
  ["shardcrawl_recrawl_no_change_ratio", "gauge", "Share of recorded fetches that found no change.", (m) => m.noChangeShare],
  ["shardcrawl_recrawl_not_modified_ratio", "gauge", "Share of recorded fetches answered 304.", (m) => m.notModifiedShare],
];

export function renderRecrawlMetrics(r: RecrawlSnapshot, label: string): string[] {
  const out: string[] = [];
  const family = (name: string, type: "counter" | "gauge", help: string) => out.push(`# HELP ${name} ${help}`, `# TYPE ${name} ${type}`);
  const g = (name: string, help: string, v: number, extra = "") => {
    family(name, "gauge", help);
    out.push(`${name}{${label}${extra}} ${num(v)}`);
  };
  g("shardcrawl_recrawl_budget", "Re-crawl budget, in the unit of the unit label.", r.budget, `,unit="${esc(r.unit)}"`);
  g("shardcrawl_recrawl_pages", "Pages in the re-crawl schedule.", r.pages);
  for (const [name, type, help, get] of PER_SCOPE) {
    family(name, type, help);
    out.push(`${name}{${label}} ${num(get(r.overall))}`);
    for (const h of r.hosts) out.push(`${name}{${label},host="${esc(h.host)}"} ${num(get(h))}`);
  }
  family("shardcrawl_recrawl_validator_evidence_total", "counter", "Conditional requests by what they said about the host's validators.");
  const v = r.overall.validators;
  for (const [k, n] of [["honoured", v.honoured], ["ignored", v.ignored], ["churning-etag", v.churningEtag]] as const) {
    out.push(`shardcrawl_recrawl_validator_evidence_total{${label},evidence="${k}"} ${n}`);
  }
  family("shardcrawl_recrawl_estimated_freshness_ratio", "gauge", "The model's mean P(fresh) of the pages in the schedule (weighting none or value).");
  out.push(`shardcrawl_recrawl_estimated_freshness_ratio{${label},weighting="none"} ${num(r.freshness)}`);
  out.push(`shardcrawl_recrawl_estimated_freshness_ratio{${label},weighting="value"} ${num(r.valueFreshness)}`);
  family("shardcrawl_recrawl_planned_visits_total", "counter", "Visits planned and queued, by reason (priority, discovery, reestimate, probe, validation).");
  for (const [reason, n] of Object.entries(r.planned)) out.push(`shardcrawl_recrawl_planned_visits_total{${label},reason="${esc(reason)}"} ${n}`);
  family("shardcrawl_recrawl_discovery_charged_total", "counter", "First visits made through the frontier and charged to the re-crawl budget.");
  out.push(`shardcrawl_recrawl_discovery_charged_total{${label}} ${r.discoveryCharged}`);
  family("shardcrawl_recrawl_dropped_pages_total", "counter", "Pages dropped from the schedule after repeated revisits without a 2xx or 304 answer.");
  out.push(`shardcrawl_recrawl_dropped_pages_total{${label}} ${r.dropped}`);
  family("shardcrawl_recrawl_hints_total", "counter", "Pages marked stale by a sitemap lastmod newer than our copy.");
  out.push(`shardcrawl_recrawl_hints_total{${label}} ${r.hintsApplied}`);
  const val = r.validation;
  g("shardcrawl_recrawl_validation_visits", "Visits of the random validation sample recorded so far.", val.visits);
  g("shardcrawl_recrawl_validation_predicted_changes", "Sum of the model's P(changed) over the validation sample.", val.predictedChanges);
  g("shardcrawl_recrawl_validation_observed_changes", "Changes observed in the validation sample.", val.observedChanges);
  g("shardcrawl_recrawl_validation_brier", "Mean squared error of the predicted P(changed) on the validation sample (lower is better).", val.brier);
  return out;
}
