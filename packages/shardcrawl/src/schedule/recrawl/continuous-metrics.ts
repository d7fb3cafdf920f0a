// Prometheus families of continuous mode (--continuous), added to the node's scrape registry: the cost
// per detected change (fetches and bytes, overall and for the top hosts by fetches), the share of
// fetches that found no change, the 304 share, the model's estimated freshness, validator
// evidence, planned visits by reason, and the validation sample's report (predicted vs observed
// changes, Brier score). A ratio with no change yet is +Inf.
import { Counter, Gauge, type Registry } from "prom-client";
import type { RecrawlMetrics } from "./index.js";
import type { RecrawlSnapshot } from "./continuous-loop.js";

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

export function registerRecrawlMetrics(reg: Registry, node: string, r: RecrawlSnapshot): void {
  const counter = (name: string, help: string, labelNames: string[] = []) => new Counter({ name, help, labelNames: ["node", ...labelNames], registers: [reg] });
  const gauge = (name: string, help: string, labelNames: string[] = []) => new Gauge({ name, help, labelNames: ["node", ...labelNames], registers: [reg] });
  // Counters mirror absolute values kept in Redis; never negative.
  const inc = (m: Counter, v: number, labels: Record<string, string> = {}) => m.inc({ node, ...labels }, Number.isFinite(v) ? Math.max(0, v) : 0);

  gauge("shardcrawl_recrawl_budget", "Re-crawl budget, in the unit of the unit label.", ["unit"]).set({ node, unit: r.unit }, r.budget);
  gauge("shardcrawl_recrawl_pages", "Pages in the re-crawl schedule.").set({ node }, r.pages);
  for (const [name, type, help, get] of PER_SCOPE) {
    if (type === "counter") {
      const m = counter(name, help, ["host"]);
      inc(m, get(r.overall));
      for (const h of r.hosts) inc(m, get(h), { host: h.host });
    } else {
      const m = gauge(name, help, ["host"]);
      m.set({ node }, get(r.overall));
      for (const h of r.hosts) m.set({ node, host: h.host }, get(h));
    }
  }
  const ev = counter("shardcrawl_recrawl_validator_evidence_total", "Conditional requests by what they said about the host's validators.", ["evidence"]);
  const v = r.overall.validators;
  inc(ev, v.honoured, { evidence: "honoured" });
  inc(ev, v.ignored, { evidence: "ignored" });
  inc(ev, v.churningEtag, { evidence: "churning-etag" });
  const fresh = gauge("shardcrawl_recrawl_estimated_freshness_ratio", "The model's mean P(fresh) of the pages in the schedule (weighting none or value).", ["weighting"]);
  fresh.set({ node, weighting: "none" }, r.freshness);
  fresh.set({ node, weighting: "value" }, r.valueFreshness);
  const planned = counter("shardcrawl_recrawl_planned_visits_total", "Visits planned and queued, by reason (priority, discovery, reestimate, probe, validation).", ["reason"]);
  for (const [reason, n] of Object.entries(r.planned)) inc(planned, n, { reason });
  inc(counter("shardcrawl_recrawl_discovery_charged_total", "First visits made through the frontier and charged to the re-crawl budget."), r.discoveryCharged);
  inc(counter("shardcrawl_recrawl_hints_total", "Pages marked stale by a sitemap lastmod or feed date newer than our copy."), r.hintsApplied);
  inc(counter("shardcrawl_recrawl_feed_hints_total", "Pages marked stale by a feed entry dated after our copy."), r.feedHints);
  const queued = counter("shardcrawl_recrawl_detector_fetches_total", "Fetches queued for cheap change signals and charged to the budget, by kind (sitemap, index-sitemap, feed, listing, robots).", ["kind"]);
  inc(queued, r.sitemapsQueued, { kind: "sitemap" });
  inc(queued, r.indexSitemapsQueued, { kind: "index-sitemap" });
  inc(queued, r.feedsQueued, { kind: "feed" });
  inc(queued, r.listingsQueued, { kind: "listing" });
  inc(queued, r.robotsCharged, { kind: "robots" });
  inc(counter("shardcrawl_recrawl_new_entries_total", "URLs first seen in a feed or sitemap, queued at once."), r.newEntriesQueued);
  inc(counter("shardcrawl_recrawl_listing_reads_total", "Listing pages read (item summaries compared with the last read)."), r.listingReads);
  inc(counter("shardcrawl_recrawl_listing_changed_items_total", "Items whose summary changed on a listing read."), r.listingChangedItems);
  inc(counter("shardcrawl_recrawl_listing_hints_total", "Items in the schedule marked stale because their listing summary changed."), r.listingHints);
  inc(counter("shardcrawl_recrawl_dropped_pages_total", "Pages dropped from the schedule after repeated revisits without a 2xx or 304 answer."), r.dropped);
  const val = r.validation;
  gauge("shardcrawl_recrawl_validation_visits", "Visits of the random validation sample recorded so far.").set({ node }, val.visits);
  gauge("shardcrawl_recrawl_validation_predicted_changes", "Sum of the model's P(changed) over the validation sample.").set({ node }, val.predictedChanges);
  gauge("shardcrawl_recrawl_validation_observed_changes", "Changes observed in the validation sample.").set({ node }, val.observedChanges);
  gauge("shardcrawl_recrawl_validation_brier", "Mean squared error of the predicted P(changed) on the validation sample (lower is better).").set({ node }, val.brier);
}
