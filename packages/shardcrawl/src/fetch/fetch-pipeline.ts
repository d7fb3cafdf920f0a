// The fetcher as a pipeline of small stages for one lease:
//   admit (opt-out list, again at lease time) > IP slot > robots gate > conditional request >
//   fetch > decide (retry-policy.ts, fetch-outcome.ts) > feedback (page log + frontier) > spool.
// Refusals before any request (opt-out list, robots.txt, Crawl-delay) use the admission verdict
// type (admit/). Every stage reaches Redis and disk only through the deps, so the pipeline runs in
// a test against a real frontier and a real server without forking a fetcher process.
import type { AdmissionChain } from "../admit/chain.js";
import { buildAdmissionChain } from "../admit/build-chain.js";
import { ExclusionFilter, type ExclusionMatcher } from "../admit/exclusion-filter.js";
import { robotsRefusal, type RobotsView } from "../admit/fetch-time.js";
import type { Refusal } from "../admit/verdict.js";
import type { RobotsEntry } from "./robots.js";
import type { RobotsMemo } from "./robots-memo.js";
import { DEFAULT_KEEP_ALIVE_MS, fetchedPageMeta, type FetchInit, type FetchOutcome, type FetchSuccess } from "./http-client.js";
import { decide, type RetrySettings } from "./retry-policy.js";
import { failureLine, planOutcome, refusalLine, type Feedback, type OutcomePlan } from "./fetch-outcome.js";
import type { FetchErrorClass, FetchedPage, Lease, PageLogLine } from "../shared/types.js";

/** A fetch must end this long before its lease expires (the completion call needs time too). */
const LEASE_MARGIN_MS = 2_000;
/** A host's delay must leave this much of the keep-alive time for a drained connection to be reused. */
const DRAIN_DELAY_MARGIN_MS = 1_000;

/** The frontier calls the fetcher makes (node/open-frontier.ts NodeFrontier). */
export interface FetcherFrontier {
  fail(lease: Lease, now: number, opts: { requested: boolean; errorClass: FetchErrorClass; feedback?: Feedback }): Promise<void>;
  requeue(lease: Lease, now: number): Promise<void>;
  retry(lease: Lease, now: number, opts: { notBefore: number; reason: string; feedback: Feedback }): Promise<void>;
  count(field: string, by: number): Promise<void>;
  /** null clears an override (the host goes back to the node's delay). */
  setHostDelay(host: string, delayMs: number | null): Promise<void>;
  setFlow(flow: { pauseUntil?: number; stop?: string }): Promise<void>;
  completeNotModified(lease: Lease, end: number, feedback: Feedback): Promise<unknown>;
}

export interface FetchPipelineDeps {
  frontier: FetcherFrontier;
  /** The opt-out list as last loaded (re-read when it changes: frontier/exclusions.ts). */
  exclusions(): Promise<ExclusionMatcher>;
  robots: RobotsMemo;
  /** Fetches robots.txt with this lease's request slot (node/robots-step.ts): rules, or the host deferred. */
  fetchRobots(lease: Lease, origin: string): Promise<{ kind: "entry"; entry: RobotsEntry } | { kind: "deferred" }>;
  /** A Retry-After above --max-retry-after: the host waits until `until`, the URL stays queued. */
  deferHost(lease: Lease, origin: string, ask: { until: number; retryAfterMs: number; reason: string; why?: string }): Promise<void>;
  http: { fetch(url: string, init?: FetchInit): Promise<FetchOutcome>; addressOf(url: string): Promise<string | undefined> };
  /** --ip-concurrency: a slot of the lease's address, "full", or null when not limited. */
  ipSlot(lease: Lease): Promise<{ release(): Promise<unknown> } | "full" | null>;
  /** Continuous mode: conditional request headers and 304s (schedule/recrawl/continuous-visits.ts). */
  revisits?: {
    headersFor(url: string, host: string): Promise<Record<string, string>>;
    recordNotModified(res: FetchSuccess): Promise<boolean>;
    chargeRobots(): Promise<unknown>;
    /** A first attempt of a URL whose other queued copy (feed and discovery) was already fetched. */
    duplicate?(url: string, depth: number): Promise<boolean>;
  } | undefined;
  spool: { complete(lease: Lease, end: number, page: Omit<FetchedPage, "body">, body: Buffer | readonly Buffer[], feedback: Feedback): Promise<void> };
  pageLog: { append(line: PageLogLine): Promise<void> };
  leaseTtl: { record(ms: number): void };
  retry: RetrySettings;
  settings: { delayMs: number; maxCrawlDelayMs: number; totalTimeoutMs: number; cutDrainBytes: number; politenessMarginMs: number };
  log(msg: string): void;
}

type Gate = { kind: "go"; robots: RobotsView } | { kind: "done" };

export class FetchPipeline {
  private excluded: ExclusionMatcher = { match: () => undefined };
  /** The fetcher's part of the admission chain: the opt-out list (a site may opt out while queued). */
  readonly admission: AdmissionChain = buildAdmissionChain([new ExclusionFilter(() => this.excluded, "lease")]);

  constructor(private readonly d: FetchPipelineDeps) {}

  /** The end of a response, as the host's politeness clock should see it (see politenessMarginMs). */
  private endNow(): number {
    return Date.now() + this.d.settings.politenessMarginMs;
  }

  async handle(lease: Lease): Promise<void> {
    // The site owners' opt-out list first: no request (not even robots.txt) to an excluded site.
    this.excluded = await this.d.exclusions();
    const refused = this.admission.check(lease.url, lease.host);
    if (refused) {
      await this.refuse(lease, { ...refused, reason: "excluded" });
      await this.d.frontier.count("excluded", 1);
      return;
    }
    // A feed entry is queued at once even while its discovery copy waits: whichever copy comes
    // second is dropped without a request (retries are the same copy, never dropped).
    if (lease.attempt === 0 && (await this.d.revisits?.duplicate?.(lease.url, lease.depth))) {
      await this.d.pageLog.append(failureLine(lease, "duplicate", "its other queued copy (from a feed or sitemap, or from discovery) was fetched", { total: 0 }));
      await this.d.frontier.fail(lease, Date.now(), { requested: false, errorClass: "duplicate" });
      await this.d.frontier.count("recrawlDuplicates", 1);
      return;
    }
    const slot = await this.d.ipSlot(lease);
    if (slot === "full") {
      await this.d.frontier.count("ipFull", 1);
      await this.d.frontier.requeue(lease, Date.now());
      return;
    }
    try {
      await this.handleAdmitted(lease);
    } finally {
      await slot?.release();
    }
  }

  private async handleAdmitted(lease: Lease): Promise<void> {
    const origin = new URL(lease.url).origin;
    const gate = await this.robotsGate(lease, origin);
    if (gate.kind === "done") return;
    const startedAt = Date.now();
    const res = await this.request(lease, gate.robots, startedAt);
    const end = this.endNow();
    this.d.leaseTtl.record(res.timings.total);
    const plan = planOutcome(lease, res, decide(res, lease.attempt, this.d.retry, Date.now()), startedAt, { maxAttempts: this.d.retry.maxAttempts, maxRetryAfterMs: this.d.retry.maxRetryAfterMs });
    await this.feedback(lease, origin, res, plan, end);
  }

  /**
   * Robots gate: robots.txt is fetched first when the node has none (this slot's request; the page
   * waits for the host's next turn), then the fetch-time refusals (admit/fetch-time.ts).
   */
  async robotsGate(lease: Lease, origin: string): Promise<Gate> {
    const robots = await this.d.robots.get(origin);
    if (!robots) {
      // An outage (5xx, 429, timeout, reset, transient DNS) holds the host instead: the URL is back
      // in its queue, unattempted, until the next robots.txt try (robots-step.ts).
      const step = await this.d.fetchRobots(lease, origin);
      await this.d.revisits?.chargeRobots(); // a robots.txt request spends re-crawl budget like any fetch
      if (step.kind === "deferred") return { kind: "done" };
      const { compiled } = this.d.robots.remember(origin, step.entry);
      // Crawl-delay as the file asks it; a new file without one clears the old override.
      if (compiled.crawlDelayMs !== undefined && !compiled.crawlDelayTooLong) await this.d.frontier.setHostDelay(lease.host, compiled.crawlDelayMs);
      else if (compiled.crawlDelayMs === undefined && step.entry.kind !== "disallow-all") await this.d.frontier.setHostDelay(lease.host, null);
      await this.d.frontier.requeue(lease, this.endNow());
      return { kind: "done" };
    }
    const refusal = robotsRefusal(robots, lease.url, this.d.settings.maxCrawlDelayMs);
    if (refusal) {
      await this.refuse(lease, refusal);
      return { kind: "done" };
    }
    return { kind: "go", robots };
  }

  /** Conditional request + fetch: never outlives the lease (the reaper would hand the URL out again). */
  private async request(lease: Lease, robots: RobotsView, startedAt: number): Promise<FetchOutcome> {
    const s = this.d.settings;
    const totalMs = Math.max(1000, Math.min(s.totalTimeoutMs, lease.expiresAt - startedAt - LEASE_MARGIN_MS));
    const conditional = this.d.revisits ? await this.d.revisits.headersFor(lease.url, lease.host) : undefined;
    // Drain a cut body's rest only when this host's next turn comes while the connection is
    // still open (its delay under the keep-alive time); at long delays it would be bytes for nothing.
    const hostDelayMs = Math.max(s.delayMs, robots.compiled.crawlDelayMs ?? 0);
    const drainBytes = hostDelayMs + DRAIN_DELAY_MARGIN_MS < DEFAULT_KEEP_ALIVE_MS ? s.cutDrainBytes : 0;
    return this.d.http.fetch(lease.url, { totalMs, drainBytes, ...(conditional ? { headers: conditional } : {}) });
  }

  /** Feedback + spool: the plan applied to the page log and the frontier. */
  private async feedback(lease: Lease, origin: string, res: FetchOutcome, plan: OutcomePlan, end: number): Promise<void> {
    const { frontier, pageLog } = this.d;
    switch (plan.action) {
      case "upstream-pause":
        await frontier.setFlow({ pauseUntil: plan.until });
        await frontier.count("upstream:paused", 1);
        await frontier.requeue(lease, end);
        return;
      case "quota-stop":
        await frontier.setFlow({ stop: plan.message });
        this.d.log(`stopping fetching: ${plan.message}`);
        await frontier.requeue(lease, end);
        return;
      case "defer-host":
        await pageLog.append(plan.line);
        await this.d.deferHost(lease, origin, plan);
        return;
      case "retry":
        await pageLog.append(plan.line);
        await frontier.retry(lease, end, { notBefore: plan.notBefore, reason: plan.reason, feedback: plan.feedback });
        return;
      case "fail":
        await pageLog.append(plan.line);
        await frontier.fail(lease, end, { requested: true, errorClass: plan.errorClass, feedback: plan.feedback });
        return;
      case "response":
        if (!res.ok) throw new Error("fetch pipeline: a response plan without a response");
        if (this.d.revisits && res.status === 304 && (await this.d.revisits.recordNotModified(res))) {
          await pageLog.append({ ...failureLine(lease, null, "not modified since our copy", res.timings), status: 304, fetched_at: res.fetchedAt });
          await frontier.completeNotModified(lease, end, plan.feedback);
          return;
        }
        await this.d.spool.complete(lease, end, fetchedPageMeta(res, { host: lease.host, depth: lease.depth, hops: lease.hops }), res.bodyPieces ?? res.body, plan.feedback);
    }
  }

  /** A refusal before any request: page-log line, and the URL fails without advancing the host's clock. */
  private async refuse(lease: Lease, refusal: Refusal & { reason: FetchErrorClass }): Promise<void> {
    await this.d.pageLog.append(refusalLine(lease, refusal));
    await this.d.frontier.fail(lease, Date.now(), { requested: false, errorClass: refusal.reason });
  }
}
